// The chosen measure over time, with its 95% band: one chart for judged rows and one for
// heuristic rows, never one line mixing both (GET /api/metrics/retrieval/timeseries).

import { bandChart, bucketGrid } from "../chart.js";
import { h } from "../dom.js";
import { KINDS, MEASURES, fmt, fmtCount, fmtDate, fmtInterval } from "../format.js";
import { Panel } from "./panel.js";

const COLORS = { judged: "#2563eb", heuristic: "#b45309" };

export function kindsShown(filters) {
  const source = filters.judgmentSource;
  if (!source) return ["judged", "heuristic"];
  return source === "heuristic" ? ["heuristic"] : ["judged"];
}

export class TimeseriesPanel extends Panel {
  constructor() {
    super({ id: "timeseries", title: "Over time", wide: true });
    this.plots = [];
  }

  async update(ctx) {
    const { bucket, measure } = ctx.filters;
    const data = await ctx.load("/api/metrics/retrieval/timeseries", { ...ctx.params, bucket });
    for (const plot of this.plots) plot.destroy();
    this.plots = [];
    const label = MEASURES[measure].label;
    this.setTitle(`${label} over time`);
    this.setNote(`mean per ${bucket} (UTC) with its 95% interval; judged and heuristic rows apart`);
    if (data.points.length === 0) {
      this.empty("No records match this selection.");
      return;
    }
    const xs = bucketGrid(data.points.map((p) => p.start), bucket);
    const charts = kindsShown(ctx.filters).map((kind) => this.kindChart(kind, data.points, xs, ctx));
    this.show("ready", h("div", { class: "pair" }, charts));
    for (const draw of charts.map((c) => c.draw).filter(Boolean)) draw();
  }

  kindChart(kind, points, xs, ctx) {
    const { bucket, measure } = ctx.filters;
    const mine = points.filter((p) => p.judgmentSource === kind);
    const title = h("h3", {}, `${KINDS[kind].label} `, h("span", { class: "muted" }, `(${KINDS[kind].note})`));
    const box = h("figure", { class: `chart chart-${kind}`, "data-kind": kind }, title);
    if (mine.length === 0) {
      const why =
        kind === "judged"
          ? "No judged rows here: send relevantDocumentIds or judgments with each record, or POST feedback later."
          : "No heuristic rows here: every record in this selection has judgments.";
      box.append(h("p", { class: "empty" }, why));
      return box;
    }
    const at = new Map(mine.map((p) => [Date.parse(p.start) / 1000, p]));
    const col = (f) => xs.map((x) => (at.has(x) ? f(at.get(x)) : null));
    const mean = col((p) => p.stats[measure].mean);
    const low = col((p) => p.stats[measure].low);
    const high = col((p) => p.stats[measure].high);
    const readout = h("p", { class: "readout", "aria-hidden": "true" }, "Point at the chart for a bucket's values.");
    const canvas = h("div", { class: "plot" });
    const rows = mine.map((p) => {
      const s = p.stats[measure];
      return h(
        "tr",
        { "data-start": p.start, "data-kind": kind, "data-n": p.stats.count, "data-value": s.mean, "data-low": s.low ?? "", "data-high": s.high ?? "" },
        h("td", {}, fmtDate(p.start, bucket)),
        h("td", { class: "num" }, fmtCount(p.stats.count)),
        h("td", { class: "num" }, fmt(s.mean)),
        h("td", { class: "num" }, fmtInterval(s.low, s.high)),
      );
    });
    const table = h(
      "details",
      { class: "values" },
      h("summary", {}, `Values (${mine.length} ${bucket}${mine.length === 1 ? "" : "s"})`),
      h(
        "table",
        { class: "data" },
        h("caption", { class: "sr-only" }, `${MEASURES[measure].label}, ${KINDS[kind].label} rows, per ${bucket}`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, `${bucket} (UTC)`), h("th", { scope: "col", class: "num" }, "n"), h("th", { scope: "col", class: "num" }, "mean"), h("th", { scope: "col", class: "num" }, "95% CI"))),
        h("tbody", {}, rows),
      ),
    );
    box.append(readout, canvas, table);
    const n = mine.reduce((sum, p) => sum + p.stats.count, 0);
    box.setAttribute("aria-label", `${MEASURES[measure].label} of ${KINDS[kind].label.toLowerCase()} rows per ${bucket}, ${fmtCount(n)} queries; values in the table below`);
    box.draw = () => {
      const plot = bandChart(canvas, {
        xs,
        mean,
        low,
        high,
        bucket,
        xLabel: `${bucket} (UTC)`,
        yLabel: `${MEASURES[measure].label} (0–1)`,
        color: COLORS[kind],
        onHover: (i) => {
          const p = i === null ? null : at.get(xs[i]);
          if (!p) {
            readout.textContent = i === null ? "Point at the chart for a bucket's values." : `${fmtDate(new Date(xs[i] * 1000).toISOString(), bucket)}: no ${kind} rows`;
            return;
          }
          const s = p.stats[measure];
          readout.textContent = `${fmtDate(p.start, bucket)}: ${MEASURES[measure].label} ${fmt(s.mean)}, 95% CI ${fmtInterval(s.low, s.high)}, n = ${fmtCount(p.stats.count)}`;
        },
      });
      this.plots.push(plot);
    };
    return box;
  }
}
