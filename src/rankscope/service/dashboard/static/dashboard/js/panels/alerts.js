// Regression alerts (GET /api/alerts, newest first): per alert the rule, where it looked (the
// user's queries, a topic or a search type), the baseline and current windows' means and n, the
// change with its 95% interval and how it was tested, and the webhook delivery. The dates filter
// on when the check fired and the user applies; topic, search type and judgment filters do not
// (each alert names its own scope and judgments). Hidden for an account without alerts.
//
// data: AlertsPage (rankscope/service/schemas/alerts.py): {limit, offset, alerts: [{id, userId,
//   rule, scope: "user" | "topic" | "searchType", scopeValue, measure (snake_case),
//   judgmentSource, method: "paired_t" | "welch" | "ewma", windowStart, windowEnd,
//   baselineStart, baselineEnd, currentMean, baselineMean, delta, ciLow, ciHigh, effectSize,
//   pValue, nCurrent, nBaseline, pairedQueries, message, deliveryStatus, deliveryAttempts,
//   deliveredAt, lastError, createdAt}]}

import { h } from "../dom.js";
import { fmt, fmtCount, fmtDate, fmtInterval, fmtSigned, fmtTime, measureLabel } from "../format.js";
import { Panel, narrowed, pick } from "./panel.js";

const ALERTS = "/api/alerts";
const ALERT_FILTERS = ["startDate", "endDate"];
const LIMIT = 100;

function scopeText(a) {
  if (a.scope === "topic") return `topic ${a.scopeValue ?? "(none)"}`;
  if (a.scope === "searchType") return `search type ${a.scopeValue ?? "(none)"}`;
  return "all queries";
}

function methodText(a) {
  if (a.method === "paired_t") return `paired t over ${fmtCount(a.pairedQueries)} queries`;
  if (a.method === "welch") return "Welch's t";
  if (a.method === "ewma") return "EWMA of daily means";
  return a.method;
}

// A window [start, end) as days: end is exclusive, so a one-day window shows one date.
function span(start, end) {
  const last = new Date(Date.parse(end) - 1).toISOString();
  const first = fmtDate(start);
  const to = fmtDate(last);
  return first === to ? first : `${first} → ${to}`;
}

export class AlertsPanel extends Panel {
  constructor() {
    super({ id: "alerts", title: "Regression alerts", wide: true });
  }

  async update(ctx) {
    const data = await ctx.load(ALERTS, { ...pick(ctx, ALERT_FILTERS), limit: LIMIT });
    const alerts = data.alerts;
    if (alerts.length === 0) {
      if (!narrowed(ctx, ALERT_FILTERS) || (await ctx.load(ALERTS, { ...ctx.scope, limit: 1 })).alerts.length === 0) {
        return this.unavailable("no alerts for this account");
      }
      this.setNote("alerts fired by the rules in the settings");
      return this.empty("No alert fired in these dates.", "The dates filter on when the check fired.");
    }
    const many = ctx.me.role === "service";
    this.setNote(
      `${alerts.length === LIMIT ? `the newest ${LIMIT}` : fmtCount(alerts.length)} alert${alerts.length === 1 ? "" : "s"}, newest first: current window against its baseline, change with its 95% interval and n`,
    );
    const rows = alerts.map((a) =>
      h(
        "tr",
        {
          "data-id": a.id,
          "data-value": a.delta ?? "",
          "data-low": a.ciLow ?? "",
          "data-high": a.ciHigh ?? "",
          "data-current": a.currentMean ?? "",
          "data-baseline": a.baselineMean ?? "",
          "data-status": a.deliveryStatus,
          title: a.message,
        },
        h("td", { class: "nowrap" }, fmtTime(a.createdAt)),
        many ? h("td", { "data-user": a.userId }, a.userId) : null,
        h("td", {}, h("span", { class: "strong" }, a.rule), h("div", { class: "sub" }, scopeText(a))),
        h("td", {}, measureLabel(a.measure), h("div", { class: "sub" }, a.judgmentSource)),
        h("td", { class: "num" }, fmt(a.baselineMean), h("div", { class: "sub" }, `n = ${fmtCount(a.nBaseline)} · ${span(a.baselineStart, a.baselineEnd)}`)),
        h("td", { class: "num" }, fmt(a.currentMean), h("div", { class: "sub" }, `n = ${fmtCount(a.nCurrent)} · ${span(a.windowStart, a.windowEnd)}`)),
        h("td", { class: "num nowrap" }, h("span", { class: "strong bad" }, fmtSigned(a.delta)), " ", a.ciLow === null ? "" : fmtInterval(a.ciLow, a.ciHigh), h("div", { class: "sub" }, methodText(a))),
        h(
          "td",
          {},
          h("span", { class: `badge delivery-${a.deliveryStatus}`, title: a.lastError || null }, a.deliveryStatus === "none" ? "no webhook" : a.deliveryStatus),
          a.deliveryAttempts ? h("div", { class: "sub" }, `${a.deliveryAttempts} attempt${a.deliveryAttempts === 1 ? "" : "s"}`) : null,
        ),
      ),
    );
    const head = ["fired", many ? "user" : null, "rule · scope", "measure · judgments", "baseline", "current", "change [95% CI] · test", "webhook"].filter(Boolean);
    this.show(
      "ready",
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "data alerts" },
          h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col", class: ["baseline", "current", "change [95% CI] · test"].includes(t) ? "num" : null }, t)))),
          h("tbody", {}, rows),
        ),
      ),
    );
  }
}
