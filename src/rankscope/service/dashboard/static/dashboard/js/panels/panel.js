// What every panel is: a <section> with a title, a note and a body, refreshed with the current
// filters. A panel for a feature the account does not use (no events, one arm, no alerts) hides
// itself; a core panel with no data, or an optional one whose data the filters narrow away,
// says why instead.

import { h, clear, append } from "../dom.js";

export class Panel {
  constructor({ id, title, note = "", wide = false }) {
    this.id = id;
    this.titleEl = h("h2", { id: `panel-${id}-title` }, title);
    this.noteEl = h("p", { class: "panel-note" }, note);
    this.body = h("div", { class: "panel-body" });
    this.el = h(
      "section",
      {
        class: `panel card${wide ? " wide" : ""}`,
        id: `panel-${id}`,
        "data-panel": id,
        "data-state": "loading",
        "aria-labelledby": `panel-${id}-title`,
        "aria-busy": "true",
      },
      h("header", { class: "panel-head" }, this.titleEl, this.noteEl),
      this.body,
    );
  }

  setTitle(text) {
    this.titleEl.textContent = text;
  }

  setNote(text) {
    this.noteEl.textContent = text;
  }

  // Subclasses implement update(ctx): fetch through ctx.load and render into this.body.
  async refresh(ctx) {
    this.el.setAttribute("aria-busy", "true");
    try {
      await this.update(ctx);
    } catch (error) {
      if (error.name === "AbortError" || ctx.signal.aborted) return;
      this.show("error", h("p", { class: "empty error" }, `Could not load: ${error.message}`));
    } finally {
      this.el.setAttribute("aria-busy", "false");
    }
  }

  // Render `children` as the body in `state` (ready | empty | error).
  show(state, ...children) {
    this.el.hidden = false;
    this.el.dataset.state = state;
    append(clear(this.body), children);
  }

  empty(message, hint) {
    this.show("empty", h("div", { class: "empty" }, h("p", {}, message), hint ? h("p", { class: "hint" }, hint) : null));
  }

  // An optional feature with no data for this account: not shown.
  unavailable(reason) {
    this.el.hidden = true;
    this.el.dataset.state = "unavailable";
    this.el.dataset.reason = reason;
    clear(this.body);
  }
}

// Why a selection can be empty, for empty states.
export function filterHint(ctx) {
  const f = ctx.filters;
  const active = ["startDate", "endDate", "topicId", "searchType", "judgmentSource"].filter((k) => f[k]);
  if (active.length) return "Filters are narrowing the selection: widen the dates or reset the filters.";
  return "Nothing collected yet for this account: send records with POST /api/metrics/retrieval/collect or rankscope.collect.MetricsClient.";
}

// The API parameters among `keys` (the filters an endpoint takes) and the chosen user.
export function pick(ctx, keys) {
  const out = {};
  for (const key of [...keys, "userId"]) if (ctx.params[key]) out[key] = ctx.params[key];
  return out;
}

// Whether any of `keys` narrows the selection below the account's whole data.
export function narrowed(ctx, keys) {
  return keys.some((key) => ctx.params[key]);
}
