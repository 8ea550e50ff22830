// The dashboard: sign in with a token, keep the filters in the URL's fragment (shareable, no
// token in it), and refresh every panel whenever a filter changes.

import { Api, forgetToken, saveToken, savedToken } from "./api.js";
import { h, clear } from "./dom.js";
import { createDrilldown } from "./drilldown.js";
import { fmtCount } from "./format.js";
import { createPanels } from "./panels/index.js";

const DEFAULTS = {
  measure: "ndcg",
  startDate: "",
  endDate: "",
  topicId: "",
  searchType: "",
  judgmentSource: "",
  bucket: "day",
  userId: "",
};
// the filters every API read takes (the rest only change how panels draw)
const API_FILTERS = ["startDate", "endDate", "topicId", "searchType", "judgmentSource", "userId"];

const $ = (id) => document.getElementById(id);
const controls = () => [...document.querySelectorAll("[data-filter]")];

let api = null;
let me = null;
let panels = [];
let filters = { ...DEFAULTS };
let current = null; // the refresh in flight
let lastCtx = null; // its context: a redraw reuses its answers
let refreshes = 0;
const openRecord = createDrilldown($("drilldown"), () => refreshAfterFeedback());

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  const out = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS)) if (params.has(key)) out[key] = params.get(key);
  return out;
}

function writeHash() {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) if (value && value !== DEFAULTS[key]) params.set(key, value);
  const hash = params.toString();
  history.replaceState(null, "", hash ? `#${hash}` : location.pathname);
}

function showControls() {
  for (const el of controls()) {
    const value = filters[el.dataset.filter] ?? "";
    if (el.tagName === "SELECT" && value && ![...el.options].some((o) => o.value === value)) {
      el.append(h("option", { value }, value)); // a value from the URL not in the list (yet)
    }
    el.value = value;
  }
}

function apiParams() {
  const out = {};
  for (const key of API_FILTERS) if (filters[key]) out[key] = filters[key];
  return out;
}

function setOptions(select, groups, allLabel, noneLabel) {
  const counts = new Map();
  for (const g of groups) counts.set(g.key, (counts.get(g.key) || 0) + g.stats.count);
  const keep = select.value;
  clear(select).append(h("option", { value: "" }, allLabel));
  const keys = [...counts.keys()].filter((k) => k !== null).sort((a, b) => String(a).localeCompare(String(b)));
  for (const key of keys) select.append(h("option", { value: key }, `${key} (${fmtCount(counts.get(key))})`));
  if (counts.has(null) && noneLabel) select.title = `${fmtCount(counts.get(null))} queries have no ${noneLabel}`;
  if (keep && !counts.has(keep)) select.append(h("option", { value: keep }, keep));
  select.value = keep;
}

// Topics and search types to choose from: what the (chosen) user has, whatever the dates.
async function loadChoices() {
  const scope = filters.userId ? { userId: filters.userId } : {};
  const [topics, types] = await Promise.all([
    api.get("/api/metrics/retrieval/breakdown", { ...scope, by: "topic" }),
    api.get("/api/metrics/retrieval/breakdown", { ...scope, by: "searchType" }),
  ]);
  setOptions(document.querySelector('[data-filter="topicId"]'), topics.groups, "all topics", "topic");
  setOptions(document.querySelector('[data-filter="searchType"]'), types.groups, "all types");
  showControls();
}

async function loadUsers() {
  const users = await api.get("/api/metrics/retrieval/breakdown", { by: "user" });
  setOptions($("user-select"), users.groups, "all users");
  showControls();
}

async function refresh() {
  if (current) current.abort();
  const controller = new AbortController();
  current = controller;
  const cache = new Map(); // one request per URL per refresh (panels share endpoints)
  const ctx = {
    api,
    me,
    filters: { ...filters },
    params: apiParams(),
    signal: controller.signal,
    openRecord: (id) => openRecord(api, id),
    // the account's whole data (the chosen user for the service role): what optional panels
    // read to tell "nothing yet" (hidden) from "filtered away" (an empty state)
    scope: filters.userId ? { userId: filters.userId } : {},
    load(path, params) {
      const key = `${path}?${new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined))}`;
      if (!cache.has(key)) cache.set(key, api.get(path, params, { signal: controller.signal }));
      return cache.get(key);
    },
  };
  lastCtx = ctx;
  document.body.dataset.loading = "true";
  $("status").textContent = "Loading…";
  await Promise.all(panels.map((p) => p.refresh(ctx)));
  if (controller.signal.aborted) return;
  refreshes += 1;
  document.body.dataset.loading = "false";
  document.body.dataset.refreshes = String(refreshes);
  const time = new Date().toISOString().slice(11, 19);
  $("status").textContent = `Updated ${time} UTC`;
}

// feedback changed a record: its numbers, and perhaps the filter choices, are different now
async function refreshAfterFeedback() {
  await loadChoices();
  await refresh();
}

async function onFilterChange(event) {
  const el = event.target;
  if (!el.dataset || !el.dataset.filter) return;
  filters[el.dataset.filter] = el.value;
  if (filters.startDate && filters.endDate && filters.startDate > filters.endDate) {
    $("status").textContent = "“From” is after “To”: no dates can match.";
    return;
  }
  writeHash();
  if (el.dataset.filter === "userId") {
    filters.topicId = "";
    filters.searchType = "";
    writeHash();
    await loadChoices();
  }
  await refresh();
}

function showLogin(message) {
  $("app-view").hidden = true;
  $("who").hidden = true;
  $("login-view").hidden = false;
  const error = $("login-error");
  error.hidden = !message;
  error.textContent = message || "";
  $("token").focus();
}

function logout(message) {
  forgetToken();
  api = null;
  me = null;
  if (current) current.abort();
  if ($("drilldown").open) $("drilldown").close();
  clear($("panels"));
  panels = [];
  showLogin(message);
}

async function start(token) {
  api = new Api(token, (message) => logout(`Signed out: ${message}`));
  try {
    me = await api.get("/api/me");
  } catch (error) {
    forgetToken();
    showLogin(error.status === 401 ? `This token was refused: ${error.message}` : `Could not reach the service: ${error.message}`);
    return;
  }
  saveToken(token);
  $("login-view").hidden = true;
  $("app-view").hidden = false;
  $("who").hidden = false;
  $("identity").textContent = me.role === "service" ? `${me.userId} · service role` : me.userId;
  $("identity").dataset.user = me.userId;
  $("identity").dataset.role = me.role;
  $("user-pick").hidden = me.role !== "service";
  filters = readHash();
  if (me.role !== "service") filters.userId = "";
  panels = createPanels();
  clear($("panels")).append(...panels.map((p) => p.el));
  showControls();
  try {
    if (me.role === "service") await loadUsers();
    await loadChoices();
  } catch (error) {
    $("status").textContent = `Could not load the filter choices: ${error.message}`;
  }
  await refresh();
}

$("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = $("token").value.trim().replace(/^Bearer\s+/i, "");
  $("token").value = "";
  if (token) start(token);
});
$("logout").addEventListener("click", () => logout());
$("filters").addEventListener("change", onFilterChange);
$("user-select").addEventListener("change", onFilterChange);
$("filters").addEventListener("submit", (event) => event.preventDefault());
$("reset").addEventListener("click", () => {
  filters = { ...DEFAULTS, userId: filters.userId };
  writeHash();
  showControls();
  refresh();
});
// charts are drawn to the width they get: redraw (from the answers already read) when it changes
let resizeTimer = null;
let width = window.innerWidth;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (!lastCtx || window.innerWidth === width) return;
    width = window.innerWidth;
    for (const p of panels) p.refresh(lastCtx);
  }, 250);
});

const token = savedToken();
if (token) start(token);
else showLogin();
