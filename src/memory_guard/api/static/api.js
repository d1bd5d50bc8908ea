// Calls to the staff routes with the key from sessionStorage; every failure becomes an ApiError whose
// `readable` text can be shown as is.
import { t } from "./i18n.js";

// sessionStorage, not localStorage: the key goes away with the tab, and never into a URL.
const KEY_SLOT = "memory-guard.staff-key";

// The page lives at <root>/ui: the data routes are its siblings, wherever a proxy mounted them.
const ROOT = new URL(".", document.baseURI).pathname.replace(/\/$/, "");

export const keyStore = {
  get: () => sessionStorage.getItem(KEY_SLOT),
  set: (key) => sessionStorage.setItem(KEY_SLOT, key),
  clear: () => sessionStorage.removeItem(KEY_SLOT),
};

// Header values must be visible ASCII: anything else would make fetch throw before sending.
export function plausibleKey(key) {
  return /^[\x21-\x7e]+$/.test(key);
}

export class ApiError extends Error {
  constructor(status, code, message, lines = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.lines = lines;
  }

  get readable() {
    return this.status ? t("error.http", { status: this.status, message: this.message }) : this.message;
  }
}

let onUnauthorized = () => {};

export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

function address(path, params) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value !== undefined && value !== null && value !== "") query.append(name, String(value));
  }
  const text = query.toString();
  return `${ROOT}${path}${text ? `?${text}` : ""}`;
}

async function failure(response) {
  let code = "http_error";
  let message = response.statusText || String(response.status);
  let lines = [];
  try {
    const body = await response.json();
    const error = body?.error;
    if (error && typeof error.message === "string") {
      code = String(error.code ?? code);
      message = error.message;
      const found = error.lines ?? body.lines;
      lines = Array.isArray(found) ? found : [];
    }
  } catch {
    // Not our JSON error (a proxy's page, say): the status text is all there is.
  }
  return new ApiError(response.status, code, message, lines);
}

async function call(method, path, { params, json, body, contentType, key, as = "json" } = {}) {
  const headers = { Authorization: `Bearer ${key ?? keyStore.get() ?? ""}` };
  let payload = body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(json);
  } else if (contentType) {
    headers["Content-Type"] = contentType;
  }
  let response;
  try {
    response = await fetch(address(path, params), { method, headers, body: payload, cache: "no-store" });
  } catch {
    throw new ApiError(0, "network", t("error.network"));
  }
  if (!response.ok) {
    const error = await failure(response);
    // A key checked explicitly (sign-in) reports its own 401; otherwise the session is over.
    if (response.status === 401 && key === undefined) onUnauthorized(error);
    throw error;
  }
  if (response.status === 204) return null;
  return as === "blob" ? response.blob() : response.json();
}

const entry = (id) => `/${encodeURIComponent(id)}`;

export const api = {
  checkKey: (key) => call("GET", "/stats", { key }),
  list: (params) => call("GET", "", { params }),
  get: (id) => call("GET", entry(id)),
  create: (fields) => call("POST", "", { json: fields }),
  patch: (id, fields) => call("PATCH", entry(id), { json: fields }),
  validate: (id) => call("POST", `${entry(id)}/validate`),
  obsolete: (id) => call("POST", `${entry(id)}/obsolete`),
  remove: (id) => call("DELETE", entry(id)),
  history: (id) => call("GET", `${entry(id)}/history`),
  usage: (id) => call("GET", `${entry(id)}/usage`),
  lookup: (fields) => call("POST", "/lookup", { json: fields }),
  audit: (params) => call("GET", "/audit", { params }),
  stats: (days) => call("GET", "/stats", { params: { days } }),
  exportJsonl: (params) => call("GET", "/export", { params, as: "blob" }),
  importJsonl: (file, skipBadLines) =>
    call("POST", "/import", {
      params: { skip_bad_lines: skipBadLines ? "true" : "false" },
      body: file,
      contentType: "application/x-ndjson",
    }),
};

// Saves a blob as a file through a short-lived object URL (the key never appears in a link).
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked a little later: some browsers still read the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}
