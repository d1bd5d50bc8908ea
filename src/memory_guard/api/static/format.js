// Numbers and dates in the page's language (the one i18n.js holds).
import { lang } from "./i18n.js";

export function locale() {
  return lang() === "en" ? "en-GB" : "fr-FR";
}

export function formatDateTime(iso) {
  if (!iso) return "—";
  const moment = new Date(iso);
  if (Number.isNaN(moment.getTime())) return String(iso);
  return new Intl.DateTimeFormat(locale(), { dateStyle: "short", timeStyle: "short" }).format(moment);
}

export function formatDay(day, style = "short") {
  // Days from the API are UTC calendar days: format them in UTC so they never shift by one.
  const moment = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(moment.getTime())) return String(day);
  const options =
    style === "short" ? { day: "2-digit", month: "2-digit", timeZone: "UTC" } : { dateStyle: "medium", timeZone: "UTC" };
  return new Intl.DateTimeFormat(locale(), options).format(moment);
}

export function formatNumber(value, digits = 0) {
  if (typeof value !== "number" || Number.isNaN(value)) return "—";
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits }).format(value);
}

export function formatPercent(ratio) {
  if (typeof ratio !== "number" || Number.isNaN(ratio)) return "—";
  return new Intl.NumberFormat(locale(), { style: "percent", maximumFractionDigits: 1 }).format(ratio);
}

export function formatMoney(amount, currency) {
  if (typeof amount !== "number") return "—";
  try {
    return new Intl.NumberFormat(locale(), { style: "currency", currency, maximumFractionDigits: 4 }).format(amount);
  } catch {
    // Not an ISO currency code: show it as the server wrote it.
    return `${formatNumber(amount, 4)} ${currency ?? ""}`.trim();
  }
}
