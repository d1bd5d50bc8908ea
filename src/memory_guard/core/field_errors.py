"""One wording of what pydantic found wrong with an input: `field: problem; field: problem`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any


def describe_field_errors(
    errors: Iterable[Mapping[str, Any]],
    *,
    unnamed: str,
    skip: Collection[str | int] = (),
    spell: Callable[[str], str] = str,
) -> str:
    """`errors` as pydantic's `errors()` gives them. A problem's field is its dotted location
    without the parts in `skip`, written by `spell`; `unnamed` names a problem of the whole input."""
    problems = []
    for error in errors:
        field = ".".join(str(part) for part in error.get("loc", ()) if part not in skip)
        problems.append(f"{spell(field) or unnamed}: {error.get('msg', 'invalid')}")
    return "; ".join(problems)
