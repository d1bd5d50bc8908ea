// DOM helpers. Questions, answers and tags come from users and from an LLM, so text only ever goes in
// through textContent / text nodes: nothing from the API is ever parsed as markup.
import { label, t } from "./i18n.js";

// Given as properties rather than attributes, so that they hold the live state of a control.
const PROPERTIES = new Set(["value", "checked"]);
let counter = 0;

export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
}

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = String(value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (typeof value === "function" && name.startsWith("on")) {
      node.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (PROPERTIES.has(name)) node[name] = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A labelled control: the label names it by `for`, and a hint is tied to it by aria-describedby.
export function field(text, control, hint) {
  if (!control.id) control.id = uid("field");
  const parts = [el("label", { for: control.id, text }), control];
  if (hint) {
    const hintId = uid("hint");
    control.setAttribute("aria-describedby", hintId);
    parts.push(el("p", { class: "hint", id: hintId, text: hint }));
  }
  return el("div", { class: "field" }, parts);
}

export function input(name, props = {}) {
  return el("input", { type: "text", name, autocomplete: "off", ...props });
}

export function select(name, options, chosen = "") {
  return el(
    "select",
    { name },
    options.map(([value, text]) => el("option", { value, text, selected: value === chosen })),
  );
}

export function heading(text, level = "h2") {
  // Focusable from script so that a new view can take the focus and be announced.
  return el(level, { tabindex: "-1", text });
}

export function badge(group, value) {
  return el("span", { class: `badge ${group}-${value}`, dataset: { [group]: value }, text: label(group, value) });
}

export function scopeText(item) {
  return [item.agent, item.project, item.phase].filter((part) => part).join(" · ") || "—";
}

export function truncate(text, length) {
  const value = String(text ?? "");
  return value.length > length ? `${value.slice(0, length - 1)}…` : value;
}

export function table(headers, rows, className = "") {
  const head = el("thead", {}, el("tr", {}, headers.map((text) => el("th", { scope: "col", text }))));
  return el("div", { class: "table-wrap" }, el("table", { class: className }, head, el("tbody", {}, rows)));
}

export function errorBox(error) {
  return el("p", { class: "error", role: "alert", text: readable(error) });
}

export function readable(error) {
  return error && typeof error.readable === "string" ? error.readable : String(error?.message ?? error);
}

// The one live region of the page: short messages after an action, read out by screen readers.
export function notify(text, kind = "ok") {
  const region = document.getElementById("status");
  if (!region) return;
  region.textContent = "";
  region.className = `status notice-${kind}`;
  region.textContent = text;
}

export function clearNotice() {
  const region = document.getElementById("status");
  if (region) {
    region.textContent = "";
    region.className = "status";
  }
}

// Asks in a modal <dialog>; resolves true only when the person chose `okText`. Escape cancels.
// `details` (nodes) show what the action will do, under the question; `kind` styles the OK button.
export function confirmDialog(message, okText, { details = [], kind = "danger" } = {}) {
  return new Promise((resolve) => {
    const messageId = uid("confirm");
    const cancel = el("button", { type: "submit", value: "cancel", id: "confirm-cancel", text: t("common.cancel") });
    const ok = el("button", { type: "submit", value: "ok", id: "confirm-ok", class: kind, text: okText });
    const dialog = el(
      "dialog",
      { class: "confirm", "aria-labelledby": messageId },
      el(
        "form",
        { method: "dialog" },
        el("p", { id: messageId, text: message }),
        details,
        el("div", { class: "actions" }, cancel, ok),
      ),
    );
    const opener = document.activeElement;
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(dialog.returnValue === "ok");
    });
    document.body.append(dialog);
    dialog.showModal();
    // The harmless choice has the focus, so that a stray Enter does not delete anything.
    cancel.focus();
  });
}

export function splitTags(text) {
  return [...new Set(text.split(",").map((tag) => tag.trim()).filter((tag) => tag))];
}

// Runs one staff action from a row of buttons: all disabled while it runs, then the view refreshed with
// `done`; on failure the error is shown and the buttons come back (but those marked data-off).
export function actionRunner(buttons, context) {
  return async (work, done) => {
    buttons.forEach((button) => (button.disabled = true));
    try {
      await work();
      context.refresh({ text: done, kind: "ok" });
    } catch (error) {
      notify(readable(error), "error");
      buttons.forEach((button) => (button.disabled = button.dataset.off === "true"));
    }
  };
}
