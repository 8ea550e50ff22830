// One record in a dialog (GET /api/metrics/retrieval/{id}): what was asked, its measures, the
// ranked list as shown with scores and grades, and the relevant documents it missed.

import { append, clear, h } from "./dom.js";
import { MEASURES, fmt, fmtCount, fmtScore, fmtTime } from "./format.js";
import { judgeForm } from "./judge.js";

const SOURCE_NOTE = {
  provided: "judgments sent with the record",
  feedback: "judgments replaced later through POST …/feedback",
  heuristic: "no judgments: a document counts as relevant when its best chunk's score reaches the threshold",
};

function plural(n, word) {
  return `${fmtCount(n)} ${word}${n === 1 ? "" : "s"}`;
}

function meta(label, value) {
  return [h("dt", {}, label), h("dd", {}, value ?? h("span", { class: "muted" }, "—"))];
}

export function renderRecord(r) {
  const judgments = r.judgments || {};
  // a document counts once, at its first chunk, within the first `cutoff` distinct documents
  const first = new Map();
  for (const item of r.rankedList) if (!first.has(item.documentId)) first.set(item.documentId, item.position);
  const counted = new Set([...first.keys()].slice(0, r.cutoff));
  const rows = r.rankedList.map((item) => {
    const grade = judgments[item.documentId];
    const firstAt = first.get(item.documentId);
    let note = "";
    if (firstAt !== item.position) note = `chunk of #${firstAt}, counted there`;
    else if (!counted.has(item.documentId)) note = `beyond the cut-off (${r.cutoff})`;
    const relevant = grade !== undefined && grade > 0;
    return h(
      "tr",
      { "data-doc": item.documentId, "data-position": item.position, "data-score": item.score, class: relevant ? "relevant" : "" },
      h("td", { class: "num" }, item.position),
      h("td", {}, item.documentName ? [h("div", {}, item.documentName), h("div", { class: "muted mono" }, item.documentId)] : h("span", { class: "mono" }, item.documentId)),
      h("td", { class: "num" }, item.chunkIndex ?? "—"),
      h("td", { class: "num" }, fmtScore(item.score)),
      h("td", { class: "num", "data-grade": grade ?? "" }, grade === undefined ? h("span", { class: "muted" }, "0") : String(grade)),
      h("td", { class: "muted" }, note),
    );
  });
  const retrieved = new Set(first.keys());
  const missed = Object.entries(judgments)
    .filter(([doc, grade]) => grade > 0 && !retrieved.has(doc))
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const measures = Object.entries(MEASURES).map(([key, m]) =>
    h("div", { class: "kpi small", "data-measure": key, "data-value": r[key] }, h("div", { class: "kpi-label" }, m.label), h("div", { class: "kpi-value" }, fmt(r[key]))),
  );
  const source = r.judgmentSource;
  return [
    h("p", { class: "dd-query", "data-id": r.id }, r.query),
    h("div", { class: "kpis measures" }, measures),
    h(
      "dl",
      { class: "meta" },
      meta("judgments", [h("span", { class: `badge ${source}` }, source), " ", SOURCE_NOTE[source] || "", r.threshold !== null ? ` (threshold ${fmt(r.threshold, 2)})` : ""]),
      meta("retrieved", `${plural(r.totalRetrieved, "document")} (${plural(r.documentChunksRetrieved, "chunk")}), ${fmtCount(r.relevantRetrieved)} of ${fmtCount(r.totalRelevant)} relevant; evaluated to depth ${r.cutoff}`),
      meta("time", fmtTime(r.timestampIso)),
      meta("user", r.userId),
      meta("topic", r.topicId),
      meta("search type", r.searchType),
      meta("arm", r.arm),
      meta("query id", r.queryId),
      meta("record id", h("span", { class: "mono" }, r.id)),
      meta("scored by", `rankscope ${r.rankscopeVersion}`),
    ),
    h("h3", {}, "Ranked list, in the order shown"),
    rows.length
      ? h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { class: "data ranked" },
            h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "num" }, "#"), h("th", { scope: "col" }, "document"), h("th", { scope: "col", class: "num" }, "chunk"), h("th", { scope: "col", class: "num" }, "score"), h("th", { scope: "col", class: "num" }, "grade"), h("th", { scope: "col" }, ""))),
            h("tbody", {}, rows),
          ),
        )
      : h("p", { class: "empty" }, "This query retrieved nothing: every measure is 0."),
    missed.length
      ? [
          h("h3", {}, `Relevant but not retrieved (${missed.length})`),
          h("ul", { class: "missed" }, missed.map(([doc, grade]) => h("li", { "data-doc": doc }, h("span", { class: "mono" }, doc), ` · grade ${grade}`))),
        ]
      : null,
  ];
}

// The dialog; `onChanged` runs after feedback was saved (the dashboard refreshes its panels).
export function createDrilldown(dialog, onChanged) {
  const body = dialog.querySelector("#dd-body");
  const title = dialog.querySelector("#dd-title");
  dialog.querySelector("#dd-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close(); // a click on the backdrop
  });

  function show(api, record) {
    title.textContent = `Query · ${record.judgmentSource}`;
    const judge = h("button", { type: "button", class: "ghost", id: "judge-open" }, "Judge this query");
    append(clear(body), [renderRecord(record), h("div", { class: "judge-actions" }, judge)]);
    dialog.dataset.state = "ready";
    dialog.dataset.id = record.id;
    dialog.dataset.source = record.judgmentSource;
    judge.addEventListener("click", () => {
      const form = judgeForm(record, {
        onCancel: () => show(api, record),
        onSave: async (judgments) => {
          const path = `/api/metrics/retrieval/${encodeURIComponent(record.id)}/feedback`;
          const updated = await api.post(path, { judgments });
          show(api, updated);
          if (onChanged) onChanged();
        },
      });
      title.textContent = "Judge this query";
      append(clear(body), [h("p", { class: "dd-query" }, record.query), form]);
      dialog.dataset.state = "judging";
      form.querySelector("select")?.focus();
    });
  }

  return async function open(api, id) {
    title.textContent = "Query";
    dialog.dataset.state = "loading";
    clear(body).append(h("p", { class: "muted" }, "Loading…"));
    if (!dialog.open) dialog.showModal();
    try {
      show(api, await api.get(`/api/metrics/retrieval/${encodeURIComponent(id)}`));
    } catch (error) {
      clear(body).append(h("p", { class: "empty error" }, `Could not load this record: ${error.message}`));
      dialog.dataset.state = "error";
    }
  };
}
