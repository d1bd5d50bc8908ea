"""Read-your-writes for the bookkeeping written after answers.

A direct hit's lookup log, usage count and history are written after the answer is sent
(`db.bookkeeping`). Every request other than a chat turn may read them (stats, usage,
served hits, a conversation's messages, feedback on the answer just received), so it first
waits until what was already answered is written. Chat turns never wait: that is the point.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

# Requests that need nothing written beforehand: chat turns (the hot path), probes, the API's
# description, and the files of the staff page and of the docs (they hold no data, and must load even
# while the writer is held up).
_PROBES = frozenset({"/healthz", "/readyz", "/metrics", "/openapi.json"})
_PAGE_FILES = ("/staff/memory/ui", "/docs")


def _is_chat_turn(method: str, path: str) -> bool:
    """A question to answer, through our own SSE route or the OpenAI-compatible one."""
    return method == "POST" and (
        path in ("/chat", "/v1/chat/completions") or (path.startswith("/chat/") and path.endswith("/message"))
    )


class ReadYourWrites:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if (
                path not in _PROBES
                and not path.startswith(_PAGE_FILES)
                and not _is_chat_turn(scope["method"], path)
            ):
                services = getattr(scope["app"].state, "services", None)
                if services is not None:
                    await services.bookkeeping.flush()
        await self.app(scope, receive, send)
