// The history (audit events) and the usage of one entry. Each loads on its own: one that fails shows
// why without taking the rest of the page with it.
import { api } from "./api.js";
import { formatDateTime, formatNumber, label, plural, t } from "./i18n.js";
import { badge, confirmDialog, el, heading, notify, readable, table, truncate } from "./dom.js";
import { actorText } from "./words.js";

const COMPARED = ["question", "answer", "tags", "expires_at", "source", "agent", "project", "phase"];

function unavailable(error) {
  return el("p", { class: "error", role: "alert", text: t("error.unavailable", { message: readable(error) }) });
}

function changed(before, after) {
  return COMPARED.filter((name) => JSON.stringify(before[name] ?? null) !== JSON.stringify(after[name] ?? null));
}

function version(title, text) {
  return el("div", { class: "version" }, el("h4", { text: title }), el("div", { class: "text-block", text }));
}

// What an event did, in words: the status move, the fields changed, and the old and new texts on demand.
export function eventDetails(event) {
  const { before, after } = event;
  if (!before || !after) {
    const shown = after ?? before;
    return shown ? [truncate(shown.question, 140)] : [];
  }
  const parts = [];
  if (before.status !== after.status) {
    parts.push(
      el("p", {}, t("history.status", { from: label("status", before.status), to: label("status", after.status) })),
    );
  }
  const fields = changed(before, after);
  if (fields.length) {
    parts.push(el("p", {}, t("history.changed", { fields: fields.map((name) => t(`field.${name}`)).join(", ") })));
  }
  const texts = ["question", "answer"].filter((name) => fields.includes(name));
  if (texts.length) {
    parts.push(
      el(
        "details",
        {},
        el("summary", { text: t("history.compare") }),
        texts.map((name) =>
          el(
            "div",
            { class: "compare" },
            version(`${t(`field.${name}`)} · ${t("history.before")}`, before[name]),
            version(`${t(`field.${name}`)} · ${t("history.after")}`, after[name]),
          ),
        ),
      ),
    );
  }
  return parts;
}

// What a restore brings back, shown in its confirmation: the status, the question and the answer.
function restorePreview(before, gone) {
  return [
    el(
      "dl",
      { class: "fields restore-preview" },
      el("dt", { text: t("field.status") }),
      el("dd", {}, badge("status", before.status)),
      el("dt", { text: t("field.question") }),
      el("dd", { text: truncate(before.question, 160) }),
      el("dt", { text: t("field.answer") }),
      el("dd", { class: "preview-answer", text: truncate(before.answer, 280) }),
    ),
    gone ? el("p", { class: "muted", text: t("restore.comeback") }) : null,
    el("p", { class: "muted", text: t("restore.note") }),
  ];
}

// Undoes one recorded change after a confirmation, then opens the entry as it now is. Only an event
// with a `before` snapshot has one (a creation or an import has nothing before it), and not a question
// variant's event, whose snapshots are the variant's (the service refuses to restore them).
export function restoreButton(event, context, gone = false) {
  if (!event.before || event.action.endsWith("_variant")) return null;
  const action = label("action", event.action);
  const at = formatDateTime(event.at);
  const button = el("button", {
    type: "button",
    class: "small",
    dataset: { restoreEvent: event.id },
    "aria-label": t("restore.name", { action, at }),
    text: t("restore.button"),
  });
  button.addEventListener("click", async () => {
    const id = event.entry_id;
    const details = restorePreview(event.before, gone);
    if (!(await confirmDialog(t("confirm.restore", { id, action, at }), t("restore.button"), { details, kind: "primary" }))) {
      return;
    }
    button.disabled = true;
    try {
      const entry = await api.restore(event.id);
      const back = entry?.id ?? id;
      context.go(`#/entry/${back}`, { text: t("done.restored", { id: back }), kind: "ok" });
    } catch (error) {
      notify(readable(error), "error");
      button.disabled = false;
    }
  });
  return el("div", { class: "row-actions" }, button);
}

function historyTable(events, context, gone) {
  if (!events.length) return el("p", { class: "muted", text: t("history.empty") });
  const headers = [t("col.at"), t("col.actor"), t("col.action"), t("col.details")];
  const rows = events.map((event) =>
    el(
      "tr",
      { dataset: { action: event.action, eventId: event.id } },
      el("td", { class: "nowrap", text: formatDateTime(event.at) }),
      el("td", { class: "actor", text: actorText(event.actor, event.actor_code, event.actor_params) }),
      el("td", {}, badge("action", event.action)),
      el("td", {}, eventDetails(event), restoreButton(event, context, gone)),
    ),
  );
  return table(headers, rows, "history-table");
}

// The events of an entry, newest first; `events` given when the caller already has them (the page of
// a deleted entry), which also says that the entry is gone.
export function historySection(id, context, events = null) {
  const section = el("section", { class: "history", id: "entry-history" }, heading(t("history.title"), "h3"));
  if (events) {
    section.append(historyTable(events, context, true));
    return section;
  }
  const loading = el("p", { class: "muted", text: t("common.loading") });
  section.append(loading);
  api.history(id).then(
    (body) => loading.replaceWith(historyTable(body.items ?? [], context, false)),
    (error) => loading.replaceWith(unavailable(error)),
  );
  return section;
}

export function usageSection(id) {
  const section = el("section", { class: "usage", id: "entry-usage" }, heading(t("usage.title"), "h3"));
  const loading = el("p", { class: "muted", text: t("common.loading") });
  section.append(loading);
  api.usage(id).then(
    (usage) => {
      const lookups = usage.lookups ?? {};
      const summary = el(
        "dl",
        { class: "fields" },
        el("dt", { text: t("usage.lookups") }),
        el("dd", {
          text: t("usage.lookupsValue", {
            direct: plural("count.direct", lookups.direct ?? 0),
            assisted: plural("count.assisted", lookups.assisted ?? 0),
          }),
        }),
      );
      const variantHits = usage.variant_hits;
      if (variantHits?.direct) {
        // Wordings learned by the service serve under their own rules: their hits and errors apart.
        summary.append(
          el("dt", { text: t("usage.variantHits") }),
          el("dd", { text: t("usage.variantHitsValue", variantHits) }),
        );
      }
      const recent = usage.recent ?? [];
      const parts = [summary];
      if (!recent.length) parts.push(el("p", { class: "muted", text: t("usage.empty") }));
      else {
        const headers = [t("col.at"), t("col.decision"), t("col.role"), t("col.score"), t("field.question")];
        const rows = recent.map((lookup) =>
          el(
            "tr",
            { dataset: { lookupId: lookup.lookup_id, role: lookup.role } },
            el("td", { class: "nowrap", text: formatDateTime(lookup.at) }),
            el("td", {}, badge("decision", lookup.decision)),
            el("td", { text: label("usage.role", lookup.role) }),
            el("td", { class: "num", text: formatNumber(lookup.score, 3) }),
            el("td", { title: lookup.question, text: truncate(lookup.question, 160) }),
          ),
        );
        parts.push(el("h4", { text: t("usage.recent") }), table(headers, rows, "compact"));
      }
      loading.replaceWith(...parts);
    },
    (error) => loading.replaceWith(unavailable(error)),
  );
  return section;
}
