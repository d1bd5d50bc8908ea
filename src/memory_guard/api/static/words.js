// What the server writes in English beside a stable code (the verifier's reasons, who made a change,
// what is wrong with an import line), said in the page's language; unknown codes keep the English.
import { coded, formatNumber, label, t } from "./i18n.js";

// The verifier's reason for a candidate or a served answer: `reason`, `reason_code`, `reason_params`.
export function reasonText(item) {
  if (!item?.reason) return "—";
  const params = { ...(item.reason_params ?? {}) };
  if (item.reason_code === "kind_of_answer") {
    params.stored = label("kind", params.stored);
    params.incoming = label("kind", params.incoming);
  }
  for (const side of ["stored", "incoming"]) {
    if (params[side] === "") params[side] = t("reason.nothing");
  }
  // The cross-encoder's cut-offs sit close to 1: two digits would hide which side a p is on.
  const digits = item.reason_code?.startsWith("cross_encoder") ? 4 : 2;
  if ("p" in params) params.p = formatNumber(Number(params.p), digits);
  return coded("reason", item.reason_code, params, item.reason);
}

// Who made a change or a review: the service's own actors and unnamed keys in words, a person's name
// as written.
export function actorText(actor, code, params) {
  if (!actor) return "—";
  const words = { ...(params ?? {}) };
  if (code === "key") words.role = label("role", words.role);
  return coded("actor", code, words, actor);
}

// One bad line of an import file: its number and what is wrong with it.
export function lineText(line) {
  return t("import.line", { line: line.line, message: coded("importError", line.code, line.params, line.message) });
}
