"""The interactive API docs at /docs, in a real browser: Swagger UI renders every operation of the
OpenAPI document from files the app serves itself, with nothing fetched from another origin and
nothing refused by the page's Content-Security-Policy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from memory_guard.api.ui import SECURITY_HEADERS
from tests.browser import WAIT_S
from tests.server import LiveApp

if TYPE_CHECKING:
    from selenium.webdriver import Chrome as WebDriver

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _operations(live: LiveApp) -> int:
    spec = httpx.get(f"{live.base_url}/openapi.json").json()
    return sum(len(operations) for operations in spec["paths"].values())


def test_the_docs_render_every_operation_offline(driver: WebDriver, live: LiveApp) -> None:
    expected = _operations(live)
    driver.get_log("browser")  # type: ignore[no-untyped-call]  # what earlier tests left
    driver.get(f"{live.base_url}/docs")

    def rendered(d: WebDriver) -> bool:
        return len(d.find_elements(By.CSS_SELECTOR, ".opblock")) >= expected

    WebDriverWait(driver, WAIT_S).until(rendered, "Swagger UI did not render the operations")
    paths = {
        e.get_attribute("data-path") for e in driver.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")
    }
    assert {"/chat", "/staff/memory", "/staff/memory/{entry_id}", "/healthz"} <= paths
    # The bearer scheme gives the page its Authorize button.
    assert driver.find_elements(By.CSS_SELECTOR, ".auth-wrapper .authorize")

    loaded: list[str] = driver.execute_script(
        "return performance.getEntriesByType('resource').map(entry => entry.name)"
    )
    assert any(url.endswith("/docs/swagger-ui-bundle.js") for url in loaded), loaded
    assert any(url.endswith("/openapi.json") for url in loaded), loaded
    remote = [url for url in [driver.current_url, *loaded] if urlsplit(url).hostname not in LOOPBACK]
    assert not remote, f"the docs fetched from another origin: {remote}"
    logs: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    problems = [entry["message"] for entry in logs if entry["level"] in {"SEVERE", "WARNING"}]
    assert not problems, f"the docs page logged: {problems}"


def test_the_docs_page_keeps_a_strict_policy(live: LiveApp) -> None:
    with httpx.Client(base_url=live.base_url) as anonymous:
        page = anonymous.get("/docs")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        # The staff page's own: nothing from another origin, nothing inline, nothing evaluated.
        assert page.headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
        assert "<script>" not in page.text, "an inline script, which the policy would refuse"
        bundle = anonymous.get("/docs/swagger-ui-bundle.js")
        assert bundle.status_code == 200
        assert bundle.headers["content-type"] == "text/javascript; charset=utf-8"
        assert anonymous.get("/docs/swagger-ui.css").headers["content-type"] == "text/css; charset=utf-8"
        assert anonymous.get("/docs/index.html").status_code == 404
        assert anonymous.get("/docs/..%2Fdocs.py").status_code == 404
