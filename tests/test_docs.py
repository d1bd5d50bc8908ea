"""The docs a user reads stay true to the code and inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from memory_guard.api.app import create_app
from memory_guard.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
API_DOC = (ROOT / "docs" / "API.md").read_text("utf-8")
# What would send a reader outside the repository: the shared folder beside a checkout, or the
# design documents the project came from.
OUTSIDE = re.compile(r"\.\./shared|shared/API\.md|API\.md of the spec|\bseed (document|0\d\d)", re.I)
# In the code, the API doc is named by its path in the repository.
BARE_API_DOC = re.compile(r"(?<!docs/)\bAPI\.md")


def test_every_route_of_the_app_is_in_the_api_doc() -> None:
    schema = create_app(Settings(_env_file=None, embedding_provider="hashing")).openapi()  # type: ignore[call-arg]
    for path, operations in schema["paths"].items():
        for method in operations:
            route = f"{method.upper()} {path}"
            assert f"`{route}`" in API_DOC or f"**`{route}`**" in API_DOC, f"{route} is not in docs/API.md"


def test_every_error_code_the_code_raises_is_in_the_api_doc() -> None:
    source = "\n".join(p.read_text("utf-8") for p in (ROOT / "src" / "memory_guard").rglob("*.py"))
    raised = set(re.findall(r'code(?:=|\s*=\s*)"([a-z_]+)"', source))
    raised |= set(re.findall(r'error_response\(\s*\d+,\s*"([a-z_]+)"', source))
    missing = sorted(code for code in raised if f"`{code}`" not in API_DOC)
    assert not missing, f"error codes missing from docs/API.md: {missing}"


def test_readme_docs_and_comments_stay_inside_the_repository() -> None:
    files = [ROOT / "README.md", ROOT / ".env.example", *(ROOT / "docs").glob("*.md")]
    files += list((ROOT / "src").rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if (OUTSIDE.search(line) and not _names_the_data_folder(path, line))
        or (path.suffix == ".py" and BARE_API_DOC.search(line))
    ]
    assert not found, f"pointing outside the repository: {found}"


def _names_the_data_folder(path: Path, line: str) -> bool:
    # The one allowed mention: docs/DEVELOPMENT.md gives the default folder of the --data option.
    return path.name == "DEVELOPMENT.md" and "`../shared/data`" in line
