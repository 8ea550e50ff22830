// The records with the lowest value of the chosen measure (GET /api/metrics/retrieval with
// sort=<measure>), judged and heuristic rows in separate tabs; a click opens the record.

import { h } from "../dom.js";
import { KINDS, MEASURES, fmt, fmtCount, fmtTime } from "../format.js";
import { Panel } from "./panel.js";

const PAGE = 25;

export class WorstQueriesPanel extends Panel {
  constructor() {
    super({ id: "worst", title: "Worst queries", wide: true });
    this.tab = "judged";
  }

  tabs(filters) {
    const source = filters.judgmentSource;
    if (!source) return [["judged", "judged"], ["heuristic", "heuristic"]];
    return [[source === "heuristic" ? "heuristic" : "judged", source]];
  }

  async update(ctx) {
    const measure = ctx.filters.measure;
    const tabs = this.tabs(ctx.filters);
    this.setNote(`lowest ${MEASURES[measure].long} first (ties: newest first); open a query for its ranked list`);
    const pages = await Promise.all(
      tabs.map(([kind, source]) =>
        ctx.load("/api/metrics/retrieval", {
          ...ctx.params,
          judgmentSource: source,
          judgments: kind,
          sort: measure,
          limit: PAGE,
        }),
      ),
    );
    const found = tabs.map(([kind], i) => ({ kind, page: pages[i] }));
    if (found.every((f) => f.page.totalQueries === 0)) {
      this.empty("No records match this selection.");
      return;
    }
    if (!found.some((f) => f.kind === this.tab && f.page.totalQueries > 0)) {
      this.tab = found.find((f) => f.page.totalQueries > 0).kind;
    }
    const bar = h("div", { class: "tabs", role: "tablist", "aria-label": "kind of judgment" });
    const views = [];
    for (const f of found) {
      const selected = f.kind === this.tab;
      const id = `worst-${f.kind}`;
      bar.append(
        h(
          "button",
          {
            type: "button",
            role: "tab",
            id: `${id}-tab`,
            "aria-controls": id,
            "aria-selected": selected ? "true" : "false",
            "data-kind": f.kind,
            onclick: () => {
              this.tab = f.kind;
              for (const b of bar.children) b.setAttribute("aria-selected", String(b.dataset.kind === f.kind));
              for (const v of views) v.hidden = v.dataset.kind !== f.kind;
            },
          },
          `${KINDS[f.kind].label} (${fmtCount(f.page.totalQueries)})`,
        ),
      );
      const view = h("div", { role: "tabpanel", id, "aria-labelledby": `${id}-tab`, "data-kind": f.kind }, this.table(f, ctx));
      view.hidden = !selected;
      views.push(view);
    }
    this.show("ready", bar, views);
  }

  table(f, ctx) {
    const measure = ctx.filters.measure;
    const rows = f.page.queries;
    if (rows.length === 0) {
      return h("p", { class: "empty" }, f.kind === "judged" ? "No judged rows in this selection." : "No heuristic rows in this selection.");
    }
    const service = ctx.me.role === "service";
    const head = h(
      "tr",
      {},
      h("th", { scope: "col", class: "num" }, "#"),
      h("th", { scope: "col" }, "query"),
      h("th", { scope: "col", class: "num" }, MEASURES[measure].label),
      h("th", { scope: "col", class: "num", title: "relevant retrieved / retrieved documents" }, "rel. / ret."),
      h("th", { scope: "col" }, "topic"),
      h("th", { scope: "col" }, "search type"),
      h("th", { scope: "col" }, "source"),
      service ? h("th", { scope: "col" }, "user") : null,
      h("th", { scope: "col" }, "time"),
    );
    const body = rows.map((r, i) =>
      h(
        "tr",
        { "data-id": r.id, "data-value": r[measure], "data-user": r.userId },
        h("td", { class: "num muted" }, f.page.offset + i + 1),
        h("td", { class: "query" }, h("button", { type: "button", class: "link", "data-open": r.id, onclick: () => ctx.openRecord(r.id) }, r.query)),
        h("td", { class: "num strong" }, fmt(r[measure])),
        h("td", { class: "num" }, `${fmtCount(r.relevantRetrieved)} / ${fmtCount(r.totalRetrieved)}`),
        h("td", {}, r.topicId ?? h("span", { class: "muted" }, "—")),
        h("td", {}, r.searchType),
        h("td", {}, h("span", { class: `badge ${r.judgmentSource}` }, r.judgmentSource)),
        service ? h("td", {}, r.userId) : null,
        h("td", { class: "nowrap" }, fmtTime(r.timestampIso)),
      ),
    );
    const more = f.page.totalQueries > rows.length ? h("p", { class: "hint" }, `The ${rows.length} lowest of ${fmtCount(f.page.totalQueries)} ${f.kind} rows.`) : null;
    return [h("div", { class: "scroll" }, h("table", { class: "data worst" }, h("thead", {}, head), h("tbody", {}, body))), more];
  }
}
