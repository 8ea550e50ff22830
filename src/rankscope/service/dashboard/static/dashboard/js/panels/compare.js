// Online A/B comparison of two arms (GET /api/metrics/retrieval/compare?arms=a,b, with the usual
// filters). The arms come from GET .../breakdown?by=arm (the two with most rows unless picked).
// Hidden while the server has no compare endpoint (404) or the selection has fewer than two
// arms.
//
// Expected data: {"arms": ["a", "b"], "judgmentSource": "judged" | "heuristic",
//   "measures": [{"measure": "ndcg", "n": int,
//                 "a": {"mean", "low", "high", "count"}, "b": {...},
//                 "difference": {"mean", "low", "high"},     // b - a, 95% interval
//                 "test": "...", "pValue": number | null,
//                 "winner": "a" | "b" | null, "reason": "..." }]}  // reason: why no winner

import { h } from "../dom.js";
import { MEASURES, fmt, fmtCount, fmtInterval } from "../format.js";
import { Panel } from "./panel.js";

export class ComparePanel extends Panel {
  constructor() {
    super({ id: "compare", title: "A/B comparison", optional: true, wide: true });
    this.picked = null;
  }

  async update(ctx) {
    if (!ctx.has("/api/metrics/retrieval/compare")) return this.unavailable("no /api/metrics/retrieval/compare on this server");
    const arms = await ctx.load("/api/metrics/retrieval/breakdown", { ...ctx.params, by: "arm" });
    const counts = new Map();
    for (const g of arms.groups) if (g.key !== null) counts.set(g.key, (counts.get(g.key) || 0) + g.stats.count);
    const names = [...counts.keys()].sort((x, y) => counts.get(y) - counts.get(x) || x.localeCompare(y));
    if (names.length < 2) return this.unavailable("fewer than two arms in this selection");
    const [a, b] = this.picked && this.picked.every((x) => counts.has(x)) ? this.picked : names.slice(0, 2);
    // without a compare route, GET .../compare reaches GET .../{id} and answers 422 (not an id)
    const data = await ctx.load("/api/metrics/retrieval/compare", { ...ctx.params, arms: `${a},${b}` }, { optional: true, missing: [404, 422] });
    if (data === null) return this.unavailable("no /api/metrics/retrieval/compare on this server");
    if (!data.measures || data.measures.length === 0) return this.unavailable("nothing to compare");
    const choose = (which) =>
      h(
        "select",
        {
          "aria-label": `arm ${which}`,
          onchange: (event) => {
            this.picked = which === "A" ? [event.target.value, b] : [a, event.target.value];
            this.refresh(ctx);
          },
        },
        names.map((n) => h("option", { value: n, selected: n === (which === "A" ? a : b) }, `${n} (n = ${fmtCount(counts.get(n))})`)),
      );
    const rows = data.measures.map((m) =>
      h(
        "tr",
        { "data-measure": m.measure, "data-value": m.difference.mean },
        h("th", { scope: "row" }, MEASURES[m.measure]?.label ?? m.measure),
        h("td", { class: "num" }, fmtCount(m.n)),
        h("td", { class: "num" }, `${fmt(m.a.mean)} ${fmtInterval(m.a.low, m.a.high)}`),
        h("td", { class: "num" }, `${fmt(m.b.mean)} ${fmtInterval(m.b.low, m.b.high)}`),
        h("td", { class: "num strong" }, `${m.difference.mean >= 0 ? "+" : ""}${fmt(m.difference.mean)} ${fmtInterval(m.difference.low, m.difference.high)}`),
        h("td", { class: "num" }, m.pValue === null || m.pValue === undefined ? "—" : fmt(m.pValue)),
        h("td", {}, m.winner ? `${m.winner === "a" ? a : b}` : h("span", { class: "muted" }, m.reason || "no winner")),
      ),
    );
    this.setNote(`${data.judgmentSource} rows; difference = B − A with its 95% interval`);
    this.show(
      "ready",
      h("div", { class: "arm-pick" }, h("label", {}, "A ", choose("A")), h("label", {}, "B ", choose("B"))),
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "data" },
          h("thead", {}, h("tr", {}, ["measure", "n", "A mean [95% CI]", "B mean [95% CI]", "B − A [95% CI]", "p", "winner"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, rows),
        ),
      ),
    );
  }
}
