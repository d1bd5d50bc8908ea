// A hand-written FAQ entry: created validated, then opened.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { el, field, heading, input, notify, readable, splitTags } from "./dom.js";

export function render(root, context) {
  const question = el("textarea", { name: "question", id: "faq-question", rows: 3, required: true });
  const answer = el("textarea", { name: "answer", id: "faq-answer", rows: 8, required: true });
  const optional = (name, props = {}) =>
    field(t("common.optional", { label: t(`field.${name}`) }), input(name, { id: `faq-${name}`, ...props }));
  const submit = el("button", { type: "submit", class: "primary", id: "faq-submit", text: t("faq.submit") });
  const form = el(
    "form",
    { class: "card", id: "faq-form" },
    field(t("field.question"), question),
    field(t("field.answer"), answer),
    el("div", { class: "field-row" }, optional("agent"), optional("project"), optional("phase")),
    field(t("common.optional", { label: t("edit.tags") }), input("tags", { id: "faq-tags" })),
    el("div", { class: "actions" }, submit),
  );
  root.append(heading(t("faq.title")), el("p", { class: "muted", text: t("faq.help") }), form);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { question: question.value, answer: answer.value, tags: splitTags(form.elements.tags.value) };
    for (const name of ["agent", "project", "phase"]) {
      const value = form.elements[name].value.trim();
      if (value) body[name] = value;
    }
    submit.disabled = true;
    try {
      const created = await api.create(body);
      context.go(`#/entry/${created.id}`, { text: t("done.created", { id: created.id }), kind: "ok" });
    } catch (error) {
      notify(readable(error), "error");
      submit.disabled = false;
    }
  });
}
