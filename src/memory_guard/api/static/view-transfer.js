// Export the memory as JSONL, import a JSONL file (all or nothing, or skipping the bad lines).
import { ApiError, api } from "./api.js";
import { formatNumber, plural, t } from "./i18n.js";
import { el, errorBox, field, heading } from "./dom.js";
import { exportSelection } from "./view-list.js";
import { lineText } from "./words.js";

function lineList(lines) {
  return el(
    "ul",
    { class: "line-errors" },
    lines.map((line) => el("li", { title: line.message ?? "", text: lineText(line) })),
  );
}

// How far the server got in re-encoding the new entries: a <progress> with its words beside it.
function progressBox() {
  const bar = el("progress", { id: "import-progress", max: 1 });
  const words = el("p", { class: "muted", id: "import-progress-text", "aria-live": "polite" });
  const box = el(
    "div",
    { class: "import-progress", id: "import-progress-box", hidden: true },
    el("label", { for: "import-progress", text: t("import.progress") }),
    bar,
    words,
  );
  return {
    box,
    start() {
      bar.removeAttribute("value"); // indeterminate until the server has counted the new entries
      words.textContent = t("import.sending");
      box.hidden = false;
    },
    show({ done, total }) {
      // An import with nothing new still ends full rather than at 0 of 0.
      bar.max = Math.max(total, 1);
      bar.value = total ? Math.min(done, total) : 1;
      words.textContent = t("import.progressText", { done: formatNumber(done), total: formatNumber(total) });
    },
    hide() {
      box.hidden = true;
    },
  };
}

function importForm() {
  const file = el("input", { type: "file", name: "file", id: "import-file", required: true, accept: ".jsonl,.ndjson,.json,.txt" });
  const skip = el("input", { type: "checkbox", name: "skip_bad_lines", id: "import-skip" });
  const submit = el("button", { type: "submit", class: "primary", id: "import-submit", text: t("import.submit") });
  const progress = progressBox();
  const output = el("div", { id: "import-result", "aria-live": "polite" });
  const form = el(
    "form",
    { class: "card", id: "import-form", "aria-labelledby": "import-title" },
    el("h3", { id: "import-title", text: t("import.title") }),
    field(t("import.file"), file),
    el("div", { class: "check" }, skip, el("label", { for: "import-skip", text: t("import.skip") })),
    el("div", { class: "actions" }, submit),
    progress.box,
    output,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    submit.disabled = true;
    form.setAttribute("aria-busy", "true");
    output.replaceChildren();
    progress.start();
    let counted = false;
    try {
      const result = await api.importJsonl(chosen, skip.checked, (step) => {
        counted = true;
        progress.show(step);
      });
      const skipped = result.skipped ?? [];
      output.replaceChildren(
        el("p", {
          class: "ok",
          text: t("import.done", {
            imported: plural("count.imported", result.imported ?? 0),
            present: plural("count.present", result.already_present ?? 0),
          }),
        }),
        ...(skipped.length ? [el("h4", { text: t("import.skipped") }), lineList(skipped)] : []),
      );
      if (!counted) progress.hide();
    } catch (error) {
      // Refused before the stream: no count was ever shown. Stopped midway: the bar says how far it got.
      if (!counted) progress.hide();
      const lines = error instanceof ApiError ? error.lines : [];
      const nothing = lines.length || error?.nothingStored;
      output.replaceChildren(
        errorBox(error),
        ...(nothing ? [el("p", { text: t("import.failed") })] : []),
        ...(lines.length ? [lineList(lines)] : []),
      );
    } finally {
      submit.disabled = false;
      form.removeAttribute("aria-busy");
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
