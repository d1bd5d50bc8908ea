"""The staff page in a real headless Chromium: the lookup box, stats, the audit log and undo, import and
export. Each test seeds its data through the HTTP API and checks the result through it again.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.browser import StaffPage
from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.ui.support import ANSWER, CARBON, QUESTION, entry_of, faq, plain
from tests.upstream import FakeUpstream, Reply


def test_lookup_shows_the_decision_and_its_candidates(page: StaffPage) -> None:
    entry = faq(page.api, project="P1")
    page.sign_in(hash_="#/lookup")
    page.type("#lookup-question", QUESTION)
    page.type("#lookup-form input[name=project]", "P1")
    page.click("#lookup-submit")
    page.find("#lookup-decision .badge[data-decision='direct']")
    row = page.wait_text(f"#lookup-result tr[data-entry-id='{entry['id']}']", QUESTION)
    assert "identique" in row.text and "oui" in row.text
    page.screenshot("lookup")

    # Another wording: the cross-encoder reads the pair, and its probability has a column.
    near = QUESTION.replace("le taux de la retenue", "le taux de retenue")
    shown = page.api.post("/staff/memory/lookup", json={"question": near, "project": "P1"}).json()
    p = shown["candidates"][0]["cross_encoder_probability"]
    assert p is not None
    page.type("#lookup-question", near, clear=True)
    page.click("#lookup-submit")
    cell = f"#lookup-result tr[data-entry-id='{entry['id']}'] td.cross-encoder"
    page.wait_text(cell, f"{p:g}".replace(".", ","))

    page.type("#lookup-question", "Quel temps fera-t-il demain à Dakar ?", clear=True)
    page.find("#lookup-form input[name=project]").clear()
    page.click("#lookup-submit")
    page.find("#lookup-decision .badge[data-decision='miss']")


def test_stats_show_the_counts_and_a_chart(
    page: StaffPage, acme: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    faq(page.api)
    retired = faq(page.api, CARBON, "Scopes 1, 2 et 3.")
    page.api.post(f"/staff/memory/{retired['id']}/obsolete")
    assert chat(acme, message=QUESTION).done["decision"] == "direct"
    fresh_upstream.push(Reply(text="Trois mois.", usage=(100, 20)))
    notice_period = "Quel est le délai de préavis d'un bail commercial ?"
    assert chat(acme, message=notice_period).done["decision"] == "miss"
    stats = page.api.get("/staff/memory/stats").json()

    page.sign_in(hash_="#/stats")
    page.wait_text("[data-stat='entries'] .stat-value", str(stats["entries"]["total"]))
    page.wait_text("[data-count='status.obsolete'] strong", "1")
    page.wait_text("[data-stat='lookups'] .stat-value", "2")
    page.wait_text("[data-count='decision.direct'] strong", "1")
    page.wait_text("[data-count='decision.miss'] strong", "1")
    assert plain(page.text("[data-stat='hit_rate'] .stat-value")) == "50 %"
    assert page.text("[data-stat='llm_calls_avoided'] .stat-value") == "1"

    chart = page.find("svg#stats-chart")
    assert page.js("return arguments[0].querySelector('title').textContent", chart) == "Décisions par jour"
    assert page.js("return document.querySelectorAll('#stats-chart rect.segment.direct').length") == 1
    assert page.js("return document.querySelectorAll('#stats-chart rect.segment.miss').length") == 1
    assert page.js("return document.querySelectorAll('#stats-chart g.bar').length") == len(stats["timeline"])
    by_source = stats["entries_by_source"]
    assert by_source["faq"] == 2 and by_source["learned"] == 1
    page.wait_text("[data-stat='entries_by_source'] [data-count='source.faq'] strong", "2")
    page.wait_text("[data-count='source.learned'] span", "apprise")
    assert page.text("[data-count='source.learned'] strong") == "1"
    assert page.text("[data-count='source.document'] strong") == "0"
    legend = plain(page.text(".legend"))
    assert "directe : 1" in legend and "manquée : 1" in legend
    page.screenshot("stats", full=True)


def test_audit_log_lists_the_actions_and_links_to_the_entry(page: StaffPage) -> None:
    entry = faq(page.api)
    page.api.patch(f"/staff/memory/{entry['id']}", json={"status": "auto"})
    page.api.post(f"/staff/memory/{entry['id']}/validate")
    page.sign_in(hash_="#/audit")
    page.wait(lambda d: len(page.all("tr[data-event-id]")) == 3, "three events")
    actions = page.js(
        "return [...document.querySelectorAll('tr[data-event-id] .badge')].map(b => b.dataset.action)"
    )
    assert actions == ["validate", "edit", "create"]

    page.choose("#audit-filters select[name=action]", "create")
    page.click("#audit-filters button")
    page.wait(lambda d: len(page.all("tr[data-event-id]")) == 1, "only the creation")
    page.click(f"tr[data-event-id] a[href='#/entry/{entry['id']}']")
    page.wait_text("#entry-question", QUESTION)


def history_actions(api: httpx.Client, entry_id: int) -> list[str]:
    response = api.get(f"/staff/memory/{entry_id}/history")
    assert response.status_code == 200, response.text
    return [event["action"] for event in response.json()["items"]]


def restore_buttons(page: StaffPage, table: str) -> dict[str, int]:
    """How many restore buttons each action's rows hold in `table`."""
    counts: dict[str, int] = page.js(
        "const counts = {};"
        f"for (const row of document.querySelectorAll('{table} tr[data-action]')) {{"
        "  counts[row.dataset.action] = (counts[row.dataset.action] ?? 0)"
        "    + row.querySelectorAll('button[data-restore-event]').length; }"
        "return counts;"
    )
    return counts


def test_restore_an_edit_from_the_entry_history(page: StaffPage) -> None:
    entry = faq(page.api)
    edited = page.api.patch(f"/staff/memory/{entry['id']}", json={"answer": "Dix pour cent."})
    assert edited.status_code == 200, edited.text
    page.sign_in(hash_=f"#/entry/{entry['id']}")
    page.wait_text("#entry-answer", "Dix pour cent.")
    page.find("#entry-history tr[data-action='edit']")
    # A creation has nothing before it to restore.
    assert restore_buttons(page, "#entry-history") == {"edit": 1, "create": 0}

    restore = "#entry-history tr[data-action='edit'] button[data-restore-event]"
    assert page.find(restore).text == "Rétablir l'état d'avant"
    page.click(restore)
    dialog = page.find("dialog[open]")
    assert f"Rétablir l'entrée n° {entry['id']}" in dialog.text
    assert ANSWER in dialog.text, "the dialog shows the answer that comes back"
    page.screenshot("entry-restore")
    page.click("#confirm-cancel")
    page.wait(lambda d: not page.all("dialog"), "the dialog closes")
    assert entry_of(page.api, entry["id"])["answer"] == "Dix pour cent."
    assert history_actions(page.api, entry["id"]) == ["edit", "create"]

    page.click(restore)
    page.click("dialog[open] #confirm-ok")
    page.notice(f"Entrée n° {entry['id']} rétablie.")
    page.wait_text("#entry-answer", ANSWER)
    assert entry_of(page.api, entry["id"])["answer"] == ANSWER
    assert history_actions(page.api, entry["id"]) == ["restore", "edit", "create"]
    page.wait_text("#entry-history tr[data-action='restore'] .badge", "restauration")


def test_a_deleted_entry_shows_its_history_and_can_come_back(page: StaffPage) -> None:
    entry = faq(page.api, tags=["marchés"])
    assert page.api.delete(f"/staff/memory/{entry['id']}").status_code == 204
    page.sign_in(hash_=f"#/entry/{entry['id']}")
    page.wait_text(".view .error", "Erreur 404")
    page.wait_text("#entry-gone", "n'existe plus")
    assert str(page.find("#entry-gone a").get_attribute("href")).endswith(f"#/audit?entry_id={entry['id']}")
    page.find("#entry-history tr[data-action='delete']")
    assert restore_buttons(page, "#entry-history") == {"delete": 1, "create": 0}
    page.screenshot("entry-deleted", full=True)

    restore = "#entry-history tr[data-action='delete'] button[data-restore-event]"
    page.click(restore)
    page.wait_text("dialog[open]", "reviendra sous le même numéro")
    page.driver.switch_to.active_element.send_keys("\ue00c")  # Escape cancels
    page.wait(lambda d: not page.all("dialog"), "Escape closes the dialog")
    assert page.api.get(f"/staff/memory/{entry['id']}").status_code == 404

    page.click(restore)
    page.click("dialog[open] #confirm-ok")
    page.notice(f"Entrée n° {entry['id']} rétablie.")
    page.wait_text("#entry-question", QUESTION)
    back = entry_of(page.api, entry["id"])
    assert (back["answer"], back["tags"], back["status"]) == (ANSWER, ["marchés"], "validated")
    assert history_actions(page.api, entry["id"]) == ["restore", "delete", "create"]
    assert page.all("#entry-gone") == []


def test_restore_from_the_audit_log_opens_the_entry(page: StaffPage) -> None:
    entry = faq(page.api)
    page.api.post(f"/staff/memory/{entry['id']}/obsolete")
    page.sign_in(hash_="#/audit")
    page.wait(lambda d: len(page.all("tr[data-event-id]")) == 2, "two events")
    assert restore_buttons(page, ".audit-table") == {"obsolete": 1, "create": 0}
    page.screenshot("audit")
    page.click("tr[data-action='obsolete'] button[data-restore-event]")
    page.wait_text("dialog[open]", "validée")
    page.click("dialog[open] #confirm-ok")
    page.notice(f"Entrée n° {entry['id']} rétablie.")
    page.find("h2 .badge[data-status='validated']")
    assert entry_of(page.api, entry["id"])["status"] == "validated"

    page.open("#/audit")
    page.choose("#audit-filters select[name=action]", "restore")
    page.click("#audit-filters button")
    page.wait(lambda d: len(page.all("tr[data-event-id]")) == 1, "only the restore")
    assert page.text("tr[data-event-id] .badge") == "restauration"
    assert "statut : obsolète → validée" in page.text("tr[data-event-id]")


def test_import_reports_bad_lines_then_export_downloads_the_file(
    page: StaffPage, live: LiveApp, tmp_path: Path
) -> None:
    faq(page.api)
    faq(page.api, CARBON, "Scopes 1, 2 et 3.")
    exported = page.api.get("/staff/memory/export").text
    upload = tmp_path / "acme.jsonl"
    upload.write_text(exported + "{ceci n'est pas du JSON\n", encoding="utf-8")

    page.sign_in("sb", hash_="#/transfer")  # globex imports what acme exported
    page.type("#import-file", str(upload))
    page.click("#import-submit")
    page.wait_text("#import-result", "Rien n'a été importé.")
    page.wait_text("#import-result .line-errors", "ligne 3 : ce n'est pas du JSON valide (colonne 2)")
    page.wait_text("#import-result .error", "Des lignes ne sont pas valides")
    page.click("#import-skip")
    page.click("#import-submit")
    page.wait_text("#import-result", "2 entrées importées, 0 déjà présente.")
    page.wait_text("#import-result .line-errors", "ligne 3")
    page.screenshot("transfer")
    with client_for(live, "sb") as globex:
        assert len(globex.get("/staff/memory").json()["items"]) == 2

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    page.driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    page.click("#export-all")
    page.notice("Export prêt : 2 lignes")
    target = downloads / "memory-export.jsonl"
    page.wait(lambda d: target.exists() and target.stat().st_size > 0, "the export is downloaded")
    assert len(target.read_text(encoding="utf-8").splitlines()) == 2


def test_import_shows_its_progress_then_the_report(page: StaffPage, tmp_path: Path) -> None:
    rows = [{"question": f"Quel est le délai du lot n° {n} ?", "answer": f"{n} jours"} for n in range(150)]
    upload = tmp_path / "lots.jsonl"
    upload.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8")
    page.sign_in(hash_="#/transfer")
    progress = page.find("#import-progress")
    assert not progress.is_displayed(), "no progress before an import"
    # Every change of the bar and of the button, in order, as the page makes them.
    page.js(
        "window.__changes = [];"
        "new MutationObserver((records) => { for (const r of records) window.__changes.push("
        "  [r.target.id, r.attributeName, r.oldValue, r.target.getAttribute(r.attributeName)]); })"
        ".observe(document.getElementById('import-form'), {subtree: true, attributes: true,"
        "  attributeOldValue: true, attributeFilter: ['value', 'disabled']});"
    )
    page.type("#import-file", str(upload))
    page.click("#import-submit")
    page.wait_text("#import-result", "150 entrées importées, 0 déjà présente.")
    bar = page.js("const p = document.getElementById('import-progress'); return [p.value, p.max]")
    assert bar == [150, 150], "the bar ends full: value == max == the number of new entries"
    assert page.find("#import-progress").is_displayed()
    assert page.text("#import-progress-text") == "150 / 150 entrées ré-encodées"
    assert page.find("#import-progress-text").get_attribute("aria-live") == "polite"
    assert page.find("#import-submit").is_enabled()
    changes = page.js("return window.__changes")
    values = [change[3] for change in changes if change[0] == "import-progress"]
    assert values == ["0", "64", "128", "150"], "the bar moves with each batch the server embeds"
    assert ["import-submit", "disabled", None, ""] in changes, "the button is disabled while it runs"
    page.screenshot("transfer-progress")
    assert len(page.api.get("/staff/memory", params={"limit": 200}).json()["items"]) == 150

    page.click("#import-submit")  # the same file again: nothing new, and the bar still ends full
    page.wait_text("#import-result", "0 entrée importée, 150 déjà présentes.")
    assert page.text("#import-progress-text") == "0 / 0 entrées ré-encodées"


# Stands in for fetch on the import route only: answers `body` with `type`, and keeps the request's headers.


FAKE_IMPORT = """
const [body, type] = arguments;
const real = window.__realFetch ?? window.fetch;
window.__realFetch = real;
window.__sent = null;
window.fetch = (url, init) => {
  if (!String(url).includes('/import')) return real(url, init);
  window.__sent = {url: String(url), headers: init.headers};
  const bytes = new TextEncoder().encode(body);
  const stream = new ReadableStream({start(c) {
    for (let i = 0; i < bytes.length; i += 5) c.enqueue(bytes.slice(i, i + 5));
    c.close();
  }});
  return Promise.resolve(new Response(stream, {status: 200, headers: {'content-type': type}}));
};
"""


def test_import_stream_skips_pings_and_shows_an_error_sent_midway(page: StaffPage, tmp_path: Path) -> None:
    upload = tmp_path / "one.jsonl"
    upload.write_text(json.dumps({"question": QUESTION, "answer": ANSWER}) + "\n", encoding="utf-8")
    failing = (
        ": ping - 2025-01-01 00:00:00\r\n\r\n"
        'event: progress\r\ndata: {"type": "progress", "done": 64, "total": 150}\r\n\r\n'
        ": ping\r\n\r\n"
        'event: error\r\ndata: {"type": "error", "code": "internal_error", '
        '"message": "the import failed; nothing was stored"}\r\n\r\n'
    )
    page.sign_in(hash_="#/transfer")
    page.js(FAKE_IMPORT, failing, "text/event-stream; charset=utf-8")
    page.type("#import-file", str(upload))
    page.click("#import-submit")
    # The error's code says it in French; its English text is for the API's other readers.
    page.wait_text("#import-result .error", "L'import a échoué : Une erreur s'est produite de notre côté")
    assert "Rien n'a été importé." in page.text("#import-result")
    assert page.text("#import-progress-text") == "64 / 150 entrées ré-encodées", "the bar says how far it got"
    sent = page.js("return window.__sent")
    assert sent["headers"]["Accept"] == "text/event-stream"
    assert sent["headers"]["Authorization"] == "Bearer sa"
    assert parse_qs(urlsplit(sent["url"]).query) == {"skip_bad_lines": ["false"]}, "no key in the address"

    # A server that answers plain JSON (no stream) is read as before, and no bar is left showing.
    report = {"imported": 1, "already_present": 0, "skipped": []}
    page.js(FAKE_IMPORT, json.dumps(report), "application/json")
    page.click("#import-submit")
    page.wait_text("#import-result", "1 entrée importée, 0 déjà présente.")
    assert not page.find("#import-progress").is_displayed()
