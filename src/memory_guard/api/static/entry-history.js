// The history (audit events) and the usage of one entry. Each loads on its own: one that fails shows
// why without taking the rest of the page with it.
import { api } from "./api.js";
import { formatDateTime, formatNumber, label, t } from "./i18n.js";
import { badge, el, heading, readable, table, truncate } from "./dom.js";

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

export function historySection(id) {
  const section = el("section", { class: "history", id: "entry-history" }, heading(t("history.title"), "h3"));
  const loading = el("p", { class: "muted", text: t("common.loading") });
  section.append(loading);
  api.history(id).then(
    (body) => {
      const events = body.items ?? [];
      if (!events.length) return loading.replaceWith(el("p", { class: "muted", text: t("history.empty") }));
      const headers = [t("col.at"), t("col.actor"), t("col.action"), t("col.details")];
      const rows = events.map((event) =>
        el(
          "tr",
          { dataset: { action: event.action } },
          el("td", { class: "nowrap", text: formatDateTime(event.at) }),
          el("td", { text: event.actor ?? "—" }),
          el("td", {}, badge("action", event.action)),
          el("td", {}, eventDetails(event)),
        ),
      );
      loading.replaceWith(table(headers, rows, "history-table"));
    },
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
        el("dd", { text: t("usage.lookupsValue", { direct: lookups.direct ?? 0, assisted: lookups.assisted ?? 0 }) }),
      );
      const recent = usage.recent ?? [];
      const parts = [summary];
      if (!recent.length) parts.push(el("p", { class: "muted", text: t("usage.empty") }));
      else {
        const headers = [t("col.at"), t("col.decision"), t("col.score"), t("field.question")];
        const rows = recent.map((lookup) =>
          el(
            "tr",
            {},
            el("td", { class: "nowrap", text: formatDateTime(lookup.at) }),
            el("td", {}, badge("decision", lookup.decision)),
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
