"""The staff page's routes and files, without a browser: headers, the allow-list, and the rules its
code keeps (no markup built from strings, nothing inline that the CSP would refuse, nothing remote)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from memory_guard.api.ui import ASSETS
from tests.server import LiveApp

STATIC = Path(__file__).parents[2] / "src" / "memory_guard" / "api" / "static"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def test_the_page_needs_no_key_and_sends_the_security_headers(live: LiveApp) -> None:
    with httpx.Client(base_url=live.base_url) as anonymous:
        page = anonymous.get("/staff/memory/ui")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.headers["content-security-policy"] == CSP
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["referrer-policy"] == "no-referrer"
        assert page.headers["cache-control"] == "no-store"
        assert '<script type="module" src="ui/main.js">' in page.text

        script = anonymous.get("/staff/memory/ui/main.js")
        assert script.status_code == 200
        assert script.headers["content-type"] == "text/javascript; charset=utf-8"
        assert script.headers["content-security-policy"] == CSP
        assert anonymous.get("/staff/memory/ui/app.css").headers["content-type"] == "text/css; charset=utf-8"
        assert anonymous.get("/staff/memory/ui/favicon.svg").headers["content-type"] == "image/svg+xml"

        # The data stays behind the key.
        assert anonymous.get("/staff/memory/stats").status_code == 401


@pytest.mark.parametrize(
    "path",
    [
        "/staff/memory/ui/index.htm",
        "/staff/memory/ui/secrets.env",
        "/staff/memory/ui/..%2F..%2Fui.py",
        "/staff/memory/ui/%2e%2e",
        "/staff/memory/ui/MAIN.JS",
    ],
)
def test_only_the_listed_files_are_served(live: LiveApp, path: str) -> None:
    with httpx.Client(base_url=live.base_url) as anonymous:
        response = anonymous.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_allow_list_is_the_static_folder() -> None:
    on_disk = {path.name for path in STATIC.iterdir() if path.is_file()}
    assert on_disk == {*ASSETS, "index.html"}


def test_imports_name_only_served_files() -> None:
    for script in STATIC.glob("*.js"):
        for name in re.findall(r'from "\./([^"]+)"', script.read_text(encoding="utf-8")):
            assert name in ASSETS, f"{script.name} imports {name}, which the page route does not serve"


def test_the_code_never_builds_markup_from_strings_nor_inlines_what_the_csp_refuses() -> None:
    forbidden_js = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function")
    for script in STATIC.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        assert not forbidden_js.search(text), f"{script.name} builds markup or code from strings"
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", ""), script.name
        assert "https://" not in text, f"{script.name} loads something from elsewhere"
        # Inline styles are refused by the CSP (the browser tests would see the violation in the console).
        assert not re.search(r"\.style\b|cssText|[\"']style[\"']", text), f"{script.name} sets inline styles"
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"\sstyle=|\son\w+=|<script(?![^>]*\bsrc=)", html), "inline style, handler or script"
    assert "https://" not in html and "http://" not in html
    assert "@import" not in (STATIC / "app.css").read_text(encoding="utf-8")
    assert "url(" not in (STATIC / "app.css").read_text(encoding="utf-8")


def test_no_static_file_is_over_400_lines() -> None:
    for path in STATIC.iterdir():
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines <= 400, f"{path.name} has {lines} lines"


def test_english_has_every_french_word() -> None:
    def keys(name: str) -> set[str]:
        return set(re.findall(r'^  "([\w.]+)":', (STATIC / name).read_text(encoding="utf-8"), re.MULTILINE))

    french, english = keys("i18n-fr.js"), keys("i18n-en.js")
    assert french and french == english, sorted(french ^ english)
