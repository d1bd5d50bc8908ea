// "What would the guard do?": the decision for a question and every candidate with the verifier's word.
import { api } from "./api.js";
import { formatNumber, t } from "./i18n.js";
import { badge, el, errorBox, field, heading, input, table } from "./dom.js";
import { reasonText } from "./words.js";

// The last try, so that coming back from an entry shows it again.
let last = null;

function candidateRow(candidate) {
  const link = el("a", { href: `#/entry/${candidate.entry_id}`, text: `#${candidate.entry_id}` });
  return el(
    "tr",
    { class: candidate.served ? "served" : "", dataset: { entryId: candidate.entry_id } },
    el("td", {}, link),
    el("td", { class: "num", text: formatNumber(candidate.score, 4) }),
    el("td", { class: "matched", text: candidate.matched_question }),
    el("td", {}, candidate.verdict ? badge("verdict", candidate.verdict) : "—"),
    el("td", { class: "reason", title: candidate.reason ?? "", text: reasonText(candidate) }),
    el("td", { class: "num", text: formatNumber(candidate.probability, 3) }),
    el("td", { class: "num cross-encoder", text: formatNumber(candidate.cross_encoder_probability, 4) }),
    el("td", { text: candidate.served ? t("common.yes") : t("common.no") }),
  );
}

function result(body) {
  const parts = [
    el(
      "p",
      { class: "decision", id: "lookup-decision" },
      `${t("lookup.decision")} `,
      badge("decision", body.decision),
      " ",
      body.served_entry_id ? t("lookup.served", { id: body.served_entry_id }) : t("lookup.noServed"),
    ),
  ];
  const candidates = body.candidates ?? [];
  if (!candidates.length) parts.push(el("p", { class: "muted", text: t("lookup.none") }));
  else {
    const headers = [
      "col.entry", "col.score", "col.matched", "col.verdict", "col.reason", "col.probability", "col.crossEncoder",
      "col.served",
    ];
    parts.push(table(headers.map((key) => t(key)), candidates.map(candidateRow), "candidates"));
  }
  return parts;
}

export function render(root) {
  const question = el("textarea", { name: "question", id: "lookup-question", rows: 3, required: true });
  question.value = last?.fields.question ?? "";
  const optional = (name) =>
    field(t("common.optional", { label: t(`field.${name}`) }), input(name, { value: last?.fields[name] ?? "" }));
  const submit = el("button", { type: "submit", class: "primary", id: "lookup-submit", text: t("lookup.submit") });
  const form = el(
    "form",
    { class: "card", id: "lookup-form" },
    field(t("field.question"), question),
    el("div", { class: "field-row" }, optional("agent"), optional("project"), optional("phase")),
    el("div", { class: "actions" }, submit),
  );
  const output = el("div", { id: "lookup-result", "aria-live": "polite" });
  root.append(heading(t("lookup.title")), el("p", { class: "muted", text: t("lookup.help") }), form, output);
  if (last?.body) output.replaceChildren(...result(last.body));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const fields = {};
    for (const [name, value] of new FormData(form)) {
      if (String(value).trim()) fields[name] = String(value).trim();
    }
    submit.disabled = true;
    output.replaceChildren(el("p", { class: "muted", text: t("common.loading") }));
    try {
      const body = await api.lookup(fields);
      last = { fields, body };
      output.replaceChildren(...result(body));
    } catch (error) {
      output.replaceChildren(errorBox(error));
    } finally {
      submit.disabled = false;
    }
  });
}
