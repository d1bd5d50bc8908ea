"""A headless Chromium driven by Selenium, and a small page object for the staff console.

Only the Debian chromium / chromedriver binaries are used: Selenium Manager is never asked to fetch a
browser (there is no network on CI).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import httpx
import pytest

from tests.server import LiveApp

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOTS = Path(__file__).parent / "screenshots"
WAIT_S = 10.0

T = TypeVar("T")

try:
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver import Chrome as WebDriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webelement import WebElement
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # the module still imports, so that the fixture can say what is missing
    webdriver = None  # type: ignore[assignment]


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if webdriver is None:
        return "selenium is not installed (pip install -e '.[dev]')"
    absent = [path for path in (CHROMIUM, CHROMEDRIVER) if not (Path(path).exists() or shutil.which(path))]
    if absent:
        return f"{' and '.join(absent)} not found: apt-get install chromium chromium-driver"
    return None


def start_browser() -> WebDriver:
    reason = missing_browser()
    if reason is not None:
        # CI must not pass by skipping the browser tests; a developer machine may lack a browser.
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the staff page tests need a browser: {reason}", pytrace=False)
        pytest.skip(reason)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1366,900"):
        options.add_argument(argument)
    options.add_argument("--lang=fr-FR")
    # The console log is read after each test: a CSP violation or an uncaught error fails it.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


class StaffPage:
    """The console at /staff/memory/ui of one live app, and a staff HTTP client on the same tenant."""

    def __init__(self, driver: WebDriver, live: LiveApp, api: httpx.Client) -> None:
        self.driver = driver
        self.live = live
        self.api = api

    @property
    def url(self) -> str:
        return f"{self.live.base_url}/staff/memory/ui"

    def open(self, hash_: str = "") -> None:
        self.driver.get(self.url + hash_)

    def wait(self, condition: Callable[[WebDriver], T], message: str = "") -> T:
        return WebDriverWait(self.driver, WAIT_S).until(condition, message)

    def find(self, css: str) -> WebElement:
        """The first element matching `css`, waiting for it to appear."""
        return cast("WebElement", self.wait(lambda d: _first(d, css), f"nothing matches {css!r}"))

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css: str) -> str:
        return self.find(css).text

    def wait_text(self, css: str, expected: str) -> WebElement:
        """Waits until an element matching `css` shows `expected` (a substring)."""

        def found(driver: WebDriver) -> WebElement | None:
            for element in driver.find_elements(By.CSS_SELECTOR, css):
                try:
                    if expected in element.text:
                        return element
                except WebDriverException:  # replaced while being read: look again
                    continue
            return None

        return cast("WebElement", self.wait(found, f"{css!r} never showed {expected!r}"))

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def sign_in(self, key: str = "sa", hash_: str = "") -> None:
        self.open(hash_)
        self.type("#key", key + "\n")
        self.find("#signout")

    def act(self, css: str, action: Callable[[WebElement], None]) -> None:
        """`action` on the element matching `css`, found again if the page re-rendered it between
        finding and acting (a list redrawn by a late answer)."""
        for attempt in range(3):
            try:
                action(self.find(css))
                return
            except StaleElementReferenceException:
                if attempt == 2:
                    raise

    def type(self, css: str, text: str, clear: bool = False) -> None:
        def typing(element: WebElement) -> None:
            if clear:
                element.clear()
            element.send_keys(text)

        self.act(css, typing)

    def click(self, css: str) -> None:
        self.act(css, lambda element: element.click())

    def choose(self, css: str, value: str) -> None:
        self.act(css, lambda element: Select(element).select_by_value(value))

    def notice(self, expected: str) -> None:
        self.wait_text("#status", expected)

    def screenshot(self, name: str, full: bool = False) -> Path:
        """Saves the view; `full` widens the window to the whole page height for the shot."""
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        if full:
            height = int(self.js("return document.documentElement.scrollHeight"))
            self.driver.set_window_size(1366, max(900, height + 140))
        try:
            self.driver.save_screenshot(str(path))
        finally:
            if full:
                self.driver.set_window_size(1366, 900)
        return path

    def console(self) -> list[dict[str, Any]]:
        """The console messages since the last call (reading them empties the log)."""
        entries: list[dict[str, Any]] = self.driver.get_log("browser")  # type: ignore[no-untyped-call]
        return entries

    def console_problems(self) -> list[str]:
        """Console messages that mean the page broke: CSP refusals and uncaught errors."""
        entries = self.console()
        return [
            entry["message"]
            for entry in entries
            if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]
        ]


def _first(driver: WebDriver, css: str) -> WebElement | None:
    found = driver.find_elements(By.CSS_SELECTOR, css)
    return found[0] if found else None
