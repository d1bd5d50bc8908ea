"""The staff page in a real headless Chromium: signing in, the list, and what staff do to an entry.

Each test seeds its data through the HTTP API, works the page as a person would (keyboard and clicks),
and checks the result through the API again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from tests.browser import StaffPage
from tests.conftest import KEYS, client_for
from tests.server import LiveApp

if TYPE_CHECKING:
    from selenium.webdriver import Chrome as WebDriver

from tests.ui.support import CARBON, DECENNIAL, KEY_SLOT, QUESTION, XSS, entry_of, faq, finish, row_ids


def test_sign_in_refuses_unknown_and_client_keys(page: StaffPage) -> None:
    page.open()
    page.type("#key", "ka\n")
    page.wait_text("#signin-error", "Cette clé n'est pas une clé staff.")
    page.type("#key", "not-a-key\n", clear=True)
    page.wait_text("#signin-error", "Clé inconnue.")
    assert page.all("#signout") == []
    page.screenshot("signin")
    page.type("#key", "sa\n", clear=True)
    page.find("#signout")
    page.wait_text("#list-summary", "Aucune entrée")


def test_the_key_lives_in_this_tab_only_and_sign_out_forgets_it(
    app_factory: Callable[..., LiveApp], driver: WebDriver
) -> None:
    secret = "staff-7Hq2-long-secret"
    live = app_factory(api_keys=f"{KEYS},{secret}:acme:staff")
    with client_for(live, secret) as api:
        page = StaffPage(driver, live, api)
        page.console()
        page.sign_in(secret)
        assert page.js(f"return sessionStorage.getItem('{KEY_SLOT}')") == secret
        stored = page.js(
            "return Object.keys(localStorage).map(k => k + '=' + localStorage.getItem(k)).join(';')"
        )
        assert secret not in stored
        assert secret not in driver.current_url
        assert page.js("return document.cookie") == ""

        page.driver.refresh()  # the same tab keeps the session
        page.find("#signout")
        page.choose("#lang", "en")
        page.wait_text("nav", "Entries")
        page.driver.refresh()  # the language is remembered, in localStorage; the key is not there
        page.wait_text("nav", "Audit log")
        assert page.js("return JSON.stringify({...localStorage})") == '{"memory-guard.lang":"en"}'

        page.click("#signout")
        page.find("#signin")
        page.notice("You are signed out")
        assert page.js(f"return sessionStorage.getItem('{KEY_SLOT}')") is None
        assert page.all("nav") == []
        finish(page)


def test_search_and_filters_find_the_right_entry(page: StaffPage) -> None:
    retention = faq(page.api, QUESTION, tags=["marchés"])
    carbon = faq(page.api, CARBON, "Scopes 1, 2 et 3.", project="ESG")
    decennial = faq(page.api, DECENNIAL, "Dix ans à compter de la réception.")
    page.sign_in()
    page.wait(lambda d: len(row_ids(page)) == 3, "the three entries are listed")
    assert row_ids(page) == [str(decennial["id"]), str(carbon["id"]), str(retention["id"])]
    page.screenshot("list")

    page.type("#list-query", "empreinte carbone PME\n")
    page.wait(lambda d: row_ids(page)[:1] == [str(carbon["id"])], "the carbon entry comes first")
    assert "query=" in page.driver.current_url

    page.api.patch(f"/staff/memory/{decennial['id']}", json={"status": "obsolete"})
    page.act("#list-query", lambda element: element.clear())
    page.choose("#list-filters select[name=status]", "obsolete")
    page.click("#list-search")
    page.wait(lambda d: row_ids(page) == [str(decennial["id"])], "only the obsolete entry")

    page.click("#list-reset")
    page.type("#list-filters input[name=tag]", "marchés\n")
    page.wait(lambda d: row_ids(page) == [str(retention["id"])], "only the tagged entry")

    # The keyboard opens an entry: Enter on its link.
    page.act(f"tr[data-entry-id='{retention['id']}'] a", lambda link: link.send_keys("\n"))
    page.wait_text("#entry-question", QUESTION)


def test_validate_an_auto_entry(page: StaffPage) -> None:
    entry = faq(page.api, tags=["marchés"])
    page.api.patch(f"/staff/memory/{entry['id']}", json={"status": "auto"})
    assert entry_of(page.api, entry["id"])["status"] == "auto"
    page.sign_in(hash_=f"#/entry/{entry['id']}")
    page.find("h2 .badge[data-status='auto']")
    page.click("#entry-validate")
    page.notice(f"Entrée n° {entry['id']} validée.")
    page.find("h2 .badge[data-status='validated']")
    assert entry_of(page.api, entry["id"])["status"] == "validated"
    assert not page.find("#entry-validate").is_enabled(), "nothing left to validate"
    page.wait_text("#entry-history tr[data-action='validate']", "auto → validée")
    page.screenshot("entry", full=True)


def test_edit_question_answer_tags_and_expiry(page: StaffPage) -> None:
    entry = faq(page.api)
    page.sign_in(hash_=f"#/entry/{entry['id']}")
    page.click("#entry-edit")
    new_question = "Quel est le taux de la retenue de garantie d'un marché public de travaux ?"
    page.type("#edit-question", new_question, clear=True)
    page.type("#edit-answer", "Cinq pour cent.\nElle est libérée à la réception.", clear=True)
    page.type("#edit-tags", "marchés, garantie, marchés", clear=True)
    expires = (datetime.now(UTC) + timedelta(days=30)).date().isoformat()
    # A date input is typed in the browser's locale format; its value is what the form reads.
    page.js("document.getElementById('edit-expires').value = arguments[0]", expires)
    page.screenshot("entry-edit")
    page.click("#edit-save")
    page.notice(f"Entrée n° {entry['id']} enregistrée.")
    page.wait_text("#entry-answer", "libérée")
    assert page.text("#entry-answer") == "Cinq pour cent.\nElle est libérée à la réception."
    assert page.text("#entry-question") == new_question

    saved = entry_of(page.api, entry["id"])
    assert saved["question"] == new_question
    assert saved["answer"] == "Cinq pour cent.\nElle est libérée à la réception."
    assert saved["tags"] == ["marchés", "garantie"]
    assert saved["expires_at"].startswith(f"{expires}T23:59:59")
    page.wait_text("#entry-history tr[data-action='edit']", "Question")


def test_mark_obsolete_only_after_confirming(page: StaffPage) -> None:
    entry = faq(page.api)
    page.sign_in(hash_=f"#/entry/{entry['id']}")
    page.click("#entry-obsolete")
    page.find("dialog[open]")
    page.click("#confirm-cancel")
    page.wait(lambda d: not page.all("dialog"), "the dialog closes")
    assert entry_of(page.api, entry["id"])["status"] == "validated"

    page.click("#entry-obsolete")
    page.click("dialog[open] #confirm-ok")
    page.notice(f"Entrée n° {entry['id']} marquée obsolète.")
    page.find("h2 .badge[data-status='obsolete']")
    assert entry_of(page.api, entry["id"])["status"] == "obsolete"


def test_delete_only_after_confirming(page: StaffPage) -> None:
    entry = faq(page.api)
    page.sign_in(hash_=f"#/entry/{entry['id']}")
    page.click("#entry-delete")
    page.find("dialog[open]")
    page.driver.switch_to.active_element.send_keys("\ue00c")  # Escape (selenium's Keys.ESCAPE) cancels
    page.wait(lambda d: not page.all("dialog"), "Escape closes the dialog")
    assert page.api.get(f"/staff/memory/{entry['id']}").status_code == 200

    page.click("#entry-delete")
    page.click("dialog[open] #confirm-ok")
    page.notice(f"Entrée n° {entry['id']} supprimée.")
    page.find("#list-summary")
    assert page.api.get(f"/staff/memory/{entry['id']}").status_code == 404

    # The page says why when the API refuses, instead of breaking.
    page.open(f"#/entry/{entry['id']}")
    page.wait_text(".view .error", "Erreur 404")


def test_stored_markup_is_shown_as_text_and_never_run(page: StaffPage) -> None:
    question = f"Question piégée {XSS}"
    answer = f"{XSS}\nFin."
    entry = faq(page.api, question, answer, tags=[XSS])
    page.sign_in()
    page.wait_text(f"tr[data-entry-id='{entry['id']}'] a", "<script>window.__xss=1</script>").click()
    page.wait_text("#entry-answer", "Fin.")
    assert page.text("#entry-answer") == answer
    assert page.text("#entry-question") == question
    page.wait_text("#entry-fields", XSS)
    page.wait_text("#entry-history", XSS)
    page.click("#entry-edit")
    assert page.find("#edit-answer").get_attribute("value") == answer
    # The CSP would stop the scripts anyway: the check that matters is that no element was made of them.
    assert page.js("return document.querySelectorAll('#app script, #app img').length") == 0
    assert page.js("return window.__xss") is None

    page.open("#/lookup")
    page.type("#lookup-question", question)
    page.click("#lookup-submit")
    page.wait_text("#lookup-result td.matched", XSS)
    assert page.js("return document.querySelectorAll('#app script, #app img').length") == 0
    assert page.js("return window.__xss") is None


def test_add_faq_opens_the_new_entry(page: StaffPage) -> None:
    page.sign_in(hash_="#/faq")
    page.type("#faq-question", DECENNIAL)
    page.type("#faq-answer", "Dix ans à compter de la réception des travaux.")
    page.type("#faq-project", "P1")
    page.type("#faq-tags", "assurance, travaux")
    page.click("#faq-submit")
    page.wait_text("#entry-question", DECENNIAL)
    (created,) = page.api.get("/staff/memory").json()["items"]
    page.notice(f"Entrée n° {created['id']} créée.")
    assert (created["source"], created["status"], created["project"]) == ("faq", "validated", "P1")
    assert created["tags"] == ["assurance", "travaux"]
