// Regression alerts (GET /api/alerts, with the usual filters). Hidden while the server has no
// alerts endpoint (404) or there is no alert in the selection.
//
// Expected data: {"alerts": [{"id", "createdAt", "userId", "topicId" | null,
//   "searchType" | null, "measure", "baseline": {"mean", "count"},
//   "current": {"mean", "count"}, "difference": {"mean", "low", "high"},
//   "status": "open" | "resolved", "message"}]}

import { h } from "../dom.js";
import { MEASURES, fmt, fmtCount, fmtInterval, fmtTime } from "../format.js";
import { Panel } from "./panel.js";

export class AlertsPanel extends Panel {
  constructor() {
    super({ id: "alerts", title: "Regression alerts", optional: true, wide: true });
  }

  async update(ctx) {
    if (!ctx.has("/api/alerts")) return this.unavailable("no /api/alerts on this server");
    const data = await ctx.load("/api/alerts", ctx.params, { optional: true });
    if (data === null) return this.unavailable("no /api/alerts on this server");
    const alerts = data.alerts || [];
    if (alerts.length === 0) return this.unavailable("no alerts in this selection");
    this.setNote("current window against its baseline: difference with its 95% interval and n");
    const rows = alerts.map((a) =>
      h(
        "tr",
        { "data-id": a.id, class: a.status === "open" ? "open" : "" },
        h("td", { class: "nowrap" }, fmtTime(a.createdAt)),
        h("td", {}, [a.topicId, a.searchType].filter(Boolean).join(" · ") || "all"),
        h("td", {}, MEASURES[a.measure]?.label ?? a.measure),
        h("td", { class: "num" }, `${fmt(a.baseline.mean)} (n = ${fmtCount(a.baseline.count)})`),
        h("td", { class: "num" }, `${fmt(a.current.mean)} (n = ${fmtCount(a.current.count)})`),
        h("td", { class: "num strong" }, `${fmt(a.difference.mean)} ${fmtInterval(a.difference.low, a.difference.high)}`),
        h("td", {}, h("span", { class: `badge ${a.status}` }, a.status)),
        h("td", {}, a.message || ""),
      ),
    );
    this.show(
      "ready",
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "data" },
          h("thead", {}, h("tr", {}, ["when", "where", "measure", "baseline", "current", "change [95% CI]", "status", ""].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, rows),
        ),
      ),
    );
  }
}
