"""The interactive API docs at /docs: Swagger UI over /openapi.json.

Its files come from an installed package (swagger-ui-bundle-v2) and are served by this app, so the
docs work where no CDN can be reached. Like the staff page, the docs page runs no inline code and
loads nothing from another origin: it has the same Content-Security-Policy.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from fastapi import APIRouter, Response
from swagger_ui_bundle import swagger_ui_path

from memory_guard.api.ui import SECURITY_HEADERS
from memory_guard.core.errors import NotFound

router = APIRouter(prefix="/docs", include_in_schema=False)

_JS = "text/javascript; charset=utf-8"
_OURS = files("memory_guard.api").joinpath("docs_page")
_STAFF_PAGE = files("memory_guard.api").joinpath("static")
_PAGE = "docs.html"
# Every file the page may load: a name outside this list is never read from disk.
ASSETS = {
    "swagger-ui.css": (swagger_ui_path, "text/css; charset=utf-8"),
    "swagger-ui-bundle.js": (swagger_ui_path, _JS),
    "docs.js": (_OURS, _JS),  # what starts Swagger UI: a file, as the policy runs no inline script
    "favicon.svg": (_STAFF_PAGE, "image/svg+xml"),
}
# Swagger UI keeps to the staff page's policy once started from a file (docs.js). no-cache: the
# browser may keep the files but asks again, so an upgrade shows at once.
_HEADERS = {**SECURITY_HEADERS, "Cache-Control": "no-cache"}


@cache
def _read(name: str) -> bytes:
    """The page itself, or one of ASSETS."""
    folder = _OURS if name == _PAGE else ASSETS[name][0]
    return folder.joinpath(name).read_bytes()


@router.get("")
def page() -> Response:
    return Response(_read(_PAGE), media_type="text/html; charset=utf-8", headers=_HEADERS)


@router.get("/{asset}")
def asset(asset: str) -> Response:
    found = ASSETS.get(asset)
    if found is None:
        raise NotFound(f"the docs have no file named {asset!r}")
    return Response(_read(asset), media_type=found[1], headers=_HEADERS)
