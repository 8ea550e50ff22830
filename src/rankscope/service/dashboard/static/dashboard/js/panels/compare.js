// Online A/B comparison of two arms (GET /api/metrics/retrieval/compare?arms=a,b with the record
// filters): per measure the arms' means and n, the difference A − B with its 95% interval, the
// effect size, the test's p and the Holm-adjusted p, and the API's verdict, which names no winner
// below the minimum sample ("insufficient data"). The arms come from GET .../breakdown?by=arm
// (the two with most records unless picked). Hidden for an account with fewer than two arms.
//
// data: ArmsComparison (rankscope/service/schemas/experiments.py): {arms, paired, judgmentSource,
//   alpha, minSample, correction, records: {arm: n}, measures: [{measure, test, nA, nB, meanA,
//   meanB, delta (= meanA − meanB), ci: {low, high, level, method} | null, bootstrapCi,
//   effectSize, pValue, pAdjusted, verdict: "a" | "b" | "no_difference" | "insufficient_data",
//   winner}]}

import { h } from "../dom.js";
import { MEASURES, fmt, fmtCount, fmtInterval, fmtP, fmtSigned } from "../format.js";
import { Panel, narrowed } from "./panel.js";

const BREAKDOWN = "/api/metrics/retrieval/breakdown";
const COMPARE = "/api/metrics/retrieval/compare";
const RECORD_FILTERS = ["startDate", "endDate", "topicId", "searchType", "judgmentSource"];
const TESTS = { welch: "Welch's t test", paired_t: "paired t test over the queries both arms saw" };
const JUDGMENTS = {
  auto: "judged rows, else heuristic",
  judged: "judged rows",
  heuristic: "heuristic rows",
  clicks: "click judgments",
};

function armCounts(groups) {
  const counts = new Map();
  for (const g of groups) if (g.key !== null) counts.set(g.key, (counts.get(g.key) || 0) + g.stats.count);
  return counts;
}

function verdictCell(m, data) {
  const [a, b] = data.arms;
  if (m.verdict === "a" || m.verdict === "b") {
    return h("td", { class: "verdict win" }, `${m.winner ?? (m.verdict === "a" ? a : b)} better`);
  }
  if (m.verdict === "no_difference") {
    return h("td", { class: "verdict" }, h("span", { class: "muted" }, `no difference (p adj. > ${data.alpha})`));
  }
  return h(
    "td",
    { class: "verdict" },
    h("span", { class: "badge insufficient", title: `no winner is named while an arm has fewer than ${data.minSample} values` }, "insufficient data"),
  );
}

export class ComparePanel extends Panel {
  constructor() {
    super({ id: "compare", title: "A/B comparison", wide: true });
    this.picked = null;
    this.judgments = "auto";
    this.paired = false;
  }

  async update(ctx) {
    const arms = await ctx.load(BREAKDOWN, { ...ctx.params, by: "arm" });
    const counts = armCounts(arms.groups);
    const names = [...counts.keys()].sort((x, y) => counts.get(y) - counts.get(x) || x.localeCompare(y));
    if (names.length < 2) {
      if (!narrowed(ctx, RECORD_FILTERS) || armCounts((await ctx.load(BREAKDOWN, { ...ctx.scope, by: "arm" })).groups).size < 2) {
        return this.unavailable("fewer than two arms for this account");
      }
      this.setNote("records with options.arm, two arms compared");
      return this.empty("Fewer than two arms in this selection.", "Widen the dates or reset the filters.");
    }
    const [a, b] = this.picked && this.picked.every((x) => counts.has(x)) ? this.picked : names.slice(0, 2);
    const params = { ...ctx.params, arms: `${a},${b}`, judgments: this.judgments };
    if (this.paired) params.paired = "true";
    const data = await ctx.load(COMPARE, params);
    const rerun = () => this.refresh(ctx);
    const choose = (which) =>
      h(
        "select",
        {
          "aria-label": `arm ${which}`,
          "data-arm": which,
          onchange: (event) => {
            const value = event.target.value;
            // choosing the other side's arm swaps the two
            if (which === "A") this.picked = [value, value === b ? a : b];
            else this.picked = [value === a ? b : a, value];
            rerun();
          },
        },
        names.map((n) => h("option", { value: n, selected: n === (which === "A" ? a : b) }, `${n} (${fmtCount(counts.get(n))} records)`)),
      );
    const controls = h(
      "div",
      { class: "arm-pick" },
      h("label", {}, "A ", choose("A")),
      h("label", {}, "B ", choose("B")),
      h(
        "label",
        {},
        "judgments ",
        h(
          "select",
          {
            "aria-label": "judgments compared",
            "data-control": "judgments",
            onchange: (event) => {
              this.judgments = event.target.value;
              rerun();
            },
          },
          Object.entries(JUDGMENTS).map(([value, text]) => h("option", { value, selected: value === this.judgments }, text)),
        ),
      ),
      h(
        "label",
        { class: "check" },
        h("input", {
          type: "checkbox",
          "data-control": "paired",
          checked: this.paired,
          onchange: (event) => {
            this.paired = event.target.checked;
            rerun();
          },
        }),
        " paired over common queries",
      ),
    );
    const test = data.measures.length ? TESTS[data.measures[0].test] ?? data.measures[0].test : "";
    const summary = h(
      "p",
      { class: "compare-summary", "data-arms": data.arms.join(","), "data-source": data.judgmentSource, "data-paired": String(data.paired) },
      `${data.judgmentSource} · ${test}; p-values Holm-corrected over ${data.measures.length} measures (${data.correction}), α = ${data.alpha}; a winner needs n ≥ ${fmtCount(data.minSample)} per arm${data.paired ? " (common queries)" : ""}.`,
    );
    const rows = data.measures.map((m) =>
      h(
        "tr",
        {
          "data-measure": m.measure,
          "data-value": m.delta ?? "",
          "data-low": m.ci ? m.ci.low : "",
          "data-high": m.ci ? m.ci.high : "",
          "data-p": m.pValue ?? "",
          "data-p-adjusted": m.pAdjusted ?? "",
          "data-verdict": m.verdict,
          "data-test": m.test,
          class: m.measure === ctx.filters.measure ? "current" : null,
        },
        h("th", { scope: "row" }, MEASURES[m.measure]?.label ?? m.measure),
        h("td", { class: "num", "data-n": m.nA }, fmtCount(m.nA)),
        h("td", { class: "num", "data-mean": m.meanA ?? "" }, fmt(m.meanA)),
        h("td", { class: "num", "data-n": m.nB }, fmtCount(m.nB)),
        h("td", { class: "num", "data-mean": m.meanB ?? "" }, fmt(m.meanB)),
        h("td", { class: "num strong nowrap" }, `${fmtSigned(m.delta)} ${m.ci ? fmtInterval(m.ci.low, m.ci.high) : "n < 2"}`),
        h("td", { class: "num" }, m.effectSize === null ? "—" : fmt(m.effectSize, 2)),
        h("td", { class: "num" }, fmtP(m.pValue)),
        h("td", { class: "num" }, fmtP(m.pAdjusted)),
        verdictCell(m, data),
      ),
    );
    this.setNote("two arms (options.arm) on the selected records; difference A − B with its 95% interval");
    this.show(
      "ready",
      controls,
      summary,
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "data compare" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["measure", `n A`, `A: ${a}`, `n B`, `B: ${b}`, "A − B [95% CI]", "effect d", "p", "p (Holm)", "verdict"].map((t, i) =>
                h("th", { scope: "col", class: i > 0 && i < 9 ? "num" : null }, t),
              ),
            ),
          ),
          h("tbody", {}, rows),
        ),
      ),
    );
  }
}
