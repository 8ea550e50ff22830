// Share of queries that retrieved nothing, per bucket: zeroResults over count of the timeseries
// (a property of the retrieval, not of judgments, so judged and heuristic rows are counted
// together here).

import { barChart, bucketGrid } from "../chart.js";
import { h } from "../dom.js";
import { fmtCount, fmtDate, fmtPercent } from "../format.js";
import { Panel } from "./panel.js";

export class ZeroResultsPanel extends Panel {
  constructor() {
    super({ id: "zero-results", title: "Zero-result rate", wide: true });
    this.plot = null;
  }

  async update(ctx) {
    const { bucket } = ctx.filters;
    const data = await ctx.load("/api/metrics/retrieval/timeseries", { ...ctx.params, bucket });
    if (this.plot) this.plot.destroy();
    this.plot = null;
    this.setNote(`queries with an empty result list, per ${bucket} (UTC)`);
    if (data.points.length === 0) {
      this.empty("No records match this selection.");
      return;
    }
    const per = new Map();
    for (const p of data.points) {
      const key = Date.parse(p.start) / 1000;
      const cur = per.get(key) || { start: p.start, zero: 0, n: 0 };
      cur.zero += p.stats.zeroResults;
      cur.n += p.stats.count;
      per.set(key, cur);
    }
    const buckets = [...per.values()];
    const zero = buckets.reduce((s, b) => s + b.zero, 0);
    const n = buckets.reduce((s, b) => s + b.n, 0);
    if (zero === 0) {
      this.show(
        "ready",
        h("p", { class: "empty ok", "data-zero": 0, "data-n": n }, `Every query retrieved something: 0 of ${fmtCount(n)} came back empty.`),
      );
      return;
    }
    const xs = bucketGrid(buckets.map((b) => b.start), bucket);
    const values = xs.map((x) => (per.has(x) ? (100 * per.get(x).zero) / per.get(x).n : null));
    const readout = h("p", { class: "readout", "aria-hidden": "true" }, `${fmtCount(zero)} of ${fmtCount(n)} queries (${fmtPercent(zero, n)}) retrieved nothing.`);
    const canvas = h("div", { class: "plot" });
    const rows = buckets.map((b) =>
      h(
        "tr",
        { "data-start": b.start, "data-zero": b.zero, "data-n": b.n },
        h("td", {}, fmtDate(b.start, bucket)),
        h("td", { class: "num" }, fmtCount(b.zero)),
        h("td", { class: "num" }, fmtCount(b.n)),
        h("td", { class: "num" }, fmtPercent(b.zero, b.n)),
      ),
    );
    const figure = h(
      "figure",
      { class: "chart", "aria-label": `zero-result rate per ${bucket}; values in the table below` },
      readout,
      canvas,
      h(
        "details",
        { class: "values" },
        h("summary", {}, `Values (${buckets.length} ${bucket}${buckets.length === 1 ? "" : "s"})`),
        h(
          "table",
          { class: "data" },
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, `${bucket} (UTC)`), h("th", { scope: "col", class: "num" }, "empty"), h("th", { scope: "col", class: "num" }, "n"), h("th", { scope: "col", class: "num" }, "rate"))),
          h("tbody", {}, rows),
        ),
      ),
    );
    this.show("ready", figure);
    this.plot = barChart(canvas, {
      xs,
      values,
      bucket,
      xLabel: `${bucket} (UTC)`,
      yLabel: "% with no result",
      color: "#7c3aed",
      onHover: (i) => {
        const b = i === null ? null : per.get(xs[i]);
        readout.textContent = b
          ? `${fmtDate(b.start, bucket)}: ${fmtCount(b.zero)} of ${fmtCount(b.n)} queries (${fmtPercent(b.zero, b.n)}) retrieved nothing`
          : `${fmtCount(zero)} of ${fmtCount(n)} queries (${fmtPercent(zero, n)}) retrieved nothing.`;
      },
    });
  }
}
