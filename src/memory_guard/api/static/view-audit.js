// The audit log: every staff (and learning, import, feedback) action, newest first, page by page.
import { api } from "./api.js";
import { eventDetails, restoreButton } from "./entry-history.js";
import { formatDateTime, label, t } from "./i18n.js";
import { badge, el, errorBox, field, heading, input, select, table } from "./dom.js";
import { actorText } from "./words.js";

const ACTIONS = ["create", "edit", "refresh", "validate", "obsolete", "delete", "prune", "import", "feedback", "restore"];
const PAGE_SIZE = 50;

function row(event, context) {
  return el(
    "tr",
    { dataset: { eventId: event.id, action: event.action } },
    el("td", { class: "nowrap", text: formatDateTime(event.at) }),
    el("td", { class: "actor", text: actorText(event.actor, event.actor_code, event.actor_params) }),
    el("td", {}, badge("action", event.action)),
    el("td", {}, el("a", { href: `#/entry/${event.entry_id}`, text: `#${event.entry_id}` })),
    el("td", {}, eventDetails(event), restoreButton(event, context)),
  );
}

function filterForm(values, context) {
  const action = select("action", [["", t("common.allFeminine")], ...ACTIONS.map((name) => [name, label("action", name)])], values.action);
  const entry = input("entry_id", { type: "number", min: 1, inputmode: "numeric", value: values.entry_id });
  const form = el(
    "form",
    { class: "filters inline", id: "audit-filters" },
    field(t("col.action"), action),
    field(t("audit.entry"), entry),
    el("button", { type: "submit", text: t("audit.filter") }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = new URLSearchParams();
    if (action.value) chosen.set("action", action.value);
    if (entry.value) chosen.set("entry_id", entry.value);
    const text = chosen.toString();
    context.go(text ? `#/audit?${text}` : "#/audit");
  });
  return form;
}

export function render(root, context) {
  const values = { action: context.params.get("action") ?? "", entry_id: context.params.get("entry_id") ?? "" };
  const headers = [t("col.at"), t("col.actor"), t("col.action"), t("col.entry"), t("col.details")];
  const results = table(headers, [], "audit-table");
  const body = results.querySelector("tbody");
  const summary = el("p", { class: "muted", id: "audit-summary", text: t("common.loading") });
  const problems = el("div");
  const more = el("button", { type: "button", id: "audit-more", hidden: true, text: t("common.loadMore") });
  root.append(heading(t("audit.title")), filterForm(values, context), summary, problems, results, el("div", { class: "actions center" }, more));

  let cursor = null;
  let shown = 0;
  async function load() {
    more.disabled = true;
    try {
      const page = await api.audit({ ...values, limit: PAGE_SIZE, cursor });
      body.append(...(page.items ?? []).map((event) => row(event, context)));
      shown += (page.items ?? []).length;
      cursor = page.next_cursor;
      more.hidden = !cursor;
      summary.textContent = shown ? "" : t("audit.empty");
      summary.hidden = Boolean(shown);
      problems.replaceChildren();
    } catch (error) {
      summary.hidden = true;
      problems.replaceChildren(errorBox(error));
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener("click", load);
  load();
}
