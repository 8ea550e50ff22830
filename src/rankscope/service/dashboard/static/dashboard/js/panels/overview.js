// Headline numbers of the selection: the chosen measure for judged and heuristic rows apart,
// the zero-result rate and the dates covered (GET /api/metrics/retrieval/summary).

import { h } from "../dom.js";
import { KINDS, MEASURES, fmt, fmtCount, fmtDate, fmtInterval, fmtPercent } from "../format.js";
import { Panel, filterHint } from "./panel.js";

export class OverviewPanel extends Panel {
  constructor() {
    super({ id: "overview", title: "Overview", wide: true });
  }

  async update(ctx) {
    const data = await ctx.load("/api/metrics/retrieval/summary", ctx.params);
    const measure = ctx.filters.measure;
    const label = MEASURES[measure].label;
    const groups = data.byJudgmentSource;
    const total = groups.judged.count + groups.heuristic.count;
    this.setNote(`${MEASURES[measure].long}; mean with 95% interval and n, per kind of judgment`);
    if (total === 0) {
      this.empty("No records match this selection.", filterHint(ctx));
      return;
    }
    const zero = groups.judged.zeroResults + groups.heuristic.zeroResults;
    const cards = ["judged", "heuristic"].map((kind) => {
      const g = groups[kind];
      const m = g[measure];
      if (g.count === 0) {
        return h(
          "div",
          { class: `kpi kpi-${kind}`, "data-kind": kind, "data-n": "0" },
          h("div", { class: "kpi-label" }, `${label} · ${KINDS[kind].label}`),
          h("div", { class: "kpi-value muted" }, "—"),
          h("div", { class: "kpi-sub" }, kind === "judged" ? "no judged rows" : "no heuristic rows"),
        );
      }
      return h(
        "div",
        { class: `kpi kpi-${kind}`, "data-kind": kind, "data-n": g.count, "data-value": m.mean },
        h("div", { class: "kpi-label" }, `${label} · ${KINDS[kind].label}`),
        h("div", { class: "kpi-value" }, fmt(m.mean)),
        h("div", { class: "kpi-sub" }, `95% CI ${fmtInterval(m.low, m.high)} · n = ${fmtCount(g.count)}`),
        h("div", { class: "kpi-note" }, KINDS[kind].note),
      );
    });
    const range = data.dateRange;
    cards.push(
      h(
        "div",
        { class: "kpi kpi-zero", "data-zero": zero, "data-n": total },
        h("div", { class: "kpi-label" }, "Zero-result rate"),
        h("div", { class: "kpi-value" }, fmtPercent(zero, total)),
        h("div", { class: "kpi-sub" }, `${fmtCount(zero)} of ${fmtCount(total)} queries retrieved nothing`),
      ),
      h(
        "div",
        { class: "kpi kpi-range" },
        h("div", { class: "kpi-label" }, "Queries"),
        h("div", { class: "kpi-value" }, fmtCount(total)),
        h(
          "div",
          { class: "kpi-sub" },
          range.start ? `${fmtDate(range.start)} → ${fmtDate(range.end)} (UTC)` : "",
        ),
      ),
    );
    this.show("ready", h("div", { class: "kpis" }, cards));
  }
}
