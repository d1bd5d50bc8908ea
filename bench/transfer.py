"""How long moving a memory takes: JSON Lines import (re-embedding included) and export.

Run: python bench/transfer.py [--entries 2000] [--model multilingual-e5-small-onnx]
Imports `--entries` generated FAQ entries into an empty SQLite file with the local model,
then imports the same file again (every line already present) and exports it. One line per figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.questions import faq_questions  # noqa: E402
from memory_guard.memory.store import EntryFilter  # noqa: E402
from memory_guard.services import Services  # noqa: E402
from memory_guard.settings import Settings  # noqa: E402

TENANT = "bench"


def jsonl_lines(count: int) -> list[str]:
    return [
        json.dumps({"question": faq.question, "answer": faq.answer, "tags": ["bench"]}, ensure_ascii=False)
        for faq in faq_questions(count)
    ]


async def run(entries: int, model: str | None) -> list[str]:
    lines = jsonl_lines(entries)
    size = sum(len(line.encode()) + 1 for line in lines)
    with tempfile.TemporaryDirectory(prefix="mg-transfer-") as tmp:
        settings = Settings(
            _env_file=None,
            memory_db_path=Path(tmp) / "transfer.db",
            embedding_provider="local",
            embedding_model=model,
        )
        services = await Services.open(settings)
        try:
            await services.guard.embed("warm-up")
            start = time.perf_counter()
            report = await services.transfer.import_lines(TENANT, lines, "bench")
            first = time.perf_counter() - start
            start = time.perf_counter()
            again = await services.transfer.import_lines(TENANT, lines, "bench")
            second = time.perf_counter() - start
            start = time.perf_counter()
            exported = [line async for line in services.transfer.export(TENANT, EntryFilter())]
            export_s = time.perf_counter() - start
        finally:
            await services.aclose()
    model_id = services.embedder.model_id
    return [
        f"transfer_setup: model={model_id} entries={entries} file={size / 1e6:.2f} MB",
        f"import_new: {report.imported} entries in {first:.2f} s = {report.imported / first:.0f} entries/s "
        f"({first / entries * 1000:.2f} ms per entry, re-embedding included)",
        f"import_again: {again.already_present} already present, {again.imported} imported, "
        f"in {second:.2f} s",
        f"export: {len(exported)} entries in {export_s:.2f} s = {len(exported) / export_s:.0f} entries/s",
    ]


def main(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=2000, help="entries in the file (default 2000)")
    parser.add_argument("--model", default=None, help="local EMBEDDING_MODEL (default: the service's)")
    args = parser.parse_args(argv)
    out = asyncio.run(run(args.entries, args.model))
    for line in out:
        print(line, flush=True)
    return out


if __name__ == "__main__":
    main()
