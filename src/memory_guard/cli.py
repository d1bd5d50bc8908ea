"""The `memory-guard` command: `serve`, `reindex`, `export` and `import`, and `--version`."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import importlib.metadata
import ipaddress
import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from pydantic import SecretStr, ValidationError

from memory_guard.core.field_errors import describe_field_errors
from memory_guard.settings import Settings

logger = logging.getLogger(__name__)

DEV_TENANT = "default"  # the tenant of dev mode, and of these commands unless told otherwise
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
        problems = describe_field_errors(exc.errors(), unnamed="settings", spell=str.upper)
        sys.exit(f"memory-guard: invalid settings: {problems}")


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from memory_guard.agent.profiles import AgentDirectory
    from memory_guard.api.app import create_app
    from memory_guard.db.backend import supported_target
    from memory_guard.ops.heap import limit_heap_retention
    from memory_guard.ops.request_log import configure_logging

    settings = _settings()
    configure_logging(settings.log_level, settings.log_format)
    if args.key_file is not None and settings.dev_mode:
        settings = _with_key_file(settings, args.key_file)
    host = args.host or LOOPBACK
    if settings.dev_mode and not _is_loopback(host):
        sys.exit(
            f"memory-guard: refusing to listen on {host} in dev mode (no API_KEYS configured): "
            "every caller would be tenant 'default' with staff rights. Set API_KEYS or use 127.0.0.1."
        )
    try:
        # Checked here too so that a broken file is one clear line, not a start-up traceback.
        AgentDirectory.from_file(settings.agents_file)
        supported_target(settings)
    except ValueError as exc:
        sys.exit(f"memory-guard: {exc}")
    limit_heap_retention()  # before the models load, whose buffers it is for
    # uvicorn's loggers go through ours (log_config=None), in LOG_FORMAT; its access line is off:
    # the app logs one of its own per request, with its id, tenant and decision.
    uvicorn.run(
        create_app(settings),
        host=host,
        port=args.port,
        log_level=settings.log_level.lower(),
        log_config=None,
        access_log=False,
    )
    return 0


def _with_key_file(settings: Settings, path: Path) -> Settings:
    from memory_guard.ops.key_file import load_or_create

    try:
        held = load_or_create(path, DEV_TENANT)
    except (OSError, ValueError) as exc:
        sys.exit(f"memory-guard: cannot use the key file {path}: {exc}")
    if held.created:
        logger.warning(
            "no API_KEYS: wrote a new staff key of tenant %r to %s (readable by this user only); "
            "send it as `Authorization: Bearer <key>`, and set API_KEYS to use keys of your own",
            DEV_TENANT,
            path,
        )
    else:
        logger.info("no API_KEYS: using the keys of %s", path)
    return settings.model_copy(update={"api_keys": SecretStr(held.api_keys)})


def _version() -> str:
    try:
        return importlib.metadata.version("memory-guard")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


async def _reindex(everything: bool) -> int:
    from tqdm import tqdm

    from memory_guard.db.backend import open_database
    from memory_guard.embeddings.factory import build_embedder
    from memory_guard.memory.reindex import reindex
    from memory_guard.memory.sqlite_store import SqliteMemoryStore
    from memory_guard.memory.variant_store import SqliteVariantStore

    settings = _settings()
    db = await open_database(settings)
    embedder = build_embedder(settings)
    bar = tqdm(unit="entry", desc=f"re-embedding with {embedder.model_id}")
    try:
        done = await reindex(
            SqliteMemoryStore(db),
            embedder,
            everything,
            on_total=lambda total: setattr(bar, "total", total),
            on_progress=bar.update,
            variants=SqliteVariantStore(db),
        )
    finally:
        bar.close()
        await embedder.aclose()
        await db.close()
    print(f"re-embedded {done} entries with {embedder.model_id}")
    print("a running service loads vectors at start: restart it to serve the new ones")
    return 0


async def _export(args: argparse.Namespace) -> int:
    from memory_guard.memory.entry import Status
    from memory_guard.memory.store import EntryFilter
    from memory_guard.services import Services

    services = await Services.open(_settings())
    where = EntryFilter(status=Status(args.status) if args.status else None)
    count = 0
    try:
        with _output(args.output) as out:
            async for line in services.transfer.export(args.tenant, where):
                out.write(line)
                count += 1
    except OSError as exc:
        sys.exit(f"memory-guard: cannot write {args.output}: {exc}")
    finally:
        await services.aclose()
    print(f"exported {count} entries of tenant {args.tenant!r}", file=sys.stderr)
    return 0


@contextmanager
def _output(path: str) -> Iterator[TextIO]:
    if path == "-":
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as handle:
        yield handle


def _read_lines(path: str) -> list[str]:
    try:
        # Lines end at a newline only, never at U+2028 as str.splitlines would have it.
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return [line.removesuffix("\n").removesuffix("\r") for line in handle]
    except (OSError, UnicodeDecodeError) as exc:
        sys.exit(f"memory-guard: cannot read {path}: {exc}")


def _operator() -> str:
    try:
        return f"command line ({getpass.getuser()})"
    except (OSError, KeyError):  # no user name in some containers
        return "command line"


async def _import(args: argparse.Namespace, lines: list[str]) -> int:
    from tqdm import tqdm

    from memory_guard.core.errors import MemoryGuardError
    from memory_guard.services import Services

    services = await Services.open(_settings())
    try:
        plan = await services.transfer.plan_import(args.tenant, lines, args.skip_bad_lines)
        with tqdm(total=len(plan.fresh), unit="entry", desc=f"importing into {args.tenant!r}") as bar:
            async for progress in services.transfer.run_import(plan, _operator()):
                bar.update(progress.done - bar.n)
    except MemoryGuardError as exc:
        for line in exc.extra.get("lines", []):
            print(f"line {line['line']}: {line['message']}", file=sys.stderr)
        sys.exit(f"memory-guard: {exc.message}")
    finally:
        await services.aclose()
    report = plan.report
    for skipped in report.skipped:
        print(f"skipped line {skipped.line}: {skipped.message}", file=sys.stderr)
    print(
        f"imported {report.imported} entries, {report.already_present} already present, "
        f"{len(report.skipped)} bad lines skipped"
    )
    print("a running service loads vectors at start: restart it to serve the imported entries")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="memory-guard",
        description="A semantic response memory in front of an OpenAI-compatible LLM. "
        "Settings come from the environment, then from .env (see .env.example).",
    )
    parser.add_argument("--version", action="version", version=f"memory-guard {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="run the HTTP service",
        description="Run the HTTP service (chat, staff and operations routes, docs/API.md). With no "
        "API_KEYS it runs in dev mode and listens on loopback only.",
    )
    serve.add_argument("--host", default=None, help=f"address to listen on (default {LOOPBACK})")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    serve.add_argument(
        "--key-file",
        type=Path,
        default=None,
        help="with no API_KEYS: read the keys from this file (API_KEYS items, one per line), writing it "
        f"first with one new staff key of tenant {DEV_TENANT!r} when it does not exist",
    )
    reindex = commands.add_parser(
        "reindex",
        help="re-embed stored questions with the configured model",
        description="Re-embed every stored question with the configured embedding model, after "
        "EMBEDDING_PROVIDER or EMBEDDING_MODEL changed; restart a running service afterwards.",
    )
    reindex.add_argument(
        "--stale-only",
        action="store_true",
        help="re-embed only entries whose vector is not from the configured model (resumes a cut run)",
    )
    export = commands.add_parser(
        "export",
        help="write a tenant's entries as JSON Lines",
        description="Write a tenant's memory entries as JSON Lines, one entry per line, as `import` reads.",
    )
    export.add_argument("--tenant", default=DEV_TENANT, help=f"whose entries (default {DEV_TENANT!r})")
    export.add_argument("--status", choices=["auto", "validated", "obsolete"], help="only this status")
    export.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")
    load = commands.add_parser(
        "import",
        help="add JSON Lines entries to a tenant's memory, re-embedded",
        description="Add the entries of a JSON Lines file to a tenant's memory, each question "
        "re-embedded with the configured model; entries already present are left as they are.",
    )
    load.add_argument("file", help="the JSON Lines file (one entry per line, as `export` writes)")
    load.add_argument("--tenant", default=DEV_TENANT, help=f"into whose memory (default {DEV_TENANT!r})")
    load.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="import the good lines of a file with bad ones (by default a bad line imports nothing)",
    )
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "export":
        return asyncio.run(_export(args))
    if args.command == "import":
        return asyncio.run(_import(args, _read_lines(args.file)))
    return asyncio.run(_reindex(everything=not args.stale_only))


if __name__ == "__main__":
    raise SystemExit(main())
