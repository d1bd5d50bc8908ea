// One entry: every field, the staff actions on it, its question variants, its history and its usage.
import { api } from "./api.js";
import { editForm } from "./entry-edit.js";
import { historySection, usageSection } from "./entry-history.js";
import { variantsSection } from "./entry-variants.js";
import { formatDateTime, formatNumber, label, t } from "./i18n.js";
import { actionRunner, badge, confirmDialog, el, errorBox, heading, notify, readable, scopeText } from "./dom.js";

function details(entry) {
  const rows = [
    ["id", entry.id],
    ["status", label("status", entry.status)],
    ["source", label("source", entry.source)],
    ["scope", scopeText(entry)],
    ["tags", entry.tags?.length ? entry.tags.join(", ") : "—"],
    ["usage_count", formatNumber(entry.usage_count)],
    ["created_at", formatDateTime(entry.created_at)],
    ["updated_at", formatDateTime(entry.updated_at)],
    ["last_used_at", formatDateTime(entry.last_used_at)],
    ["expires_at", formatDateTime(entry.expires_at)],
    ["embedding_model", entry.embedding_model || "—"],
  ];
  const list = el(
    "dl",
    { class: "fields", id: "entry-fields" },
    rows.map(([name, value]) => [el("dt", { text: t(`field.${name}`) }), el("dd", { dataset: { field: name }, text: value })]),
  );
  const metadata = entry.metadata && Object.keys(entry.metadata).length ? entry.metadata : null;
  if (metadata) {
    list.append(
      el("dt", { text: t("field.metadata") }),
      el("dd", {}, el("pre", { class: "metadata", text: JSON.stringify(metadata, null, 2) })),
    );
  }
  return list;
}

function actions(entry, context, editSlot) {
  const id = entry.id;
  const buttons = [];
  const run = actionRunner(buttons, context);
  const validate = el("button", {
    type: "button",
    id: "entry-validate",
    class: "primary",
    text: t("entry.validate"),
    onClick: () => run(() => api.validate(id), t("done.validated", { id })),
  });
  const edit = el("button", {
    type: "button",
    id: "entry-edit",
    text: t("entry.edit"),
    "aria-expanded": "false",
    "aria-controls": "entry-edit-slot",
  });
  const obsolete = el("button", {
    type: "button",
    id: "entry-obsolete",
    text: t("entry.obsolete"),
    onClick: async () => {
      if (await confirmDialog(t("confirm.obsolete", { id }), t("entry.obsolete"))) {
        await run(() => api.obsolete(id), t("done.obsolete", { id }));
      }
    },
  });
  const remove = el("button", {
    type: "button",
    id: "entry-delete",
    class: "danger",
    text: t("entry.delete"),
    onClick: async () => {
      if (!(await confirmDialog(t("confirm.delete", { id }), t("entry.delete")))) return;
      buttons.forEach((button) => (button.disabled = true));
      try {
        await api.remove(id);
        context.go("#/list", { text: t("done.deleted", { id }), kind: "ok" });
      } catch (error) {
        notify(readable(error), "error");
        buttons.forEach((button) => (button.disabled = false));
      }
    },
  });
  // Nothing to do twice: a validated entry is not validated again, an obsolete one not retired again.
  validate.dataset.off = String(entry.status === "validated");
  obsolete.dataset.off = String(entry.status === "obsolete");
  validate.disabled = entry.status === "validated";
  obsolete.disabled = entry.status === "obsolete";
  edit.addEventListener("click", () => {
    const closing = editSlot.childElementCount > 0;
    edit.setAttribute("aria-expanded", String(!closing));
    if (closing) return editSlot.replaceChildren();
    const close = () => {
      editSlot.replaceChildren();
      edit.setAttribute("aria-expanded", "false");
      edit.focus();
    };
    editSlot.replaceChildren(
      editForm(entry, {
        onSaved: (saved) => context.refresh({ text: t("done.saved", { id: saved.id }), kind: "ok" }),
        onCancel: close,
      }),
    );
    editSlot.querySelector("textarea")?.focus();
  });
  buttons.push(validate, edit, obsolete, remove);
  return el("div", { class: "actions entry-actions" }, buttons);
}

// A deleted or pruned entry keeps its history: shown here, with what can bring the entry back.
async function showGone(root, id, context) {
  let events;
  try {
    events = (await api.history(id)).items ?? [];
  } catch {
    return; // never existed (or the history is out of reach): the error above says enough
  }
  if (!events.length) return;
  root.append(
    el(
      "div",
      { class: "gone", id: "entry-gone" },
      el("p", { text: t("entry.gone") }),
      el("p", {}, el("a", { href: `#/audit?entry_id=${id}`, text: t("entry.auditLink") })),
    ),
    historySection(id, context, events),
  );
}

export async function render(root, context) {
  const id = Number(context.arg);
  root.append(el("p", { class: "back" }, el("a", { href: "#/list", text: t("entry.back") })));
  if (!Number.isInteger(id) || id < 1) {
    root.append(heading(t("view.unknown")), el("p", { class: "error", role: "alert", text: t("entry.bad") }));
    return;
  }
  const title = heading(t("entry.title", { id }));
  const loading = el("p", { class: "muted", text: t("common.loading") });
  root.append(title, loading);
  let entry;
  try {
    entry = await api.get(id);
  } catch (error) {
    loading.replaceWith(errorBox(error));
    if (error.status === 404) await showGone(root, id, context);
    return;
  }
  title.append(" ", badge("status", entry.status));
  const editSlot = el("div", { id: "entry-edit-slot" });
  const main = el(
    "div",
    { class: "entry-main" },
    el("h3", { text: t("field.question") }),
    el("p", { class: "text-block question", id: "entry-question", text: entry.question }),
    el("h3", { text: t("field.answer") }),
    el("div", { class: "text-block answer", id: "entry-answer", text: entry.answer }),
    actions(entry, context, editSlot),
    editSlot,
  );
  const side = el(
    "aside",
    { class: "entry-side", "aria-label": t("entry.details") },
    el("h3", { text: t("entry.details") }),
    details(entry),
  );
  loading.replaceWith(
    el("div", { class: "entry-layout" }, main, side),
    variantsSection(entry, context),
    usageSection(id),
    historySection(id, context),
  );
}
