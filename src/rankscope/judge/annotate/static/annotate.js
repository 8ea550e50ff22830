// The annotation page. Every text from the server goes into the DOM as text nodes, never as
// markup; requests go to this origin only, with the token from the URL kept in sessionStorage.

const TOKEN_KEY = "rankscope.annotate.token";
const NAME_KEY = "rankscope.annotate.annotator";
const SOURCE_NAMES = { llm: "LLM", qrels: "qrels" };

const $ = (id) => document.getElementById(id);

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

function show(id, visible) {
  $(id).hidden = !visible;
}

function setState(name) {
  document.body.dataset.state = name;
}

// counts the answers the server confirmed (grades, skips, undos, notes): a test waits for it
function confirmed() {
  document.body.dataset.actions = String(Number(document.body.dataset.actions || 0) + 1);
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, body) {
  const headers = { Accept: "application/json", Authorization: `Bearer ${state.token}` };
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, "network", "the server cannot be reached: is `rankscope annotate` still running?");
  }
  let payload = null;
  try {
    payload = await response.json();
  } catch (error) {
    throw new ApiError(response.status, "bad_response", `the server answered ${response.status}`);
  }
  if (!response.ok || !payload.success) {
    const err = payload && payload.error ? payload.error : { code: "error", message: String(response.status) };
    throw new ApiError(response.status, err.code, err.message);
  }
  return payload.data;
}

const state = {
  token: null,
  annotator: null,
  session: null,
  item: null,
  progress: null,
  busy: false,
  shownAt: 0,
  view: "judge",
};

function message(text) {
  for (const id of ["picker", "judge", "done", "agreement", "export", "views", "progress-box"]) show(id, false);
  const box = clear($("message"));
  box.append(h("p", {}, text));
  show("message", true);
}

function failed(error) {
  if (error.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    setState("no-token");
    message("The server refused the token (it may have been restarted with a new one). Open the address `rankscope annotate` printed.");
    return;
  }
  setState("error");
  const box = $("error");
  box.textContent = error.message;
  show("error", true);
}

// -- start -----------------------------------------------------------------------------------

async function start() {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  const name = url.searchParams.get("annotator");
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  if (name) sessionStorage.setItem(NAME_KEY, name);
  if (token || name) {
    // the token leaves the address bar (and the history) at once
    url.searchParams.delete("token");
    url.searchParams.delete("annotator");
    window.history.replaceState(null, "", url.pathname + url.search);
  }
  state.token = sessionStorage.getItem(TOKEN_KEY);
  if (!state.token) {
    setState("no-token");
    message("Open the address `rankscope annotate` printed: it holds the token that lets this page in.");
    return;
  }
  try {
    state.session = await call("GET", "/api/session");
  } catch (error) {
    failed(error);
    return;
  }
  buildScale();
  wire();
  const saved = sessionStorage.getItem(NAME_KEY);
  if (saved) await join(saved);
  else showPicker();
}

function buildScale() {
  const box = clear($("scale"));
  for (const level of state.session.scale) {
    box.append(
      h("button", { type: "button", dataset: { grade: String(level.grade) }, title: `Key ${level.grade}`, onclick: () => answer(level.grade) },
        h("span", { class: "grade" }, String(level.grade)),
        h("span", { class: "wording" }, level.description)),
    );
  }
  const grades = state.session.scale.map((level) => level.grade).sort((a, b) => a - b);
  clear($("key-grades")).append(h("kbd", {}, `${grades[0]}–${grades[grades.length - 1]}`));
}

function showPicker() {
  setState("picker");
  for (const id of ["judge", "done", "agreement", "export", "views", "progress-box", "message"]) show(id, false);
  $("who").textContent = "";
  const names = clear($("picker-names"));
  for (const name of state.session.annotators) {
    names.append(h("button", { type: "button", dataset: { annotator: name }, onclick: () => join(name) }, name));
  }
  show("join-form", state.session.open);
  show("picker", true);
  if (state.session.open) $("join-name").focus();
}

async function join(name) {
  show("join-error", false);
  try {
    const data = await call("POST", "/api/annotators", { annotator: name });
    state.annotator = data.annotator;
    sessionStorage.setItem(NAME_KEY, data.annotator);
    $("who").textContent = data.annotator;
    show("picker", false);
    show("views", true);
    show("progress-box", true);
    showView("judge", false);
    render(data);
  } catch (error) {
    if (error.status === 401) return failed(error);
    sessionStorage.removeItem(NAME_KEY);
    showPicker();
    $("join-error").textContent = error.message;
    show("join-error", true);
  }
}

// -- judging ---------------------------------------------------------------------------------

function segments(parts) {
  return parts.map(([text, marked]) => (marked ? h("mark", {}, text) : document.createTextNode(text)));
}

function render(data) {
  state.item = data.item;
  state.progress = data.progress;
  const p = data.progress;
  $("progress").max = Math.max(p.assigned, 1);
  $("progress").value = p.graded;
  const text = $("progress-text");
  text.textContent = `${p.graded} of ${p.assigned} graded` + (p.skipped ? ` · ${p.skipped} skipped` : "");
  Object.assign(text.dataset, { graded: p.graded, assigned: p.assigned, skipped: p.skipped });
  show("error", false);
  if (state.view !== "judge") return setState("ready");
  const item = data.item;
  if (!item) {
    show("judge", false);
    show("done", true);
    setState("done");
    return;
  }
  show("done", false);
  show("judge", true);
  const pair = $("pair");
  Object.assign(pair.dataset, { pairId: item.pairId, queryId: item.queryId, docId: item.docId });
  $("query-id").textContent = item.queryId;
  $("doc-id").textContent = item.docId;
  $("query").textContent = item.query;
  clear($("title")).append(...segments(item.title));
  show("title", item.title.length > 0);
  clear($("text")).append(...segments(item.text));
  $("text").scrollTop = 0;
  $("position").textContent = `${item.position} / ${item.queueLength}`;
  show("skipped-badge", item.skipped);
  $("note").value = item.note;
  show("note-box", item.note.length > 0);
  const saved = $("note-saved");
  saved.textContent = item.note ? "note saved" : "";
  show("note-saved", item.note.length > 0);
  for (const button of $("scale").querySelectorAll("button")) button.classList.remove("chosen");
  state.shownAt = performance.now();
  setState("ready");
}

function elapsed() {
  return Math.min(Math.max(Math.round(performance.now() - state.shownAt), 0), 86400000);
}

function lastLine(parts, dataset) {
  const last = clear($("last"));
  last.append(...parts);
  for (const key of Object.keys(last.dataset)) delete last.dataset[key];
  Object.assign(last.dataset, dataset);
}

// a note typed but not saved yet goes with the answer: it is saved first
async function keepNote() {
  const item = state.item;
  const text = $("note").value;
  if (!item || text === item.note) return;
  await call("POST", "/api/note", { annotator: state.annotator, pairId: item.pairId, note: text });
  item.note = text;
}

async function act(path, body, after) {
  if (state.busy || !state.annotator) return;
  state.busy = true;
  setState("busy");
  try {
    if (body.pairId !== undefined) await keepNote();
    const data = await call("POST", path, { annotator: state.annotator, ...body });
    after(data);
    render(data);
    confirmed();
  } catch (error) {
    failed(error);
  } finally {
    state.busy = false;
  }
}

function answer(grade) {
  const item = state.item;
  if (!item || state.busy) return;
  const button = $("scale").querySelector(`button[data-grade="${grade}"]`);
  if (!button) return;
  button.classList.add("chosen");
  act("/api/grade", { pairId: item.pairId, grade, elapsedMs: elapsed() }, (data) => {
    const parts = [`Saved ${grade} for ${item.queryId} / ${item.docId}`];
    const dataset = { kind: "grade", grade: String(grade), pairId: String(item.pairId) };
    for (const [source, label] of Object.entries(data.reference || {})) {
      const agree = label === grade;
      parts.push(" · ", h("span", { class: agree ? "ref-agree" : "ref-differ", dataset: { source, label: String(label) } },
        `${SOURCE_NAMES[source] || source} label: ${label}`));
      dataset[`ref${source[0].toUpperCase()}${source.slice(1)}`] = String(label);
    }
    lastLine(parts, dataset);
  });
}

function skip() {
  const item = state.item;
  if (!item) return;
  act("/api/skip", { pairId: item.pairId, elapsedMs: elapsed() }, () => {
    lastLine([`Skipped ${item.queryId} / ${item.docId}: it comes back at the end`], { kind: "skip", pairId: String(item.pairId) });
  });
}

function undo() {
  act("/api/undo", {}, (data) => {
    const gone = data.undone;
    if (!gone) lastLine(["Nothing to undo"], { kind: "none" });
    else {
      const what = gone.kind === "grade" ? `grade ${gone.grade}` : "skip";
      lastLine([`Undid the ${what} of ${gone.queryId} / ${gone.docId}`], { kind: "undo", pairId: String(gone.pairId) });
    }
  });
}

function openNote() {
  if (!state.item) return;
  show("note-box", true);
  $("note").focus();
}

async function saveNote() {
  const item = state.item;
  if (!item || state.busy) return;
  state.busy = true;
  setState("busy");
  try {
    const text = $("note").value;
    await keepNote();
    const saved = $("note-saved");
    saved.textContent = text ? "note saved" : "note cleared";
    show("note-saved", true);
    $("note").blur();
    setState("ready");
    confirmed();
  } catch (error) {
    failed(error);
  } finally {
    state.busy = false;
  }
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target && target.id === "note") {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      saveNote();
    } else if (event.key === "Escape") {
      event.preventDefault();
      if (state.item && target.value !== state.item.note) saveNote();
      else target.blur();
    }
    return;
  }
  if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
  if (state.view !== "judge" || !state.annotator || event.repeat) return;
  const key = event.key.toLowerCase();
  if (/^[0-9]$/.test(key)) {
    event.preventDefault();
    answer(Number(key));
  } else if (key === "s") {
    event.preventDefault();
    skip();
  } else if (key === "u") {
    event.preventDefault();
    undo();
  } else if (key === "n") {
    event.preventDefault();
    openNote();
  }
}

// -- agreement and export --------------------------------------------------------------------

function fixed(value, digits = 3) {
  return value === null || value === undefined ? "n/a" : value.toFixed(digits);
}

function raterTable(rows, bLabel) {
  if (!rows.length) return h("p", {}, "Nothing to compare yet.");
  return h("table", {},
    h("thead", {}, h("tr", {}, ["", bLabel, "pairs", "exact", "κ binary", "κ linear", "κ quadratic"].map((t) => h("th", {}, t)))),
    h("tbody", {}, rows.map((r) => {
      const k = r.kappa || {};
      return h("tr", { dataset: { a: r.a, b: r.b, shared: String(r.shared), exact: r.exact === null ? "" : String(r.exact),
        kappaBinary: k.binary ?? "", kappaLinear: k.linear ?? "", kappaQuadratic: k.quadratic ?? "" } },
        h("td", {}, r.a), h("td", {}, SOURCE_NAMES[r.b] || r.b), h("td", { class: "num" }, String(r.shared)),
        h("td", { class: "num" }, fixed(r.exact)), h("td", { class: "num" }, fixed(k.binary)),
        h("td", { class: "num" }, fixed(k.linear)), h("td", { class: "num" }, fixed(k.quadratic)));
    })));
}

function labelsText(references) {
  if (!references) return "hidden";
  const shown = Object.entries(references).map(([s, g]) => `${SOURCE_NAMES[s] || s} ${g}`);
  return shown.length ? shown.join(" · ") : "none";
}

async function loadAgreement() {
  const box = clear($("agreement"));
  box.append(h("p", {}, "Loading…"));
  setState("busy");
  try {
    const data = await call("GET", "/api/agreement");
    clear(box);
    box.append(
      h("h2", {}, "Agreement on the overlap"),
      h("p", { class: "hint" }, `Cohen's kappa over the pairs both sides graded (binary: grade ≥ ${data.threshold}); skipped pairs are left out.`),
      h("h3", {}, "Between annotators"),
      raterTable(data.annotators, "with"),
      h("h3", {}, "People and reference labels"),
      raterTable(data.references, "labels"),
      h("h3", {}, `Disagreements to settle (${data.disagreements.length})`),
    );
    if (data.disagreements.length) {
      box.append(h("table", { id: "disagreements" },
        h("thead", {}, h("tr", {}, ["query", "doc", "query text", "grades", "labels", "notes"].map((t) => h("th", {}, t)))),
        h("tbody", {}, data.disagreements.map((d) => h("tr", { dataset: { pairId: String(d.pairId), queryId: d.queryId, docId: d.docId } },
          h("td", {}, d.queryId), h("td", {}, d.docId), h("td", { class: "disagreement-query" }, d.query),
          h("td", {}, Object.entries(d.grades).map(([n, g]) => `${n} ${g}`).join(" · ")),
          h("td", {}, labelsText(d.references)),
          h("td", {}, Object.entries(d.notes).map(([n, t]) => `${n}: ${t}`).join(" | ")))))));
    } else {
      box.append(h("p", {}, "None."));
    }
    setState("ready");
  } catch (error) {
    clear(box);
    failed(error);
  }
}

async function download(format, scope) {
  const out = $("export-result");
  out.textContent = "";
  setState("busy");
  try {
    const query = new URLSearchParams({ format });
    if (scope === "mine") query.set("annotator", state.annotator);
    const data = await call("GET", `/api/export?${query}`);
    const blob = new Blob([data.text], { type: "text/plain;charset=utf-8" });
    const link = h("a", { href: URL.createObjectURL(blob), download: data.filename });
    document.body.append(link);
    link.click();
    link.remove();
    window.setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    const held = data.rows === null ? "the full log" : `${data.rows} graded pairs`;
    const left = data.disagreements ? `; ${data.disagreements} pairs graded differently left out` : "";
    out.textContent = `${data.filename}: ${held}${left}`;
    Object.assign(out.dataset, { rows: data.rows ?? "", disagreements: data.disagreements ?? "" });
    setState("ready");
  } catch (error) {
    failed(error);
  }
}

function showView(view, load = true) {
  state.view = view;
  for (const button of $("views").querySelectorAll("button[data-view]")) {
    button.setAttribute("aria-pressed", String(button.dataset.view === view));
  }
  show("agreement", view === "agreement");
  show("export", view === "export");
  if (view !== "judge") {
    show("judge", false);
    show("done", false);
  }
  if (view === "agreement") loadAgreement();
  if (view === "judge" && state.annotator && load) {
    setState("busy");
    call("GET", `/api/next?${new URLSearchParams({ annotator: state.annotator })}`).then(render, failed);
  }
  if (view === "export") setState("ready");
}

function wire() {
  document.addEventListener("keydown", onKey);
  $("skip").addEventListener("click", skip);
  $("undo").addEventListener("click", undo);
  $("note-open").addEventListener("click", openNote);
  $("switch").addEventListener("click", () => {
    sessionStorage.removeItem(NAME_KEY);
    state.annotator = null;
    state.item = null;
    showPicker();
  });
  for (const button of $("views").querySelectorAll("button[data-view]")) {
    button.addEventListener("click", () => showView(button.dataset.view));
  }
  for (const button of $("export").querySelectorAll("button[data-format]")) {
    button.addEventListener("click", () => download(button.dataset.format, button.dataset.scope));
  }
  $("join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("join-name").value.trim();
    if (name) join(name);
  });
}

start();
