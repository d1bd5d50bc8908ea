"""The streaming example of examples/ and the README's quick start run as written against the real
server, with the official `openai` client."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.server import LiveApp
from tests.upstream import FakeUpstream, Reply

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Quelle est la durée de la garantie de parfait achèvement ?"


def run_example(live: LiveApp, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_GUARD_URL": live.base_url, "MEMORY_GUARD_KEY": "ka"}
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "openai_client.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def test_the_streaming_example_prints_the_answer_and_where_it_came_from(
    live: LiveApp, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="Un an à compter de la réception."))
    first = run_example(live, QUESTION)
    assert first.stdout == "Un an à compter de la réception.\n"
    assert "[decision: miss]" in first.stderr
    second = run_example(live, QUESTION)
    assert second.stdout == "Un an à compter de la réception.\n"
    assert "[decision: direct]" in second.stderr
    assert fresh_upstream.calls == 1


def test_the_readme_quick_start_runs(live: LiveApp, fresh_upstream: FakeUpstream) -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", readme, re.S)
    fresh_upstream.push(Reply(text="Un an."))
    code = code.replace("http://127.0.0.1:8000", live.base_url).replace('api_key="dev"', 'api_key="ka"')
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "Un an." in done.stdout and "miss" in done.stdout
