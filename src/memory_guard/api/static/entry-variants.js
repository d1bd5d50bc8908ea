// The question variants of one entry: other wordings of its question, matched as the question is. Each
// is listed with what staff can do to it (vouch for a learned one, remove it), under a form to add one.
import { api } from "./api.js";
import { formatDateTime, formatNumber, label, t } from "./i18n.js";
import { actionRunner, badge, confirmDialog, el, field, heading, notify, readable, table, truncate } from "./dom.js";

function variantRow(entry, variant, context) {
  const buttons = [];
  const run = actionRunner(buttons, context);
  const wording = truncate(variant.question, 60);
  if (variant.status === "learned") {
    buttons.push(
      el("button", {
        type: "button",
        class: "small primary",
        dataset: { validateVariant: variant.id },
        "aria-label": t("variants.validateName", { question: wording }),
        text: t("variants.validate"),
        onClick: () => run(() => api.validateVariant(entry.id, variant.id), t("done.variantValidated")),
      }),
    );
  }
  buttons.push(
    el("button", {
      type: "button",
      class: "small danger",
      dataset: { removeVariant: variant.id },
      "aria-label": t("variants.removeName", { question: wording }),
      text: t("variants.remove"),
      onClick: async () => {
        if (await confirmDialog(t("confirm.removeVariant", { question: wording }), t("variants.remove"))) {
          await run(() => api.removeVariant(entry.id, variant.id), t("done.variantRemoved"));
        }
      },
    }),
  );
  return el(
    "tr",
    { dataset: { variantId: variant.id, status: variant.status } },
    el("td", { class: "variant-question", text: variant.question }),
    el("td", {}, badge("variant", variant.status)),
    el("td", { text: label("origin", variant.origin) }),
    el("td", { class: "num", text: formatNumber(variant.confirmations) }),
    el("td", { class: "nowrap", text: formatDateTime(variant.created_at) }),
    el("td", {}, el("div", { class: "row-actions" }, buttons)),
  );
}

function addForm(entry, context) {
  const question = el("textarea", { id: "variant-question", name: "question", rows: 2, maxlength: 16000 });
  const add = el("button", { type: "submit", id: "variant-add", text: t("variants.add") });
  const form = el("form", { id: "variant-form", class: "variant-form" }, field(t("variants.new"), question), add);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text) {
      notify(t("variants.blank"), "error");
      question.focus();
      return;
    }
    add.disabled = true;
    try {
      await api.addVariant(entry.id, text);
      context.refresh({ text: t("done.variantAdded"), kind: "ok" });
    } catch (error) {
      notify(readable(error), "error");
      add.disabled = false;
    }
  });
  return form;
}

export function variantsSection(entry, context) {
  const variants = entry.variants ?? [];
  const headers = [
    t("field.question"),
    t("field.status"),
    t("col.origin"),
    t("col.confirmations"),
    t("field.created_at"),
    t("col.details"),
  ];
  return el(
    "section",
    { class: "variants", id: "entry-variants" },
    heading(t("variants.title"), "h3"),
    el("p", { class: "hint", text: t("variants.hint") }),
    variants.length
      ? table(headers, variants.map((variant) => variantRow(entry, variant, context)), "compact variants-table")
      : el("p", { class: "muted", id: "variants-empty", text: t("variants.empty") }),
    addForm(entry, context),
  );
}
