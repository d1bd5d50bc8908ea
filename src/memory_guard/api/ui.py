"""The staff web page (GET /staff/memory/ui): static files; its data comes from the staff routes.

The page holds no secret, so these routes need no key: the browser sends the staff key itself, on each
call to the data routes.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Response

from memory_guard.core.errors import NotFound

router = APIRouter(prefix="/staff/memory/ui")

# Every file the page may load, with its type: a name outside this list is never read from disk,
# whatever it looks like (no path from the request ever reaches the file system).
_JS = "text/javascript; charset=utf-8"
ASSETS: dict[str, str] = {
    "app.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
    "api.js": _JS,
    "chart.js": _JS,
    "dom.js": _JS,
    "i18n.js": _JS,
    "i18n-en.js": _JS,
    "i18n-fr.js": _JS,
    "main.js": _JS,
    "entry-edit.js": _JS,
    "entry-history.js": _JS,
    "entry-variants.js": _JS,
    "view-audit.js": _JS,
    "view-entry.js": _JS,
    "view-faq.js": _JS,
    "view-list.js": _JS,
    "view-lookup.js": _JS,
    "view-stats.js": _JS,
    "view-transfer.js": _JS,
    "view-proposals.js": _JS,
    "view-hits.js": _JS,
    "words.js": _JS,
    "format.js": _JS,
    "paged.js": _JS,
}

# Everything the page runs or draws comes from this origin: no inline script or style, no frame,
# no form posted elsewhere. A stored question or answer that slipped into the DOM as markup could not run.
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _read(name: str) -> bytes:
    return files("memory_guard.api").joinpath("static", name).read_bytes()


@router.get("", include_in_schema=False)
def page() -> Response:
    # no-store: a page that a staff member signed in on is not kept in a shared browser's cache.
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-store"}
    return Response(_read("index.html"), media_type="text/html; charset=utf-8", headers=headers)


@router.get("/{asset}", include_in_schema=False)
def asset(asset: str) -> Response:
    media_type = ASSETS.get(asset)
    if media_type is None:
        raise NotFound(f"the staff page has no file named {asset!r}")
    # no-cache, not no-store: the browser may keep them but asks again, so an upgrade is seen at once.
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-cache"}
    return Response(_read(asset), media_type=media_type, headers=headers)
