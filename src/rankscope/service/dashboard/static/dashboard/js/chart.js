// Charts on the vendored uPlot (a global from /static/vendor/uplot): a mean with its 95% band,
// and bars. Times are UTC. The canvas is decoration for sighted readers; every chart comes with
// a table of the same values (see the panels).

import { h } from "./dom.js";

const STEP = { hour: 3600, day: 86400, week: 7 * 86400 };
const utc = (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC");

// Every bucket start from the first to the last (empty buckets become gaps, not straight lines
// across missing days); the points themselves when the grid would be very long.
export function bucketGrid(starts, bucket) {
  const secs = [...new Set(starts.map((s) => Date.parse(s) / 1000))].sort((a, b) => a - b);
  if (secs.length < 2) return secs;
  // UTC buckets have fixed lengths (weeks start on Monday 00:00 UTC)
  const step = STEP[bucket];
  const first = secs[0];
  const last = secs[secs.length - 1];
  if ((last - first) / step > 3000 || secs.some((s) => (s - first) % step !== 0)) return secs;
  const grid = [];
  for (let t = first; t <= last; t += step) grid.push(t);
  return grid;
}

// Half a bucket either side of the buckets shown. From the data, not from uPlot's min and max:
// for a single point uPlot widens the time scale to 1000 days, and one day of data was drawn
// at the edge of a two-year axis.
function xRange(bucket, xs) {
  const pad = STEP[bucket] / 2;
  return () => [xs[0] - pad, xs[xs.length - 1] + pad];
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAY = 86400;
// tick steps that land on bucket starts, and tick labels in UTC
const INCRS = {
  hour: [3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY],
  day: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY, 91 * DAY, 182 * DAY, 364 * DAY],
  week: [7 * DAY, 14 * DAY, 28 * DAY, 91 * DAY, 182 * DAY, 364 * DAY],
};

function timeLabel(bucket) {
  return (_u, ticks) =>
    ticks.map((t, i) => {
      const d = new Date(t * 1000);
      const day = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
      const year = i === 0 || new Date(ticks[i - 1] * 1000).getUTCFullYear() !== d.getUTCFullYear() ? `\n${d.getUTCFullYear()}` : "";
      if (bucket === "hour") return `${day} ${String(d.getUTCHours()).padStart(2, "0")}:00${year}`;
      return `${day}${year}`;
    });
}

function axisFont() {
  return "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
}

function baseAxes(bucket, xLabel, yLabel, yValues, ySplits) {
  const grid = { stroke: "#e5e7eb", width: 1 };
  // both axes look alike: same fonts, grid and colour
  const style = {
    labelSize: 22,
    font: axisFont(),
    labelFont: axisFont(),
    grid,
    ticks: grid,
    stroke: "#4b5563",
  };
  return [
    { ...style, label: xLabel, space: 56, incrs: INCRS[bucket], values: timeLabel(bucket) },
    { ...style, label: yLabel, size: 52, values: yValues, splits: ySplits },
  ];
}

// A line of means with the 95% interval as a band. xs: seconds; mean/low/high: arrays with null
// for empty buckets. onHover(index | null) reports the bucket under the cursor.
export function bandChart(target, { xs, mean, low, high, bucket, xLabel, yLabel, color, onHover }) {
  const width = Math.max(280, target.clientWidth || 600);
  const opts = {
    width,
    height: 230,
    tzDate: utc,
    legend: { show: false },
    cursor: { drag: { x: false, y: false }, points: { size: 8 } },
    scales: { x: { time: true, range: xRange(bucket, xs) }, y: { range: [0, 1] } },
    axes: baseAxes(bucket, xLabel, yLabel, (_u, ticks) => ticks.map((v) => v.toFixed(1)), () => [0, 0.2, 0.4, 0.6, 0.8, 1]),
    series: [
      {},
      { label: "mean", stroke: color, width: 2, points: { show: true, size: 6, fill: color } },
      { label: "95% low", stroke: `${color}55`, width: 1, dash: [4, 4], points: { show: false } },
      { label: "95% high", stroke: `${color}55`, width: 1, dash: [4, 4], points: { show: false } },
    ],
    bands: [{ series: [3, 2], fill: `${color}26` }],
    hooks: {
      setCursor: [(u) => onHover && onHover(u.cursor.idx ?? null)],
    },
  };
  const plot = new uPlot(opts, [xs, mean, low, high], target);
  plot.root.setAttribute("aria-hidden", "true");
  return plot;
}

// Bars of a rate in percent per bucket.
export function barChart(target, { xs, values, bucket, xLabel, yLabel, color, onHover }) {
  const width = Math.max(280, target.clientWidth || 600);
  const top = Math.max(5, ...values.filter((v) => v !== null)) * 1.15;
  const opts = {
    width,
    height: 180,
    tzDate: utc,
    legend: { show: false },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    scales: { x: { time: true, range: xRange(bucket, xs) }, y: { range: [0, top] } },
    axes: baseAxes(bucket, xLabel, yLabel, (_u, ticks) => ticks.map((v) => `${+v.toFixed(1)}%`)),
    series: [
      {},
      {
        label: "rate",
        stroke: color,
        fill: `${color}99`,
        width: 1,
        paths: uPlot.paths.bars({ size: [0.6, 60] }),
        points: { show: false },
      },
    ],
    hooks: { setCursor: [(u) => onHover && onHover(u.cursor.idx ?? null)] },
  };
  const plot = new uPlot(opts, [xs, values], target);
  plot.root.setAttribute("aria-hidden", "true");
  return plot;
}

// A mean and its interval on a 0..1 scale, as a small inline SVG (breakdown tables).
export function intervalGlyph(mean, low, high, color) {
  const w = 120;
  const x = (v) => 4 + v * (w - 8);
  const parts = [`<line x1="${x(0)}" x2="${x(1)}" y1="9" y2="9" stroke="#e5e7eb" stroke-width="2"/>`];
  if (low !== null && high !== null) {
    parts.push(
      `<line x1="${x(low)}" x2="${x(high)}" y1="9" y2="9" stroke="${color}" stroke-width="3" stroke-linecap="round" opacity="0.45"/>`,
    );
  }
  parts.push(`<circle cx="${x(mean)}" cy="9" r="4" fill="${color}"/>`);
  const span = h("span", { class: "glyph", "aria-hidden": "true" });
  // numbers only (formatted here), never text from the API
  span.innerHTML = `<svg width="${w}" height="18" viewBox="0 0 ${w} 18">${parts.join("")}</svg>`;
  return span;
}
