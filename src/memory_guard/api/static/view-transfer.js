// Export the memory as JSONL, import a JSONL file (all or nothing, or skipping the bad lines).
import { ApiError, api } from "./api.js";
import { t } from "./i18n.js";
import { el, errorBox, field, heading } from "./dom.js";
import { exportSelection } from "./view-list.js";

function lineList(lines) {
  return el(
    "ul",
    { class: "line-errors" },
    lines.map((line) => el("li", { text: t("import.line", { line: line.line, message: line.message }) })),
  );
}

function importForm() {
  const file = el("input", { type: "file", name: "file", id: "import-file", required: true, accept: ".jsonl,.ndjson,.json,.txt" });
  const skip = el("input", { type: "checkbox", name: "skip_bad_lines", id: "import-skip" });
  const submit = el("button", { type: "submit", class: "primary", id: "import-submit", text: t("import.submit") });
  const output = el("div", { id: "import-result", "aria-live": "polite" });
  const form = el(
    "form",
    { class: "card", id: "import-form", "aria-labelledby": "import-title" },
    el("h3", { id: "import-title", text: t("import.title") }),
    field(t("import.file"), file),
    el("div", { class: "check" }, skip, el("label", { for: "import-skip", text: t("import.skip") })),
    el("div", { class: "actions" }, submit),
    output,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    submit.disabled = true;
    output.replaceChildren(el("p", { class: "muted", text: t("common.loading") }));
    try {
      const result = await api.importJsonl(chosen, skip.checked);
      const skipped = result.skipped ?? [];
      output.replaceChildren(
        el("p", { class: "ok", text: t("import.done", { imported: result.imported ?? 0, present: result.already_present ?? 0 }) }),
        ...(skipped.length ? [el("h4", { text: t("import.skipped") }), lineList(skipped)] : []),
      );
    } catch (error) {
      const lines = error instanceof ApiError ? error.lines : [];
      output.replaceChildren(errorBox(error), ...(lines.length ? [el("p", { text: t("import.failed") }), lineList(lines)] : []));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export function render(root) {
  const exportButton = el("button", { type: "button", class: "primary", id: "export-all", text: t("export.button") });
  exportButton.addEventListener("click", () => exportSelection({}, exportButton));
  root.append(
    heading(t("transfer.title")),
    el(
      "div",
      { class: "two-columns" },
      el(
        "section",
        { class: "card", "aria-labelledby": "export-title" },
        el("h3", { id: "export-title", text: t("export.title") }),
        el("p", { class: "muted", text: t("export.help") }),
        el("div", { class: "actions" }, exportButton),
      ),
      importForm(),
    ),
  );
}
