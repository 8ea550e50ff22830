// Click-through rate and mean click position from search events (GET /api/events/summary,
// with the usual filters). Hidden while the server has no events endpoint (404) or no
// impressions in the selection.
//
// Expected data: {"impressions": int, "clicks": int, "ctr": number | null,
//                 "meanClickPosition": number | null}
// ctr = clicks / impressions; meanClickPosition over clicks (1 = the first result).

import { h } from "../dom.js";
import { fmt, fmtCount } from "../format.js";
import { Panel } from "./panel.js";

export class EventsPanel extends Panel {
  constructor() {
    super({ id: "events", title: "Clicks", optional: true, wide: true });
  }

  async update(ctx) {
    if (!ctx.has("/api/events/summary")) return this.unavailable("no /api/events/summary on this server");
    const data = await ctx.load("/api/events/summary", ctx.params, { optional: true });
    if (data === null) return this.unavailable("no /api/events/summary on this server");
    if (!data.impressions) return this.unavailable("no impressions in this selection");
    this.setNote("from search events: impressions and clicks sent to POST /api/events");
    this.show(
      "ready",
      h(
        "div",
        { class: "kpis" },
        h(
          "div",
          { class: "kpi", "data-metric": "ctr", "data-value": data.ctr ?? "", "data-n": data.impressions },
          h("div", { class: "kpi-label" }, "Click-through rate"),
          h("div", { class: "kpi-value" }, fmt(data.ctr)),
          h("div", { class: "kpi-sub" }, `${fmtCount(data.clicks)} clicks · n = ${fmtCount(data.impressions)} impressions`),
        ),
        h(
          "div",
          { class: "kpi", "data-metric": "meanClickPosition", "data-value": data.meanClickPosition ?? "", "data-n": data.clicks },
          h("div", { class: "kpi-label" }, "Mean click position"),
          h("div", { class: "kpi-value" }, data.meanClickPosition === null ? "—" : fmt(data.meanClickPosition, 2)),
          h("div", { class: "kpi-sub" }, `1 = first result · n = ${fmtCount(data.clicks)} clicks`),
        ),
      ),
    );
  }
}
