// Judging a query from its drill-down: a grade (0-3, rankscope's scale) for every retrieved
// document and for the relevant documents it missed, sent as feedback
// (POST /api/metrics/retrieval/{id}/feedback). The service replaces the record's judgments and
// recomputes its measures; the record then counts as judged (source "feedback").

import { h } from "./dom.js";
import { fmtScore } from "./format.js";

const SCALE = [0, 1, 2, 3];

export function judgeForm(record, { onSave, onCancel }) {
  // a heuristic row's "judgments" are the threshold's guesses, not judgments: start from none
  const start = record.judgmentSource === "heuristic" ? {} : { ...(record.judgments || {}) };
  const docs = [];
  const seen = new Set();
  for (const item of record.rankedList) {
    if (seen.has(item.documentId)) continue;
    seen.add(item.documentId);
    docs.push({ id: item.documentId, name: item.documentName, score: item.score, position: item.position });
  }
  for (const [id, grade] of Object.entries(start)) {
    if (!seen.has(id) && grade > 0) docs.push({ id, name: null, score: null, position: null });
  }
  const selects = docs.map((doc) => {
    const current = start[doc.id] ?? 0;
    const grades = SCALE.includes(current) ? SCALE : [...SCALE, current].sort((a, b) => a - b);
    return h(
      "select",
      { "data-doc": doc.id, "aria-label": `grade of ${doc.id}` },
      grades.map((g) => h("option", { value: g, selected: g === current }, g === 0 ? "0 · not relevant" : String(g))),
    );
  });
  const status = h("p", { class: "hint", role: "status" });
  const save = h("button", { type: "submit", id: "judge-save" }, "Save as feedback");
  const form = h(
    "form",
    { class: "judge", id: "judge-form" },
    h(
      "p",
      { class: "hint" },
      record.judgmentSource === "heuristic"
        ? "This record has no judgments (the heuristic's guesses are not used): grade each document. "
        : "",
      "Saving replaces the record's judgments and recomputes its measures; it then counts as judged (feedback).",
    ),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "data ranked" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "num" }, "#"), h("th", { scope: "col" }, "document"), h("th", { scope: "col", class: "num" }, "score"), h("th", { scope: "col" }, "grade"))),
        h(
          "tbody",
          {},
          docs.map((doc, i) =>
            h(
              "tr",
              { "data-doc": doc.id },
              h("td", { class: "num" }, doc.position ?? h("span", { class: "muted" }, "missed")),
              h("td", {}, doc.name ? [h("div", {}, doc.name), h("div", { class: "muted mono" }, doc.id)] : h("span", { class: "mono" }, doc.id)),
              h("td", { class: "num" }, doc.score === null ? "—" : fmtScore(doc.score)),
              h("td", {}, selects[i]),
            ),
          ),
        ),
      ),
    ),
    h("div", { class: "judge-actions" }, save, h("button", { type: "button", class: "ghost", onclick: onCancel }, "Cancel"), status),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const judgments = Object.fromEntries(selects.map((s) => [s.dataset.doc, Number(s.value)]));
    save.disabled = true;
    status.textContent = "Saving…";
    try {
      await onSave(judgments);
    } catch (error) {
      status.textContent = `Not saved: ${error.message}`;
      save.disabled = false;
    }
  });
  return form;
}
