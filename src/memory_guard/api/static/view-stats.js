// What the memory holds and what it saved: counts, decisions, savings, accuracy, and the chart per day.
import { api } from "./api.js";
import { decisionsChart } from "./chart.js";
import { formatMoney, formatNumber, formatPercent, label, plural, t } from "./i18n.js";
import { el, errorBox, field, heading, select } from "./dom.js";

const PERIODS = [7, 30, 90];
const SOURCES = ["learned", "staff", "faq", "document"];

function card(title, value, name, ...extra) {
  return el(
    "div",
    { class: "card stat", dataset: { stat: name } },
    el("h3", { text: title }),
    value === null ? null : el("p", { class: "stat-value", text: value }),
    extra,
  );
}

function breakdown(group, counts, names) {
  return el(
    "ul",
    { class: "breakdown" },
    names.map((name) =>
      el("li", { dataset: { count: `${group}.${name}` } }, el("span", { text: label(group, name) }), el("strong", { text: formatNumber(counts?.[name] ?? 0) })),
    ),
  );
}

// The share of reviewed served answers that were right, with the interval turned the same way round.
function accuracy(served, title = t("stats.accuracy"), key = "accuracy") {
  if (!served || !served.reviewed || typeof served.wrong_rate !== "number") {
    return card(title, "—", key, el("p", { class: "muted", text: t("stats.noReview") }));
  }
  const [low, high] = Array.isArray(served.wrong_rate_ci95) ? served.wrong_rate_ci95 : [null, null];
  const detail = t("stats.accuracyDetail", {
    reviewed: plural("count.reviewed", served.reviewed),
    wrong: plural("count.wrong", served.wrong),
    low: typeof high === "number" ? formatPercent(1 - high) : "—",
    high: typeof low === "number" ? formatPercent(1 - low) : "—",
  });
  return card(title, formatPercent(1 - served.wrong_rate), key, el("p", { class: "muted", text: detail }));
}

function cost(stats) {
  const avoided = stats.cost_avoided;
  if (!avoided || typeof avoided.amount !== "number") return card(t("stats.cost"), "—", "cost");
  const price = formatMoney(avoided.price_per_1k_tokens, avoided.currency);
  return card(
    t("stats.cost"),
    formatMoney(avoided.amount, avoided.currency),
    "cost",
    el("p", { class: "muted", text: t("stats.costPrice", { price }) }),
  );
}

function figures(stats) {
  const entries = stats.entries ?? {};
  const lookups = stats.lookups ?? {};
  return el(
    "div",
    { class: "stat-grid", id: "stats-figures" },
    card(t("stats.entries"), formatNumber(entries.total), "entries", breakdown("status", entries, ["auto", "validated", "obsolete"])),
    card(t("stats.bySource"), null, "entries_by_source", breakdown("source", stats.entries_by_source, SOURCES)),
    card(t("stats.lookups"), formatNumber(lookups.total), "lookups", breakdown("decision", lookups, ["direct", "assisted", "miss"])),
    card(t("stats.hitRate"), formatPercent(stats.hit_rate), "hit_rate"),
    card(t("stats.avoided"), formatNumber(stats.llm_calls_avoided), "llm_calls_avoided"),
    card(t("stats.tokens"), formatNumber(stats.tokens_saved), "tokens_saved"),
    cost(stats),
    accuracy(stats.served),
    // Learned wordings serve under their own rules: their accuracy apart.
    accuracy(stats.served?.through_variants, t("stats.variantAccuracy"), "variant_accuracy"),
  );
}

export async function render(root, context) {
  const asked = Number(context.params.get("days"));
  const days = PERIODS.includes(asked) ? asked : 30;
  const period = select(
    "days",
    PERIODS.map((n) => [String(n), t("stats.daysN", { n })]),
    String(days),
  );
  period.id = "stats-days";
  period.addEventListener("change", () => context.go(`#/stats?days=${period.value}`));
  const body = el("div", {}, el("p", { class: "muted", text: t("common.loading") }));
  root.append(
    el("div", { class: "view-head" }, heading(t("stats.title")), field(t("stats.days"), period)),
    body,
  );
  try {
    const stats = await api.stats(days);
    body.replaceChildren(
      figures(stats),
      el("section", { class: "card chart-card" }, el("h3", { text: t("chart.title") }), decisionsChart(stats.timeline)),
    );
  } catch (error) {
    body.replaceChildren(errorBox(error));
  }
}
