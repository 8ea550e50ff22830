// The chosen measure per topic or per search type (GET /api/metrics/retrieval/breakdown):
// judged and heuristic rows in their own columns, each mean with its interval and n.

import { intervalGlyph } from "../chart.js";
import { h } from "../dom.js";
import { KINDS, MEASURES, fmt, fmtCount, fmtInterval } from "../format.js";
import { Panel } from "./panel.js";
import { kindsShown } from "./timeseries.js";

const COLORS = { judged: "#2563eb", heuristic: "#b45309" };

export class BreakdownPanel extends Panel {
  constructor(by, title, keyLabel, none) {
    super({ id: `breakdown-${by}`, title, wide: true });
    this.by = by;
    this.keyLabel = keyLabel;
    this.none = none;
  }

  async update(ctx) {
    const measure = ctx.filters.measure;
    const data = await ctx.load("/api/metrics/retrieval/breakdown", { ...ctx.params, by: this.by });
    this.setNote(`${MEASURES[measure].label}: mean, 95% interval and n per ${this.keyLabel}`);
    if (data.groups.length === 0) {
      this.empty("No records match this selection.");
      return;
    }
    const kinds = kindsShown(ctx.filters);
    const byKey = new Map();
    for (const g of data.groups) {
      const key = g.key ?? "";
      if (!byKey.has(key)) byKey.set(key, { key: g.key, total: 0 });
      const row = byKey.get(key);
      row[g.judgmentSource] = g.stats;
      row.total += g.stats.count;
    }
    const rows = [...byKey.values()].sort((a, b) => b.total - a.total || String(a.key).localeCompare(String(b.key)));
    const head = h(
      "thead",
      {},
      h("tr", {}, h("th", { scope: "col", rowspan: 2 }, this.keyLabel), kinds.map((k) => h("th", { scope: "colgroup", colspan: 3, class: `group ${k}` }, KINDS[k].label))),
      h("tr", {}, kinds.map(() => [h("th", { scope: "col", class: "num" }, "n"), h("th", { scope: "col", class: "num" }, MEASURES[measure].label), h("th", { scope: "col" }, "95% CI (0–1)")])),
    );
    const body = h(
      "tbody",
      {},
      rows.map((row) =>
        h(
          "tr",
          { "data-key": row.key ?? "" },
          h("th", { scope: "row" }, row.key ?? h("span", { class: "muted" }, this.none)),
          kinds.map((kind) => {
            const s = row[kind];
            if (!s || s.count === 0) {
              return [h("td", { class: "num muted", "data-kind": kind, "data-n": 0 }, "0"), h("td", { class: "num muted" }, "—"), h("td", {})];
            }
            const m = s[measure];
            return [
              h("td", { class: "num", "data-kind": kind, "data-n": s.count }, fmtCount(s.count)),
              h("td", { class: "num", "data-kind": kind, "data-value": m.mean }, fmt(m.mean)),
              h("td", { class: "ci", title: fmtInterval(m.low, m.high) }, intervalGlyph(m.mean, m.low, m.high, COLORS[kind]), h("span", { class: "ci-text" }, fmtInterval(m.low, m.high))),
            ];
          }),
        ),
      ),
    );
    this.show("ready", h("div", { class: "scroll" }, h("table", { class: "data breakdown" }, head, body)));
  }
}
