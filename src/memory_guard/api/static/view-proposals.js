// What clients proposed: a client never changes a shared answer alone; staff accept or reject here.
// A proposal whose entry changed since is refused by the server (409) unless forced: the page shows
// the entry as it is now and asks before forcing.
import { pagedList } from "./paged.js";
import { ApiError, api } from "./api.js";
import { formatDateTime, label, t } from "./i18n.js";
import { actorText } from "./words.js";
import { badge, confirmDialog, el, field, heading, input, notify, readable, select } from "./dom.js";

const STATUSES = ["pending", "accepted", "rejected"];
const PAGE_SIZE = 20;

function answerBlock(title, text, name) {
  return el("div", { class: "proposal-answer", dataset: { part: name } }, el("h4", { text: title }), el("p", { class: "text-block", text }));
}

// What the client asks for, next to what the entry says now.
function compare(proposal) {
  const now = proposal.entry;
  const parts = [];
  if (now) {
    parts.push(el("p", { class: "question" }, el("a", { href: `#/entry/${proposal.entry_id}`, text: now.question })));
    parts.push(answerBlock(t("proposals.current"), now.answer, "current"));
  } else {
    parts.push(el("p", { class: "error", text: t("proposals.gone") }));
  }
  if (proposal.kind === "correct") parts.push(answerBlock(t("proposals.proposed"), proposal.proposed_answer, "proposed"));
  else parts.push(el("p", { class: "muted", text: t(`proposals.${proposal.kind}Text`) }));
  if (now && proposal.entry_changed && proposal.status === "pending") {
    parts.push(el("p", { class: "error", role: "note", text: t("proposals.changed") }));
  }
  return parts;
}

function decision(proposal) {
  if (proposal.status === "pending") return null;
  const text = t("proposals.decided", {
    status: label("proposalStatus", proposal.status),
    who: actorText(proposal.decided_by, proposal.decided_by_code, proposal.decided_by_params),
    at: formatDateTime(proposal.decided_at),
  });
  return el(
    "p",
    { class: "muted", dataset: { part: "decision" } },
    text,
    proposal.reason ? [el("br"), t("proposals.reasonShown", { reason: proposal.reason })] : null,
  );
}

function actions(proposal, context) {
  if (proposal.status !== "pending") return null;
  const id = proposal.id;
  const reason = input("reason", { id: `proposal-${id}-reason`, maxlength: 2000 });
  const accept = el("button", { type: "button", class: "primary", dataset: { act: "accept" }, text: t("proposals.accept") });
  const reject = el("button", { type: "button", dataset: { act: "reject" }, text: t("proposals.reject") });
  const buttons = [accept, reject];
  const busy = (on) => buttons.forEach((button) => (button.disabled = on));

  async function acceptIt(force) {
    busy(true);
    try {
      await api.acceptProposal(id, force);
      context.refresh({ text: t("proposals.accepted", { id, entry: proposal.entry_id }), kind: "ok" });
    } catch (error) {
      busy(false);
      if (!force && error instanceof ApiError && error.status === 409 && error.code === "entry_changed") {
        // The entry moved since the client saw it: show what it says now, then ask.
        let current = proposal.entry ?? {};
        try {
          current = (await api.proposal(id)).entry ?? current;
        } catch {
          // Shown as listed: the server will still refuse a forced accept on a deleted entry.
        }
        const details = [
          el("p", { class: "muted", text: t("proposals.current") }),
          el("p", { class: "text-block preview-answer", text: current.answer ?? "" }),
          el("p", { class: "muted", text: label("status", current.status) }),
        ];
        if (await confirmDialog(t("proposals.conflict", { id }), t("proposals.force"), { details, kind: "primary" })) {
          await acceptIt(true);
        }
        return;
      }
      notify(readable(error), "error");
    }
  }

  accept.addEventListener("click", () => acceptIt(false));
  reject.addEventListener("click", async () => {
    busy(true);
    try {
      await api.rejectProposal(id, reason.value.trim() || null);
      context.refresh({ text: t("proposals.rejected", { id }), kind: "ok" });
    } catch (error) {
      busy(false);
      notify(readable(error), "error");
    }
  });
  return [field(t("proposals.reason"), reason), el("div", { class: "actions" }, buttons)];
}

function card(proposal, context) {
  const title = el(
    "h3",
    {},
    badge("proposalKind", proposal.kind),
    " ",
    t("proposals.entry", { id: proposal.entry_id }),
    " ",
    badge("proposalStatus", proposal.status),
  );
  const who = actorText(proposal.proposed_by, proposal.proposed_by_code, proposal.proposed_by_params);
  const by = t("proposals.by", { who, at: formatDateTime(proposal.created_at) });
  return el(
    "article",
    { class: "card proposal", dataset: { proposalId: proposal.id, kind: proposal.kind, status: proposal.status } },
    title,
    el("p", { class: "muted", text: by }),
    compare(proposal),
    decision(proposal),
    actions(proposal, context),
  );
}

function filterForm(status, context) {
  const chooser = select("status", [...STATUSES.map((value) => [value, label("proposalStatus", value)]), ["all", t("common.allFeminine")]], status);
  chooser.id = "proposals-status";
  const form = el(
    "form",
    { class: "filters inline", id: "proposals-filters" },
    field(t("field.status"), chooser),
    el("button", { type: "submit", text: t("proposals.show") }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    context.go(chooser.value === "pending" ? "#/proposals" : `#/proposals?status=${encodeURIComponent(chooser.value)}`);
  });
  return form;
}

export function render(root, context) {
  const chosen = context.params.get("status") ?? "pending";
  const status = chosen === "all" || STATUSES.includes(chosen) ? chosen : "pending";
  const summary = el("p", { class: "muted", id: "proposals-summary", text: t("common.loading") });
  const problems = el("div");
  const list = el("div", { id: "proposals-list" });
  const more = el("button", { type: "button", id: "proposals-more", hidden: true, text: t("common.loadMore") });
  root.append(
    heading(t("proposals.title")),
    el("p", { class: "muted", text: t("proposals.help") }),
    filterForm(status, context),
    summary,
    problems,
    list,
    el("div", { class: "actions center" }, more),
  );

  pagedList({
    fetchPage: (cursor) => api.proposals({ status: status === "all" ? "" : status, limit: PAGE_SIZE, cursor }),
    render: (proposal) => card(proposal, context),
    target: list,
    summary,
    problems,
    more,
    counted: (shown) => (shown ? t("proposals.count", { n: shown }) : t("proposals.empty")),
  });
}
