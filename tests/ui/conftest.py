"""One headless Chromium for every staff page test; each test gets its own app (a new origin, so the
page's storage starts empty) and fails if the page logged an error or a CSP violation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.browser import StaffPage, start_browser
from tests.server import LiveApp
from tests.ui.support import finish

if TYPE_CHECKING:
    from selenium.webdriver import Chrome as WebDriver


@pytest.fixture(scope="session")
def driver() -> Iterator[WebDriver]:
    browser = start_browser()
    yield browser
    browser.quit()


@pytest.fixture
def live(app_factory: Callable[..., LiveApp]) -> LiveApp:
    # The page shows what the cross-encoder read: run it, which `auto` would not for the test embedder.
    return app_factory(memory_cross_encoder="on")


@pytest.fixture
def page(driver: WebDriver, live: LiveApp, acme_staff: httpx.Client) -> Iterator[StaffPage]:
    staff_page = StaffPage(driver, live, acme_staff)
    staff_page.console()  # drop what an earlier test left in the log
    yield staff_page
    finish(staff_page)
