// The decisions-per-day chart: stacked SVG bars built node by node (no markup, no library), with a
// title and description for screen readers, a text legend and the figures in a table.
import { formatDay, formatNumber, label, plural, t } from "./i18n.js";
import { el, table, uid } from "./dom.js";

const NS = "http://www.w3.org/2000/svg";
const KINDS = ["direct", "assisted", "miss"];
// Wide and low: the chart spans the page under the figures and stays within a laptop screen.
const WIDTH = 1100;
const HEIGHT = 230;
const MARGIN = { top: 12, right: 12, bottom: 30, left: 44 };

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

function svgText(tag, attrs, text) {
  const node = svg(tag, attrs);
  node.textContent = text;
  return node;
}

// The smallest of 1, 2, 5 x 10^k at or above the value, so that the axis reads in round numbers.
function roundUp(value) {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= value);
}

function count(day, kind) {
  const value = Number(day[kind]);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

function drawing(days, titleText, descText) {
  const titleId = uid("chart-title");
  const descId = uid("chart-desc");
  const chart = svg("svg", {
    class: "chart",
    id: "stats-chart",
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-labelledby": `${titleId} ${descId}`,
  });
  chart.append(svgText("title", { id: titleId }, titleText), svgText("desc", { id: descId }, descText));
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const top = roundUp(Math.max(...days.map((day) => KINDS.reduce((sum, kind) => sum + count(day, kind), 0)), 1));
  const y = (value) => MARGIN.top + plotHeight - (value / top) * plotHeight;

  // Counts are whole: a half-way line is drawn only when it falls on a whole number.
  const ticks = top % 2 === 0 ? [0, top / 2, top] : [0, top];
  for (const tick of ticks) {
    chart.append(
      svg("line", { class: "grid", x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(tick), y2: y(tick) }),
      svgText("text", { class: "axis", x: MARGIN.left - 6, y: y(tick) + 4, "text-anchor": "end" }, formatNumber(tick)),
    );
  }
  const slot = plotWidth / days.length;
  const barWidth = Math.min(40, Math.max(2, slot * 0.7));
  const labelEvery = Math.ceil(days.length / 10);
  days.forEach((day, index) => {
    const x = MARGIN.left + index * slot + (slot - barWidth) / 2;
    const bar = svg("g", { class: "bar" });
    const words = { day: formatDay(day.day, "long") };
    let base = 0;
    for (const kind of KINDS) {
      const value = count(day, kind);
      words[kind] = plural(`count.${kind}`, value);
      if (!value) continue;
      bar.append(
        svg("rect", { class: `segment ${kind}`, x, y: y(base + value), width: barWidth, height: y(base) - y(base + value) }),
      );
      base += value;
    }
    // The hover text of the bar; the same figures are in the table below for keyboard and screen readers.
    bar.prepend(svgText("title", {}, t("chart.bar", words)));
    chart.append(bar);
    // Counted back from the last day, so that today always has its label.
    if ((days.length - 1 - index) % labelEvery === 0) {
      chart.append(
        svgText("text", { class: "axis", x: x + barWidth / 2, y: HEIGHT - 10, "text-anchor": "middle" }, formatDay(day.day)),
      );
    }
  });
  return chart;
}

export function decisionsChart(timeline) {
  const days = Array.isArray(timeline) ? timeline.filter((day) => day && day.day) : [];
  if (!days.length) return el("p", { class: "muted", id: "chart-empty", text: t("chart.empty") });
  const range = { from: formatDay(days[0].day, "long"), to: formatDay(days[days.length - 1].day, "long") };
  const totals = Object.fromEntries(KINDS.map((kind) => [kind, days.reduce((sum, day) => sum + count(day, kind), 0)]));
  const legend = el(
    "ul",
    { class: "legend" },
    KINDS.map((kind) =>
      el("li", {}, el("span", { class: `swatch ${kind}`, "aria-hidden": "true" }), t("chart.legend", { kind: label("decision", kind), n: formatNumber(totals[kind]) })),
    ),
  );
  const rows = days.map((day) =>
    el("tr", {}, el("td", { text: formatDay(day.day, "long") }), KINDS.map((kind) => el("td", { class: "num", text: count(day, kind) }))),
  );
  const headers = [t("col.day"), ...KINDS.map((kind) => label("decision", kind))];
  const nothing = KINDS.every((kind) => totals[kind] === 0);
  return el(
    "figure",
    { class: "chart-figure" },
    nothing ? el("p", { class: "muted", text: t("chart.none") }) : null,
    drawing(days, t("chart.title"), t("chart.desc", range)),
    el("figcaption", {}, legend),
    el("details", {}, el("summary", { text: t("chart.data") }), table(headers, rows, "compact")),
  );
}
