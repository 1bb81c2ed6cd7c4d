"""Epoch seconds as text: the one ISO-8601 formatter of every output."""

from __future__ import annotations

import time
from datetime import datetime, timezone

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
