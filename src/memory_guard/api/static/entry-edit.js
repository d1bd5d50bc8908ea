// The edit form of an entry: only what the person changed is sent, so that an untouched expiry date
// (shown from the default retention) is not turned into an explicit one.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { el, field, heading, input, notify, readable, splitTags } from "./dom.js";

function dayOf(iso) {
  return typeof iso === "string" && /^\d{4}-\d{2}-\d{2}/.test(iso) ? iso.slice(0, 10) : "";
}

function sameTags(left, right) {
  return left.length === right.length && left.every((tag, index) => tag === right[index]);
}

export function editForm(entry, { onSaved, onCancel }) {
  const question = el("textarea", { name: "question", id: "edit-question", rows: 3, required: true });
  const answer = el("textarea", { name: "answer", id: "edit-answer", rows: 10, required: true });
  // Set as properties: a textarea's text is its value, never markup.
  question.value = entry.question;
  answer.value = entry.answer;
  const tags = input("tags", { id: "edit-tags", value: (entry.tags ?? []).join(", ") });
  const initialDay = dayOf(entry.expires_at);
  const expires = input("expires_at", { type: "date", id: "edit-expires", value: initialDay });
  const save = el("button", { type: "submit", class: "primary", id: "edit-save", text: t("common.save") });
  const cancel = el("button", { type: "button", id: "edit-cancel", text: t("common.cancel"), onClick: onCancel });
  const form = el(
    "form",
    { class: "card edit", id: "edit-form", "aria-labelledby": "edit-title" },
    heading(t("edit.title"), "h3"),
    field(t("field.question"), question),
    field(t("field.answer"), answer),
    el(
      "div",
      { class: "field-row" },
      field(t("edit.tags"), tags),
      field(t("edit.expires"), expires, t("edit.expiresHint")),
    ),
    el("div", { class: "actions" }, save, cancel),
  );
  form.querySelector("h3").id = "edit-title";

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const changes = {};
    if (question.value.trim() && question.value !== entry.question) changes.question = question.value;
    if (answer.value.trim() && answer.value !== entry.answer) changes.answer = answer.value;
    const newTags = splitTags(tags.value);
    if (!sameTags(newTags, entry.tags ?? [])) changes.tags = newTags;
    if (expires.value !== initialDay) {
      // The end of that day (UTC): the entry is still served on the day written.
      changes.expires_at = expires.value ? `${expires.value}T23:59:59Z` : null;
    }
    if (!Object.keys(changes).length) {
      notify(t("edit.nothing"), "info");
      return;
    }
    save.disabled = true;
    try {
      onSaved(await api.patch(entry.id, changes));
    } catch (error) {
      notify(readable(error), "error");
      save.disabled = false;
    }
  });
  return form;
}
