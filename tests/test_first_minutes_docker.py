"""`docker compose up` on a fresh clone, checked without Docker: the compose file needs no `.env` and
no chown, the image installs the lock file, the build context leaves out what the image never needs,
and the lock pins every runtime dependency at a version pyproject.toml accepts, with what they need."""

from __future__ import annotations

import importlib.metadata
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def compose_service() -> dict[str, Any]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text("utf-8"))
    service: dict[str, Any] = compose["services"]["memory-guard"]
    service["_volumes"] = compose.get("volumes") or {}
    return service


def dockerfile() -> list[str]:
    """The Dockerfile's instructions, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text("utf-8").replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "requirements.lock").read_text("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", line.strip())
            assert match, f"not an exact pin: {line!r}"
            pins[canonicalize_name(match[1])] = match[2]
    return pins


def runtime_dependencies() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return [Requirement(item) for item in project["dependencies"]]


def test_compose_runs_without_a_dot_env_file() -> None:
    assert compose_service()["env_file"] == [{"path": ".env", "required": False}]


def test_compose_keeps_the_data_in_a_named_volume_the_image_fills() -> None:
    service = compose_service()
    (mount,) = service["volumes"]
    source, target = mount.split(":")[:2]
    assert target == "/app/data"
    # A host folder (./data, /srv/…) would need a chown to the image's user; a named volume does not.
    assert not source.startswith((".", "/", "~")), mount
    assert source in service["_volumes"]
    assert service["environment"]["MEMORY_DB_PATH"].startswith("/app/data/")


def test_compose_publishes_on_this_machine_only() -> None:
    assert compose_service()["ports"] == ["127.0.0.1:8000:8000"]


def test_the_image_installs_the_lock_then_the_package_alone() -> None:
    steps = dockerfile()
    runs = [step for step in steps if step.startswith("RUN ")]
    lock = next(i for i, step in enumerate(steps) if "pip install -r requirements.lock" in step)
    package = next(i for i, step in enumerate(steps) if "pip install --no-deps ." in step)
    assert "COPY requirements.lock" in " ".join(steps[:lock])
    # The lock's layer comes before the sources', which change far more often.
    assert lock < package and lock < steps.index("COPY src ./src")
    assert any("pip check" in run for run in runs)
    assert not any(re.search(r"pip install (?!-r requirements\.lock|--no-deps \.)", run) for run in runs)


def test_the_image_starts_with_keys_rather_than_in_dev_mode_on_every_interface() -> None:
    steps = dockerfile()
    (user,) = [step for step in steps if step.startswith("USER ")]
    assert user != "USER root"
    (cmd,) = [step for step in steps if step.startswith("CMD ")]
    args = json.loads(cmd.removeprefix("CMD "))  # the exec form: no shell between
    assert args[:2] == ["memory-guard", "serve"]
    assert args[args.index("--host") + 1] == "0.0.0.0"
    assert args[args.index("--key-file") + 1].startswith("/app/data/")


def test_the_build_context_leaves_out_what_the_image_never_needs() -> None:
    ignored = set((ROOT / ".dockerignore").read_text("utf-8").splitlines())
    for path in (".git", ".venv", ".env", "data", "tests", "training", "bench", "**/__pycache__"):
        assert path in ignored, path
    assert not {"src", "README.md", "pyproject.toml", "requirements.lock"} & ignored


def test_the_lock_pins_every_runtime_dependency_at_an_accepted_version() -> None:
    pins = locked()
    for requirement in runtime_dependencies():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in requirements.lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (requirement, pins[name])


def test_the_lock_holds_what_the_locked_packages_need() -> None:
    """Read from the installed packages' metadata where the development environment holds the
    locked version (it does when the lock was made as docs/DEVELOPMENT.md says)."""
    pins = locked()
    environment = {**default_environment(), "extra": ""}
    checked = 0
    for name, version in pins.items():
        try:
            installed = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if installed.version != version:
            continue
        checked += 1
        for item in installed.requires or []:
            needed = Requirement(item)
            if needed.marker is None or needed.marker.evaluate(environment):
                assert canonicalize_name(needed.name) in pins, f"{name} needs {needed.name}, not locked"
    assert checked >= len(runtime_dependencies()), "the lock is not the development environment's"
