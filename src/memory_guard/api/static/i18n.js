// The page's words, French first (the teams using it work in French).
import { EN } from "./i18n-en.js";
import { FR } from "./i18n-fr.js";
import { formatNumber, locale } from "./format.js";

const WORDS = { fr: FR, en: EN };
export const LANGUAGES = [
  ["fr", "Français"],
  ["en", "English"],
];
// Only the language is remembered across visits; the key never leaves sessionStorage.
const LANG_SLOT = "memory-guard.lang";

let current = localStorage.getItem(LANG_SLOT) === "en" ? "en" : "fr";

export function lang() {
  return current;
}

export function setLang(code) {
  current = code === "en" ? "en" : "fr";
  localStorage.setItem(LANG_SLOT, current);
  document.documentElement.lang = current;
}

export function t(key, params = {}) {
  const text = WORDS[current][key] ?? FR[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

// A value from the API in words (status, source, decision, action), or the value itself when unknown.
export function label(group, value) {
  const key = `${group}.${value}`;
  return key in FR ? t(key) : String(value ?? "");
}

// Words the server sends in English with a stable code beside them: said from the code in the page's
// language, or as the server wrote them when the code is one this page does not know.
export function coded(group, code, params, english) {
  const key = `${group}.${code}`;
  return code && key in FR ? t(key, params ?? {}) : String(english ?? "");
}

// A count with its noun in the right number: `${key}.one`, `${key}.other` (French says "0 entrée",
// "1 entrée", "2 entrées"; English "0 entries"). {n} is the formatted count.
export function plural(key, n, params = {}) {
  const rule = new Intl.PluralRules(locale()).select(Number(n) || 0);
  const chosen = `${key}.${rule}` in FR ? `${key}.${rule}` : `${key}.other`;
  return t(chosen, { ...params, n: formatNumber(Number(n) || 0) });
}

// Numbers and dates in the page's language live in format.js; given from here too, where the words are.
export { formatDateTime, formatDay, formatMoney, formatNumber, formatPercent } from "./format.js";
