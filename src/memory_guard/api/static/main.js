// The page's frame: sign-in, the header with its sections, and the views behind #/<view>/<arg>?<filters>.
// The key is never part of the address; filters are, so the back button and a reload keep them.
import { ApiError, api, keyStore, plausibleKey, whenUnauthorized } from "./api.js";
import { LANGUAGES, lang, setLang, t } from "./i18n.js";
import { clearNotice, el, errorBox, field, heading, notify } from "./dom.js";
import * as audit from "./view-audit.js";
import * as entry from "./view-entry.js";
import * as faq from "./view-faq.js";
import * as list from "./view-list.js";
import * as lookup from "./view-lookup.js";
import * as stats from "./view-stats.js";
import * as transfer from "./view-transfer.js";
import * as proposals from "./view-proposals.js";
import * as hits from "./view-hits.js";

const VIEWS = { list, entry, lookup, faq, stats, audit, transfer, proposals, hits };
const NAV = ["list", "lookup", "faq", "hits", "stats", "audit", "proposals", "transfer"];
const app = document.getElementById("app");

// A message that an action leaves for the next view (e.g. "deleted", shown on the list).
let pendingNotice = null;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const cut = raw.indexOf("?");
  const path = cut < 0 ? raw : raw.slice(0, cut);
  const [name = "list", arg = ""] = path.split("/").filter((part) => part);
  let decoded = arg;
  try {
    decoded = decodeURIComponent(arg);
  } catch {
    // A hand-edited address with a broken escape: the view says the argument is not valid.
  }
  return { name, arg: decoded, params: new URLSearchParams(cut < 0 ? "" : raw.slice(cut + 1)) };
}

function go(hash, notice = null) {
  pendingNotice = notice;
  if (location.hash === hash) render();
  else location.hash = hash;
}

function languageSwitch() {
  const chooser = el(
    "select",
    {
      onChange: (event) => {
        setLang(event.target.value);
        render();
      },
    },
    LANGUAGES.map(([code, name]) => el("option", { value: code, lang: code, text: name, selected: code === lang() })),
  );
  chooser.id = "lang";
  return el("div", { class: "lang" }, el("label", { for: "lang", class: "visually-hidden", text: t("lang.label") }), chooser);
}

function header(signedIn, current) {
  const brand = el("div", { class: "brand" }, el("h1", { text: t("app.title") }), el("span", { text: t("app.subtitle") }));
  const tools = el("div", { class: "tools" }, languageSwitch());
  if (!signedIn) return [brand, tools];
  tools.append(el("button", { type: "button", id: "signout", onClick: signOut, text: t("signout") }));
  const links = NAV.map((name) =>
    el(
      "li",
      {},
      el("a", { href: `#/${name}`, "aria-current": name === current ? "page" : false, text: t(`nav.${name}`) }),
    ),
  );
  const nav = el("nav", { "aria-label": t("nav.label") }, el("ul", {}, links));
  return [brand, nav, tools];
}

// Built once and kept: a live region is announced only when it was already in the page before the change.
const top = el("header", { class: "top" });
const status = el("p", { id: "status", class: "status", role: "status", "aria-live": "polite" });
const main = el("main", { id: "main" });
app.replaceChildren(top, status, main);

function signOut() {
  keyStore.clear();
  pendingNotice = { text: t("signout.done"), kind: "ok" };
  render();
}

function renderSignIn() {
  const key = el("input", { type: "password", name: "key", id: "key", required: true, autocomplete: "off" });
  const message = el("p", { id: "signin-error", class: "error", role: "alert", hidden: true });
  const submit = el("button", { type: "submit", class: "primary", text: t("signin.submit") });
  const form = el(
    "form",
    { class: "card signin", id: "signin" },
    heading(t("signin.title")),
    field(t("signin.key"), key, t("signin.help")),
    message,
    el("div", { class: "actions" }, submit),
  );
  const fail = (text) => {
    message.textContent = text;
    message.hidden = false;
    key.setAttribute("aria-invalid", "true");
    key.focus();
  };
  key.addEventListener("input", () => key.removeAttribute("aria-invalid"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = key.value.trim();
    if (!plausibleKey(value)) return fail(t("signin.badKey"));
    submit.disabled = true;
    notify(t("signin.checking"), "busy");
    try {
      await api.checkKey(value);
      keyStore.set(value);
      pendingNotice = null;
      render();
    } catch (error) {
      clearNotice();
      if (error instanceof ApiError && error.status === 401) fail(t("signin.unknown"));
      else if (error instanceof ApiError && error.status === 403) fail(t("signin.notStaff"));
      else fail(error.readable ?? String(error));
    } finally {
      submit.disabled = false;
    }
  });
  top.replaceChildren(...header(false));
  main.replaceChildren(form);
  showPendingNotice();
  key.focus();
}

function showPendingNotice() {
  if (pendingNotice) notify(pendingNotice.text, pendingNotice.kind);
  else clearNotice();
  pendingNotice = null;
}

function render() {
  document.documentElement.lang = lang();
  document.title = `${t("app.title")} · ${t("app.subtitle")}`;
  if (!keyStore.get()) return renderSignIn();
  const route = parseHash();
  const view = VIEWS[route.name];
  top.replaceChildren(...header(true, route.name === "entry" ? "list" : route.name));
  showPendingNotice();
  const section = el("section", { class: `view view-${route.name}` });
  main.replaceChildren(section);
  if (!view) {
    section.append(heading(t("view.unknown")));
    return;
  }
  const context = { arg: route.arg, params: route.params, go, refresh: (notice) => go(location.hash, notice) };
  try {
    view.render(section, context);
  } catch (error) {
    // A view that throws shows why instead of leaving a blank page.
    section.append(errorBox(error));
  }
  section.querySelector("h2")?.focus({ preventScroll: true });
}

whenUnauthorized(() => {
  keyStore.clear();
  pendingNotice = { text: t("session.expired"), kind: "error" };
  render();
});
window.addEventListener("hashchange", render);
setLang(lang());
render();
