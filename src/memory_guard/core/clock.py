"""Time in one place: UTC everywhere, ISO-8601 text in the database (sortable as text).

Every moment that comes from outside (a staff edit, an import line, a query filter) goes through
`accepted` first: it must lie between EARLIEST and LATEST once in UTC. That keeps every stored date
one that `to_text` writes in its fixed width and `from_text` reads back, and leaves room for the
arithmetic done on them (an expiry plus a maximum age) without overflow.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime

Clock = Callable[[], datetime]

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
RANGE_TEXT = "between 1970-01-01 and 9998-12-31 (UTC)"


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_text(moment: datetime) -> str:
    """Fixed-width form (`0999-06-01T00:00:00.000000Z`) so that text order is time order in SQL.

    isoformat pads the year to four digits, which strftime("%Y") does not do below 1000.
    """
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"


def from_text(text: str) -> datetime:
    """Reads what `to_text` writes; fromisoformat is some fifty times faster than strptime, which
    matters at start-up, when every entry's dates are read."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = _legacy(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _legacy(text: str) -> datetime:
    # Before the fixed-width writer, a year under 1000 was stored unpadded ('1-01-01T00:00:00.000000Z');
    # reading such a row must not stop the service from starting.
    year, separator, rest = text.partition("-")
    if not separator or not year.isdigit() or len(year) >= 4:
        raise ValueError(f"not a stored date: {text!r}")
    return datetime.fromisoformat(f"{int(year):04d}-{rest}")


def accepted(moment: datetime) -> datetime:
    """The moment in UTC if it is one the service stores; a naive one is taken as UTC.

    Raises ValueError (which the request models turn into a 422 naming the field).
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"the date must lie {RANGE_TEXT}") from None
    if not EARLIEST <= utc <= LATEST:
        raise ValueError(f"the date must lie {RANGE_TEXT}")
    return utc


def accepted_day(day: date) -> date:
    """A calendar day (UTC) within the same range as `accepted`."""
    if not EARLIEST.date() <= day <= LATEST.date():
        raise ValueError(f"the day must lie {RANGE_TEXT}")
    return day
