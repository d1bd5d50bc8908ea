"""The command line a new user meets: `--version`, a description for every command, and the keys of
a first start (`serve --key-file`, which the image runs). Each in a child process, as a user runs it."""

from __future__ import annotations

import importlib.metadata
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from memory_guard.core.api_keys import Role, parse_api_keys
from tests.served_process import served_process

COMMANDS = ("serve", "reindex", "export", "import")


def run_cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_guard", *args],
        capture_output=True,
        text=True,
        env=_environment(tmp_path, env),
        cwd=tmp_path,
        timeout=120,
    )


def _environment(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    return {
        **os.environ,
        "MEMORY_DB_PATH": str(tmp_path / "cli.db"),
        "API_KEYS": "",
        "EMBEDDING_PROVIDER": "hashing",
        "LOG_LEVEL": "INFO",
        **env,
    }


def test_version_names_the_installed_release(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"memory-guard {importlib.metadata.version('memory-guard')}"


def test_help_lists_every_command_with_one_line(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    assert "--version" in done.stdout
    for command in COMMANDS:
        (line,) = [ln for ln in done.stdout.splitlines() if re.match(rf"\s+{command}\s+\S", ln)]
        assert len(line.split(command, 1)[1].strip()) > 10, line


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_describes_itself(tmp_path: Path, command: str) -> None:
    done = run_cli(tmp_path, command, "--help")
    assert done.returncode == 0, done.stderr
    # argparse prints: usage, a blank line, the description, a blank line, the options.
    paragraphs = done.stdout.split("\n\n")
    assert paragraphs[1].strip() and not paragraphs[1].lstrip().startswith(("options:", "positional")), (
        done.stdout
    )


def _broken_agents(tmp_path: Path) -> str:
    """An AGENTS_FILE that stops `serve` just after the keys are settled, before it listens."""
    broken = tmp_path / "agents.json"
    broken.write_text('{"esg": {"rules": ["x"]}}')
    return str(broken)


def test_a_key_file_lifts_dev_mode_before_anything_listens(tmp_path: Path) -> None:
    keys = tmp_path / "api_keys"
    args = ("serve", "--host", "0.0.0.0", "--port", "0", "--key-file", str(keys))
    done = run_cli(tmp_path, *args, AGENTS_FILE=_broken_agents(tmp_path))
    # It went past the dev-mode refusal (no longer dev mode) and stopped at the agents file.
    assert "dev mode" not in done.stderr
    assert "agent 'esg' has no identity" in done.stderr
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    (key,) = parse_api_keys(keys.read_text().strip())
    assert (key.tenant, key.role) == ("default", Role.STAFF)
    assert key.key not in done.stderr + done.stdout, "the key is never logged"
    assert str(keys) in done.stderr, "the log says where the key is"


def test_api_keys_win_over_the_key_file(tmp_path: Path) -> None:
    keys = tmp_path / "api_keys"
    args = ("serve", "--port", "0", "--key-file", str(keys))
    done = run_cli(tmp_path, *args, AGENTS_FILE=_broken_agents(tmp_path), API_KEYS="k1:acme:staff")
    assert "agent 'esg' has no identity" in done.stderr
    assert not keys.exists()


def test_a_bad_key_file_is_one_clear_line(tmp_path: Path) -> None:
    keys = tmp_path / "api_keys"
    keys.write_text("not a key\n")
    done = run_cli(tmp_path, "serve", "--port", "0", "--key-file", str(keys))
    assert done.returncode != 0
    assert f"cannot use the key file {keys}" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_first_start_key_opens_the_service_and_stays(tmp_path: Path) -> None:
    keys = tmp_path / "api_keys"
    logs = []
    for _ in range(2):
        args = ("--key-file", str(keys))
        with served_process(args, _environment(tmp_path, {}), tmp_path) as served:
            assert httpx.get(f"{served.url}/staff/memory").status_code == 401, "no longer dev mode"
            (key,) = parse_api_keys(keys.read_text().strip())
            headers = {"Authorization": f"Bearer {key.key}"}
            assert httpx.get(f"{served.url}/staff/memory", headers=headers).status_code == 200
        logs.append(served.output)
    assert "wrote a new staff key" in logs[0]
    assert "using the keys of" in logs[1], "the second start reads the same file"
    assert key.key not in "".join(logs)
