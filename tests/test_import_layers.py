"""The package layers of pyproject.toml's [tool.importlinter] hold, and they have teeth.

The second test copies the package, adds one import from the kernel up into the memory
domain, and expects `lint-imports` to refuse it: a contract that a back-import does not
break would guard nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(src: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", "--config", str(config)],
        cwd=src.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_tree_keeps_every_contract() -> None:
    result = _lint(ROOT / "src", ROOT / "pyproject.toml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_back_import_breaks_the_layers(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "src" / "memory_guard", tmp_path / "src" / "memory_guard")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    scope = tmp_path / "src" / "memory_guard" / "core" / "scope.py"
    back_import = "\nfrom memory_guard.memory.entry import Entry  # noqa: E402, F401\n"
    scope.write_text(scope.read_text() + back_import)

    result = _lint(tmp_path / "src", tmp_path / "pyproject.toml")

    assert result.returncode != 0
    assert "memory_guard.core is not allowed to import memory_guard.memory" in result.stdout
    assert "memory_guard.core.scope -> memory_guard.memory.entry" in result.stdout
