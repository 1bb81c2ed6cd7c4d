"""Times as text and back: the one ISO-8601 formatter of every output, the one parser of
every input (rollout lines, the status page, `--at`), and the weekday names."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # datetime.weekday() order

_LAST = 253402300800.0  # 10000-01-01T00:00:00Z: datetime goes no further
_DATE_LAYOUTS = {"milliseconds": "%Y-%m-%d", "seconds": "%Y-%m-%d", "compact": "%Y%m%d"}
_DATES: dict[tuple[int, str], str] = {}  # (day since 1970, timespec) -> its date, as written


def iso_utc(ts: float | None, timespec: str = "milliseconds") -> str | None:
    """`2026-11-29T08:35:10.767Z` (or to the second, `timespec="seconds"`, or
    `20261129T083510` with `timespec="compact"`); None stays None.

    What `datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec)` gives, in half the
    time (statistics format thousands): the seconds and microseconds rounded as datetime
    rounds them (half to even), the date by `time.strftime`, once per day."""
    if ts is None:
        return None
    if not 0 <= ts < _LAST or timespec not in _DATE_LAYOUTS:
        if timespec == "compact":
            return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y%m%dT%H%M%S")
        return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec=timespec).replace("+00:00", "Z")
    whole = int(ts)
    micro = round((ts - whole) * 1e6)  # ts - whole: exact, as modf's fraction is
    if micro >= 1_000_000:
        whole, micro = whole + 1, micro - 1_000_000
    day, second = divmod(whole, 86400)
    date = _DATES.get((day, timespec))
    if date is None:  # once per day met: statistics format thousands of times in few days
        date = _DATES[(day, timespec)] = time.strftime(_DATE_LAYOUTS[timespec], time.gmtime(day * 86400))
    hour, second = divmod(second, 3600)
    minute, second = divmod(second, 60)
    if timespec == "milliseconds":
        return f"{date}T{hour:02d}:{minute:02d}:{second:02d}.{micro // 1000:03d}Z"
    if timespec == "compact":
        return f"{date}T{hour:02d}{minute:02d}{second:02d}"
    return f"{date}T{hour:02d}:{minute:02d}:{second:02d}Z"


# A time outside 1970 - 9998 is no time Codex or the status page wrote; as a date it would
# overflow (year 0, year 10000) wherever it is shown or binned, so it counts as unknown.
_LATEST = 253370764800.0  # 9999-01-01T00:00:00Z
# What Python 3.10's fromisoformat refuses and the writers send: a trailing Z, a fraction of
# other than 3 or 6 digits, an offset without its colon.
_LENIENT = re.compile(
    r"(\d{4}-\d\d-\d\d)[Tt ](\d\d:\d\d(?::\d\d)?)(?:[.,](\d+))?\s*(Z|z|[+-]\d\d(?::?\d\d)?)?")


def parse_iso(text: str | bytes | None, naive: str = "utc") -> float | None:
    """ISO-8601 -> epoch seconds; None for anything unusable (not text, not a date, outside
    1970 - 9998). A time without an offset is UTC, as the logs and the status page mean it,
    or local time with `naive="local"`, as a person typing `--at` means it.

    Reads the same on every Python the package runs on: `datetime.fromisoformat` first (the
    common, fast case), then the shapes that 3.10's refuses."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("ascii", "replace")
    elif not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = _lenient(text)
        if moment is None:
            return None
    try:
        if moment.tzinfo is None and naive == "utc":
            moment = moment.replace(tzinfo=timezone.utc)
        ts = moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return None
    return plausible(ts)


def plausible(ts: float | None) -> float | None:
    """`ts` when it is a time Codex could have written (1970 - 9998), else None."""
    return ts if ts is not None and 0.0 <= ts < _LATEST else None


def _lenient(text: str) -> datetime | None:
    match = _LENIENT.fullmatch(text.strip())
    if match is None:
        return None
    date, clock, fraction, zone = match.groups()
    if fraction is not None:
        clock += "." + fraction[:6].ljust(6, "0")  # beyond microseconds: cut, as 3.11 does
    if zone in ("Z", "z"):
        zone = "+00:00"
    elif zone is not None:
        digits = zone[1:].replace(":", "")
        zone = f"{zone[0]}{digits[:2]}:{digits[2:] or '00'}"
    try:
        return datetime.fromisoformat(f"{date}T{clock}{zone or ''}")
    except ValueError:
        return None
