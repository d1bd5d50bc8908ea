// Calls to the staff routes with the key from sessionStorage; every failure becomes an ApiError whose
// `readable` text can be shown as is.
import { coded, t } from "./i18n.js";

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
  // `details`: the error body's other fields (e.g. the entry_id of a duplicate question).
  constructor(status, code, message, lines = [], details = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.lines = lines;
    this.details = details;
  }

  // An HTTP error in the page's language when its code is one the page knows, else in the server's
  // English; an error with no status (network, a stream's error event) was worded when it was made.
  get readable() {
    if (!this.status) return this.message;
    return t("error.http", { status: this.status, message: coded("apiError", this.code, this.details, this.message) });
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
  let details = {};
  try {
    const body = await response.json();
    const error = body?.error;
    if (error && typeof error.message === "string") {
      code = String(error.code ?? code);
      message = error.message;
      const found = error.lines ?? body.lines;
      lines = Array.isArray(found) ? found : [];
      details = error;
    }
  } catch {
    // Not our JSON error (a proxy's page, say): the status text is all there is.
  }
  return new ApiError(response.status, code, message, lines, details);
}

// Sends one request; an answer that is not 2xx becomes an ApiError (a 401 also ends the session).
async function send(method, path, { params, json, body, contentType, key, accept } = {}) {
  const headers = { Authorization: `Bearer ${key ?? keyStore.get() ?? ""}` };
  if (accept) headers.Accept = accept;
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
  return response;
}

async function call(method, path, { as = "json", ...options } = {}) {
  const response = await send(method, path, options);
  if (response.status === 204) return null;
  return as === "blob" ? response.blob() : response.json();
}

// The frames of a text/event-stream body, as { event, data } once each blank line ends one. Comment
// lines (": ping") and other fields are skipped; a line may end with \r\n or \n.
async function* eventFrames(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let frame = { event: "", data: [] };
  try {
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch {
        throw new ApiError(0, "network", t("import.cut"));
      }
      buffer += chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      const lines = buffer.split("\n");
      // The last piece may be half a line: it waits for the next chunk.
      buffer = lines.pop();
      for (const raw of lines) {
        const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
        if (line === "") {
          if (frame.data.length) yield { event: frame.event || "message", data: frame.data.join("\n") };
          frame = { event: "", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const cut = line.indexOf(":");
        const name = cut < 0 ? line : line.slice(0, cut);
        const value = cut < 0 ? "" : line.slice(cut + 1).replace(/^ /, "");
        if (name === "event") frame.event = value;
        else if (name === "data") frame.data.push(value);
      }
      // A frame the stream did not finish with a blank line is dropped, as EventSource does.
      if (chunk.done) return;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

// Imports a JSONL file, reporting `progress` frames ({done, total}) as they come; resolves with the
// report of the `done` frame. A server that answers plain JSON (no stream) is read as before.
async function importJsonl(file, skipBadLines, onProgress = () => {}) {
  const response = await send("POST", "/import", {
    params: { skip_bad_lines: skipBadLines ? "true" : "false" },
    body: file,
    contentType: "application/x-ndjson",
    accept: "text/event-stream",
  });
  if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) return response.json();
  for await (const frame of eventFrames(response.body)) {
    let data;
    try {
      data = JSON.parse(frame.data);
    } catch {
      continue;
    }
    if (frame.event === "progress") onProgress({ done: Number(data.done) || 0, total: Number(data.total) || 0 });
    else if (frame.event === "done") return data;
    else if (frame.event === "error") {
      const message = coded("apiError", data.code, data, data.message ?? "");
      const error = new ApiError(0, String(data.code ?? "import_failed"), t("import.error", { message }));
      error.nothingStored = true;
      throw error;
    }
  }
  throw new ApiError(0, "stream_cut", t("import.cut"));
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
  addVariant: (id, question) => call("POST", `${entry(id)}/variants`, { json: { question } }),
  removeVariant: (id, variantId) => call("DELETE", `${entry(id)}/variants/${encodeURIComponent(variantId)}`),
  validateVariant: (id, variantId) => call("POST", `${entry(id)}/variants/${encodeURIComponent(variantId)}/validate`),
  lookup: (fields) => call("POST", "/lookup", { json: fields }),
  audit: (params) => call("GET", "/audit", { params }),
  stats: (days) => call("GET", "/stats", { params: { days } }),
  exportJsonl: (params) => call("GET", "/export", { params, as: "blob" }),
  restore: (eventId) => call("POST", `/audit/${encodeURIComponent(eventId)}/restore`),
  hits: (params) => call("GET", "/hits", { params }),
  reviewHit: (lookupId, correct) => call("POST", `/hits/${encodeURIComponent(lookupId)}/review`, { json: { correct } }),
  proposals: (params) => call("GET", "/proposals", { params }),
  proposal: (id) => call("GET", `/proposals${entry(id)}`),
  acceptProposal: (id, force) => call("POST", `/proposals${entry(id)}/accept`, { json: { force: Boolean(force) } }),
  rejectProposal: (id, reason) => call("POST", `/proposals${entry(id)}/reject`, { json: { reason } }),
  importJsonl,
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
