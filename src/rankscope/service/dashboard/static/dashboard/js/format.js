// Numbers as rankscope prints them (4 decimals, like `rankscope eval` and `compare`), counts with
// thousands separators, times in UTC. Each shown number also keeps its exact value in a
// data-value attribute (what the tests compare with the API).

export const MEASURES = {
  ndcg: { label: "nDCG", long: "nDCG (whole list)" },
  averagePrecision: { label: "AP", long: "average precision (MAP)" },
  meanReciprocalRank: { label: "MRR", long: "reciprocal rank (MRR)" },
  precision: { label: "Precision", long: "precision at the retrieved depth" },
  recall: { label: "Recall", long: "recall at the retrieved depth" },
  f1Score: { label: "F1", long: "F1 at the retrieved depth" },
};

export const KINDS = {
  judged: { label: "Judged", note: "provided or feedback judgments" },
  heuristic: { label: "Heuristic", note: "relevant = score ≥ threshold; comparable within one retriever only" },
};

export function fmt(value, digits = 4) {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  return Number(value).toFixed(digits);
}

export function fmtCount(n) {
  return Number(n).toLocaleString("en-US");
}

export function fmtPercent(part, whole) {
  if (!whole) return "—";
  return `${((100 * part) / whole).toFixed(1)}%`;
}

export function fmtInterval(low, high) {
  if (low === null || low === undefined || high === null || high === undefined) return "n < 2";
  return `[${fmt(low)}, ${fmt(high)}]`;
}

export function fmtScore(value) {
  if (value === null || value === undefined) return "—";
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e5 || abs < 1e-3)) return Number(value).toExponential(3);
  return Number(value).toFixed(4);
}

function pad(n) {
  return String(n).padStart(2, "0");
}

export function fmtDate(iso, bucket = "day") {
  const d = new Date(iso);
  const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  if (bucket === "hour") return `${day} ${pad(d.getUTCHours())}:00`;
  if (bucket === "week") return `week of ${day}`;
  return day;
}

export function fmtTime(iso) {
  const d = new Date(iso);
  return `${fmtDate(iso)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

// A proportion as a percentage (1 decimal), and its interval.
export function fmtRate(value) {
  if (value === null || value === undefined) return "—";
  return `${(100 * value).toFixed(1)}%`;
}

export function fmtRateInterval(low, high) {
  if (low === null || low === undefined || high === null || high === undefined) return "no trials";
  return `[${fmtRate(low)}, ${fmtRate(high)}]`;
}

// p-values: 4 decimals, small ones in scientific notation (never a bare 0.0000).
export function fmtP(p) {
  if (p === null || p === undefined) return "—";
  if (p !== 0 && p < 1e-4) return Number(p).toExponential(1);
  return Number(p).toFixed(4);
}

export function fmtSigned(value, digits = 4) {
  if (value === null || value === undefined) return "—";
  return `${value > 0 ? "+" : value < 0 ? "-" : ""}${Math.abs(value).toFixed(digits)}`;
}

// A measure's label from its API name (camelCase) or an alert rule's (snake_case).
export function measureLabel(name) {
  const key = String(name).replace(/_([a-z])/g, (_, c) => c.toUpperCase());
  return MEASURES[key]?.label ?? name;
}
