// Team-draft interleaving experiments (GET /api/events/interleaving?experiment=NAME with the
// event filters), one row each: impressions, clicked impressions, wins, ties and losses of the
// first arm, the preference, the exact sign test's p and the API's verdict (no winner below
// minImpressions clicked impressions). The experiments come from the events summary's
// `experiments`. Hidden when the account has none.
//
// data: InterleavingPublic (rankscope/service/schemas/experiments.py): {experiment, arms, impressions,
//   clicked, wins, losses, ties, preference, pValue, alpha, minImpressions, verdict: "a" | "b" |
//   "no_difference" | "insufficient_data", winner}

import { h } from "../dom.js";
import { fmt, fmtCount, fmtP, fmtSigned } from "../format.js";
import { EVENT_FILTERS, SUMMARY } from "./events.js";
import { Panel, narrowed, pick } from "./panel.js";

const INTERLEAVING = "/api/events/interleaving";
const MOST = 10; // experiments shown, most impressions first

function verdict(d) {
  if (d.verdict === "a" || d.verdict === "b") return h("span", { class: "win" }, `${d.winner} better`);
  if (d.verdict === "no_difference") return h("span", { class: "muted" }, `no difference (p > ${d.alpha})`);
  return h(
    "span",
    { class: "badge insufficient", title: `no winner below ${d.minImpressions} clicked impressions` },
    "insufficient data",
  );
}

export class InterleavingPanel extends Panel {
  constructor() {
    super({ id: "interleaving", title: "Interleaving experiments", wide: true });
  }

  async update(ctx) {
    const params = pick(ctx, EVENT_FILTERS);
    const summary = await ctx.load(SUMMARY, params);
    const names = Object.entries(summary.experiments)
      .sort(([x, n], [y, m]) => m - n || x.localeCompare(y))
      .map(([name]) => name);
    if (names.length === 0) {
      if (!narrowed(ctx, EVENT_FILTERS) || Object.keys((await ctx.load(SUMMARY, ctx.scope)).experiments).length === 0) {
        return this.unavailable("no interleaving experiment for this account");
      }
      this.setNote("impressions sent with an experiment and teams");
      return this.empty("No interleaving impressions match this selection.");
    }
    const shown = names.slice(0, MOST);
    const results = await Promise.all(
      shown.map((name) => ctx.load(INTERLEAVING, { ...params, experiment: name }).then((d) => ({ name, d }), (error) => ({ name, error }))),
    );
    if (ctx.signal.aborted) return;
    const rows = results.map(({ name, d, error }) => {
      if (error) {
        return h("tr", { "data-experiment": name, class: "failed" }, h("th", { scope: "row" }, name), h("td", { colspan: 8, class: "error" }, error.message));
      }
      const [a, b] = d.arms;
      return h(
        "tr",
        {
          "data-experiment": name,
          "data-impressions": d.impressions,
          "data-clicked": d.clicked,
          "data-wins": d.wins,
          "data-ties": d.ties,
          "data-losses": d.losses,
          "data-value": d.preference,
          "data-p": d.pValue ?? "",
          "data-verdict": d.verdict,
        },
        h("th", { scope: "row" }, name),
        h("td", {}, a && b ? `${a} vs ${b}` : d.arms.join(", ") || "—"),
        h("td", { class: "num" }, fmtCount(d.impressions)),
        h("td", { class: "num" }, fmtCount(d.clicked)),
        h("td", { class: "num" }, `${fmtCount(d.wins)} / ${fmtCount(d.ties)} / ${fmtCount(d.losses)}`),
        h("td", { class: "num" }, fmtSigned(d.preference)),
        h("td", { class: "num" }, fmtP(d.pValue)),
        h("td", {}, verdict(d)),
      );
    });
    this.setNote(
      `clicks credited to the team of the clicked slot; exact sign test over wins and losses${names.length > MOST ? ` (the ${MOST} largest of ${names.length})` : ""}`,
    );
    this.show(
      "ready",
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "data interleaving" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col" }, "experiment"),
              h("th", { scope: "col" }, "A vs B"),
              h("th", { scope: "col", class: "num" }, "impressions"),
              h("th", { scope: "col", class: "num" }, "clicked"),
              h("th", { scope: "col", class: "num" }, "A wins / ties / B wins"),
              h("th", { scope: "col", class: "num", title: "(wins + ties/2) / clicked − 1/2; above 0 favours A" }, "preference for A"),
              h("th", { scope: "col", class: "num" }, "p (sign test)"),
              h("th", { scope: "col" }, "verdict"),
            ),
          ),
          h("tbody", {}, rows),
        ),
      ),
    );
  }
}
