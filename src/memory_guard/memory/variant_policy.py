"""When the match of a question variant may be served: the one place these rules live.

A wording is matched like the entry's own question (exact key, vector) and always under its
entry's rules first: its tenant and scope (a variant has none of its own), its status (an
obsolete entry is never served, whichever wording matched) and its expiry. Then the wording's:

- the entry's own question, and a `validated` variant, serve as the question does;
- a `learned` variant serves once it is confirmed (`CONFIRMED` independent confirmations: the
  learning itself, then the judge, a staff validation or positive feedback), whatever the match;
- before that, a learned variant serves on an exact match only when its entry is validated (staff
  vouched for the answer; the wording is the LLM's reading), and by vector never: a vector match
  adds its own doubt to the learner's.

A match that may not serve is `held`: its entry still grounds the LLM (`assisted`), and nothing
scored below it is served in its place (it is likelier the question asked than they are).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memory_guard.memory.entry import Entry, Status
from memory_guard.memory.variant import Variant, VariantStatus

CONFIRMED = 2


def matchable(entry: Entry, now: datetime, max_age: timedelta) -> bool:
    """The entry's rules, whichever of its wordings matched: not obsolete, not expired."""
    return entry.servable(now, max_age)


def held(entry: Entry, variant: Variant | None, exact: bool) -> bool:
    """Whether a match through `variant` (None: the entry's own question) may NOT be served direct."""
    if entry.status is Status.OBSOLETE:
        return True
    if variant is None or variant.status is VariantStatus.VALIDATED:
        return False
    if variant.confirmations >= CONFIRMED:
        return False
    return not (exact and entry.status is Status.VALIDATED)
