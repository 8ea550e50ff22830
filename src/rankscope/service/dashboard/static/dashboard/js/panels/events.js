// What users did with the results (GET /api/events/summary): click-through rate, the share of
// searches with a click, mean click position and the zero-result rate of search events, each
// rate with the 95% Wilson interval the API gives. Events carry no judgments: the dates, topic,
// search type and user apply, the judgment filter does not. Hidden for an account without
// events; an empty state when the filters leave none.
//
// data: EventsSummary (rankscope/service/schemas/events.py): {searches, impressions, clicks,
//   clickThroughRate, queryClickRate, zeroResultRate: {value, low, high, numerator,
//   denominator}, meanClickPosition, clicksWithPosition, thumbsUp, thumbsDown, cited,
//   meanDwellSeconds, otherActions, experiments, dateRange}

import { h } from "../dom.js";
import { fmt, fmtCount, fmtRate, fmtRateInterval } from "../format.js";
import { Panel, narrowed, pick } from "./panel.js";

export const SUMMARY = "/api/events/summary";
export const EVENT_FILTERS = ["startDate", "endDate", "topicId", "searchType"];

// an account (or selection) with no event at all
export function noEvents(data) {
  return data.searches === 0 && data.impressions === 0 && data.clicks === 0 && Object.keys(data.otherActions).length === 0;
}

function rateCard(metric, label, rate, what, empty) {
  return h(
    "div",
    {
      class: `kpi kpi-event kpi-${metric}`,
      "data-metric": metric,
      "data-value": rate.value ?? "",
      "data-low": rate.low ?? "",
      "data-high": rate.high ?? "",
      "data-numerator": rate.numerator,
      "data-denominator": rate.denominator,
    },
    h("div", { class: "kpi-label" }, label),
    h("div", { class: rate.value === null ? "kpi-value muted" : "kpi-value" }, fmtRate(rate.value)),
    h(
      "div",
      { class: "kpi-sub" },
      rate.denominator === 0 ? empty : `95% CI ${fmtRateInterval(rate.low, rate.high)} · ${fmtCount(rate.numerator)} of ${fmtCount(rate.denominator)} ${what}`,
    ),
  );
}

export class EventsPanel extends Panel {
  constructor() {
    super({ id: "events", title: "Clicks and searches", wide: true });
  }

  async update(ctx) {
    const data = await ctx.load(SUMMARY, pick(ctx, EVENT_FILTERS));
    if (noEvents(data)) {
      if (!narrowed(ctx, EVENT_FILTERS) || noEvents(await ctx.load(SUMMARY, ctx.scope))) {
        return this.unavailable("no events for this account");
      }
      this.setNote("from search events (POST /api/events)");
      return this.empty("No events match this selection.", "Events are narrowed by the dates, topic and search type.");
    }
    this.setNote("from search events (POST /api/events); rates with 95% Wilson intervals; the judgment filter does not apply");
    const position = data.meanClickPosition;
    const cards = [
      rateCard("clickThroughRate", "Click-through rate", data.clickThroughRate, "impressions clicked", "no impressions"),
      rateCard("queryClickRate", "Searches with a click", data.queryClickRate, "searches with impressions", "no impressions"),
      h(
        "div",
        { class: "kpi kpi-event kpi-meanClickPosition", "data-metric": "meanClickPosition", "data-value": position ?? "", "data-n": data.clicksWithPosition },
        h("div", { class: "kpi-label" }, "Mean click position"),
        h("div", { class: position === null ? "kpi-value muted" : "kpi-value" }, position === null ? "—" : fmt(position, 2)),
        h("div", { class: "kpi-sub" }, data.clicksWithPosition ? `1 = top result · n = ${fmtCount(data.clicksWithPosition)} clicks with a position` : "no click with a position"),
      ),
      rateCard("zeroResultRate", "Zero-result rate (searches)", data.zeroResultRate, "searches returned nothing", "no search event with a resultCount"),
    ];
    const extras = [
      `${fmtCount(data.searches)} searches`,
      `${fmtCount(data.impressions)} impressions`,
      `${fmtCount(data.clicks)} clicks`,
      `${fmtCount(data.thumbsUp)} thumbs up`,
      `${fmtCount(data.thumbsDown)} thumbs down`,
      `${fmtCount(data.cited)} cited`,
      data.meanDwellSeconds === null ? null : `mean dwell ${fmt(data.meanDwellSeconds, 1)} s`,
      ...Object.entries(data.otherActions).map(([action, n]) => `${fmtCount(n)} ${action}`),
    ].filter(Boolean);
    this.show(
      "ready",
      h("div", { class: "kpis" }, cards),
      h("p", { class: "counts", "data-searches": data.searches, "data-impressions": data.impressions, "data-clicks": data.clicks }, extras.join(" · ")),
    );
  }
}
