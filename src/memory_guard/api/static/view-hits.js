// The answers served from memory as they were, newest first, to review: was the stored answer right for
// the question asked? Each review feeds the wrong-answer rate of the statistics and the scope floors.
import { pagedList } from "./paged.js";
import { api } from "./api.js";
import { formatDateTime, formatNumber, plural, t } from "./i18n.js";
import { append, badge, el, field, heading, notify, readable, select } from "./dom.js";
import { actorText, reasonText } from "./words.js";

const FILTERS = ["none", "wrong", "right", "all"];
const PAGE_SIZE = 20;

function reviewLine(hit) {
  if (!hit.review) return el("p", { class: "muted review-state", text: t("hits.unreviewed") });
  const by = actorText(hit.reviewed_by, hit.reviewed_by_code, hit.reviewed_by_params);
  return el("p", { class: `review-state review-${hit.review}`, text: t(`hits.reviewed.${hit.review}`, { by }) });
}

function reviewButtons(hit, onReviewed) {
  const buttons = ["right", "wrong"].map((review) =>
    el("button", {
      type: "button",
      class: review === "right" ? "primary" : "danger",
      dataset: { review },
      "aria-pressed": String(hit.review === review),
      text: t(`hits.mark.${review}`),
    }),
  );
  for (const button of buttons) {
    button.addEventListener("click", async () => {
      const review = button.dataset.review;
      buttons.forEach((b) => (b.disabled = true));
      try {
        await api.reviewHit(hit.lookup_id, review === "right");
        onReviewed(review);
        notify(t(`hits.done.${review}`, { id: hit.lookup_id }));
      } catch (error) {
        notify(readable(error), "error");
      } finally {
        buttons.forEach((b) => (b.disabled = false));
      }
    });
  }
  return el("div", { class: "actions" }, buttons);
}

function hitCard(hit, signedAs) {
  const card = el("article", { class: "card hit", dataset: { lookupId: hit.lookup_id, review: hit.review ?? "none" } });
  const entryLink = hit.entry_id
    ? el("a", { href: `#/entry/${hit.entry_id}`, text: t("hits.entry", { id: hit.entry_id }) })
    : null;
  let state = reviewLine(hit);
  const onReviewed = (review) => {
    hit.review = review;
    hit.reviewed_by = signedAs;
    hit.reviewed_by_code = null;
    card.dataset.review = review;
    for (const button of card.querySelectorAll("button[data-review]")) {
      button.setAttribute("aria-pressed", String(button.dataset.review === review));
    }
    const next = reviewLine(hit);
    state.replaceWith(next);
    state = next;
  };
  const answer =
    hit.answer === null || hit.answer === undefined
      ? el("p", { class: "muted", text: t("hits.gone") })
      : el("div", { class: "text-block answer", text: hit.answer });
  // dom.js's append: it leaves out the parts that are null (no note when nothing changed).
  append(card, [
    el(
      "p",
      { class: "hit-meta muted" },
      formatDateTime(hit.created_at),
      " · ",
      t("hits.score", { score: formatNumber(hit.score, 3) }),
      " · ",
      hit.verdict ? badge("verdict", hit.verdict) : "—",
      " ",
      el("span", { class: "reason", title: hit.reason ?? "", text: reasonText(hit) }),
    ),
    el("h3", { text: t("hits.asked") }),
    el("p", { class: "text-block question asked", text: hit.question ?? "—" }),
    el("h3", {}, t("hits.answer"), " ", entryLink),
    hit.entry_question ? el("p", { class: "muted matched", text: t("hits.matched", { question: hit.entry_question }) }) : null,
    answer,
    hit.entry_changed ? el("p", { class: "muted changed", text: t("hits.changed") }) : null,
    state,
    reviewButtons(hit, onReviewed),
  ]);
  return card;
}

export function render(root, context) {
  const asked = context.params.get("review") ?? "none";
  const chosen = FILTERS.includes(asked) ? asked : "none";
  const filter = select(
    "review",
    FILTERS.map((name) => [name, t(`hits.filter.${name}`)]),
    chosen,
  );
  filter.id = "hits-review";
  filter.addEventListener("change", () => context.go(`#/hits?review=${filter.value}`));
  const summary = el("p", { class: "muted", id: "hits-summary", text: t("common.loading") });
  const problems = el("div");
  const list = el("div", { id: "hits-list", class: "hit-list" });
  const more = el("button", { type: "button", id: "hits-more", hidden: true, text: t("common.loadMore") });
  root.append(
    el("div", { class: "view-head" }, heading(t("hits.title")), field(t("hits.filter"), filter)),
    el("p", { class: "muted", text: t("hits.help") }),
    summary,
    problems,
    list,
    el("div", { class: "actions center" }, more),
  );

  // Who a review made here is by, until the list is read again: the server names the key's owner.
  const signedAs = t("hits.you");
  const review = chosen === "all" ? undefined : chosen;
  pagedList({
    fetchPage: (cursor) => api.hits({ review, limit: PAGE_SIZE, cursor }),
    render: (hit) => hitCard(hit, signedAs),
    target: list,
    summary,
    problems,
    more,
    counted: (shown) => (shown ? plural("hits.count", shown) : t("hits.empty")),
  });
}
