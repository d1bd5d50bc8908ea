// The entries: semantic search, filters kept in the address, pages of 50 with "load more".
import { pagedList } from "./paged.js";
import { api, saveBlob } from "./api.js";
import { formatDateTime, formatNumber, label, plural, t } from "./i18n.js";
import { badge, el, field, heading, input, notify, readable, scopeText, select, table, truncate } from "./dom.js";

const FILTERS = ["query", "status", "source", "agent", "project", "phase", "tag", "created_from", "created_to"];
// What the export takes: the same selection, less the semantic query (an export is not a ranking).
const EXPORTED = FILTERS.filter((name) => name !== "query");
const PAGE_SIZE = 50;

function choices(group, values, all = "common.all") {
  return [["", t(all)], ...values.map((value) => [value, label(group, value)])];
}

function filterForm(values, context) {
  const query = input("query", { type: "search", id: "list-query", value: values.query });
  const form = el(
    "form",
    { class: "filters", id: "list-filters", role: "search" },
    el(
      "div",
      { class: "search-row" },
      field(t("list.query"), query, t("list.queryHint")),
      el("button", { type: "submit", class: "primary", id: "list-search", text: t("list.search") }),
    ),
    el(
      "div",
      { class: "filter-grid" },
      field(t("field.status"), select("status", choices("status", ["auto", "validated", "obsolete"]), values.status)),
      field(
        t("field.source"),
        select("source", choices("source", ["learned", "staff", "faq", "document"], "common.allFeminine"), values.source),
      ),
      field(t("field.agent"), input("agent", { value: values.agent })),
      field(t("field.project"), input("project", { value: values.project })),
      field(t("field.phase"), input("phase", { value: values.phase })),
      field(t("field.tag"), input("tag", { value: values.tag })),
      field(t("list.from"), input("created_from", { type: "date", value: values.created_from })),
      field(t("list.to"), input("created_to", { type: "date", value: values.created_to })),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      if (String(value).trim()) chosen.append(name, String(value).trim());
    }
    const text = chosen.toString();
    context.go(text ? `#/list?${text}` : "#/list");
  });
  return form;
}

// A search's results come best first, each with its closeness to the query (its cosine score).
function row(entry, context, searching) {
  const target = `#/entry/${entry.id}`;
  const link = el("a", { href: target, title: entry.question, text: truncate(entry.question, 120) });
  // The link is what the keyboard reaches (Enter opens it); a click anywhere on the row does the same.
  const onClick = (event) => {
    if (event.target !== link && !window.getSelection()?.toString()) context.go(target);
  };
  return el(
    "tr",
    { class: "clickable", dataset: { entryId: entry.id }, onClick },
    el("td", { class: "question" }, link),
    searching ? el("td", { class: "num score", text: formatNumber(entry.score, 2) }) : null,
    el("td", {}, badge("status", entry.status)),
    el("td", { text: label("source", entry.source) }),
    el("td", { text: scopeText(entry) }),
    el("td", { class: "num", text: entry.usage_count }),
    el("td", { class: "nowrap", text: formatDateTime(entry.updated_at) }),
  );
}

export async function exportSelection(params, button) {
  button.disabled = true;
  try {
    const blob = await api.exportJsonl(params);
    const lines = (await blob.text()).split("\n").filter((line) => line.trim()).length;
    saveBlob(blob, "memory-export.jsonl");
    notify(plural("export.done", lines));
  } catch (error) {
    notify(readable(error), "error");
  } finally {
    button.disabled = false;
  }
}

export function render(root, context) {
  const values = Object.fromEntries(FILTERS.map((name) => [name, context.params.get(name) ?? ""]));
  const exportButton = el("button", { type: "button", id: "list-export", text: t("list.export") });
  const reset = el("button", { type: "button", id: "list-reset", text: t("list.reset"), onClick: () => context.go("#/list") });
  exportButton.addEventListener("click", () =>
    exportSelection(Object.fromEntries(EXPORTED.map((name) => [name, values[name]])), exportButton),
  );
  const summary = el("p", { class: "muted", id: "list-summary", text: t("common.loading") });
  const problems = el("div");
  const searching = Boolean(values.query);
  const headers = ["question", "status", "source", "scope", "usage_count", "updated_at"].map((name) => t(`field.${name}`));
  if (searching) headers.splice(1, 0, t("list.score"));
  const results = table(headers, [], "entries");
  const body = results.querySelector("tbody");
  const more = el("button", { type: "button", id: "list-more", hidden: true, text: t("common.loadMore") });
  root.append(
    heading(t("list.title")),
    filterForm(values, context),
    el("div", { class: "toolbar" }, summary, el("div", { class: "actions" }, reset, exportButton)),
    problems,
    results,
    el("div", { class: "actions center" }, more),
  );

  pagedList({
    fetchPage: (cursor) => api.list({ ...values, limit: PAGE_SIZE, cursor }),
    render: (item) => row(item, context, searching),
    target: body,
    summary,
    problems,
    more,
    counted: (shown) => (shown ? plural("list.count", shown) : t("list.empty")),
  });
}
