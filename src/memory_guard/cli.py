"""The `memory-guard` command: `serve` and `reindex`."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from memory_guard.settings import Settings

LOOPBACK = "127.0.0.1"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])).upper() or 'settings'}: {e['msg']}" for e in exc.errors()
        )
        sys.exit(f"memory-guard: invalid settings: {problems}")


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from memory_guard.agent.profiles import AgentDirectory
    from memory_guard.api.app import create_app

    settings = _settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    host = args.host or LOOPBACK
    if settings.dev_mode and not _is_loopback(host):
        sys.exit(
            f"memory-guard: refusing to listen on {host} in dev mode (no API_KEYS configured): "
            "every caller would be tenant 'default' with staff rights. Set API_KEYS or use 127.0.0.1."
        )
    try:
        # Checked here too so that a broken file is one clear line, not a start-up traceback.
        AgentDirectory.from_file(settings.agents_file)
    except ValueError as exc:
        sys.exit(f"memory-guard: {exc}")
    uvicorn.run(create_app(settings), host=host, port=args.port, log_level=settings.log_level.lower())
    return 0


async def _reindex(everything: bool) -> int:
    from tqdm import tqdm

    from memory_guard.db.database import Database
    from memory_guard.embeddings.factory import build_embedder
    from memory_guard.memory.reindex import reindex
    from memory_guard.memory.store import SqliteMemoryStore

    settings = _settings()
    db = await Database.open(settings.memory_db_path)
    embedder = build_embedder(settings)
    bar = tqdm(unit="entry", desc=f"re-embedding with {embedder.model_id}")
    try:
        done = await reindex(
            SqliteMemoryStore(db),
            embedder,
            everything,
            on_total=lambda total: setattr(bar, "total", total),
            on_progress=bar.update,
        )
    finally:
        bar.close()
        await embedder.aclose()
        await db.close()
    print(f"re-embedded {done} entries with {embedder.model_id}")
    print("a running service loads vectors at start: restart it to serve the new ones")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="memory-guard",
        description="A semantic response memory in front of an OpenAI-compatible LLM. "
        "Settings come from the environment, then from .env (see .env.example).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", default=None, help=f"address to listen on (default {LOOPBACK})")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    reindex = commands.add_parser("reindex", help="re-embed stored questions with the configured model")
    reindex.add_argument(
        "--stale-only",
        action="store_true",
        help="re-embed only entries whose vector is not from the configured model (resumes a cut run)",
    )
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    return asyncio.run(_reindex(everything=not args.stale_only))


if __name__ == "__main__":
    raise SystemExit(main())
