"""Epoch seconds as text: the one ISO-8601 formatter of every output."""

from __future__ import annotations

import time
from datetime import datetime, timezone

_LAST = 253402300800.0  # 10000-01-01T00:00:00Z: datetime goes no further
_LAYOUTS = {"milliseconds": "%Y-%m-%dT%H:%M:%S", "seconds": "%Y-%m-%dT%H:%M:%S", "compact": "%Y%m%dT%H%M%S"}


def iso_utc(ts: float | None, timespec: str = "milliseconds") -> str | None:
    """`2026-11-29T08:35:10.767Z` (or to the second, `timespec="seconds"`, or
    `20261129T083510` with `timespec="compact"`); None stays None.

    What `datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec)` gives, in half the
    time (statistics format thousands): the seconds and microseconds rounded as datetime
    rounds them (half to even), the rest by `time.strftime`."""
    if ts is None:
        return None
    if not 0 <= ts < _LAST or timespec not in _LAYOUTS:
        if timespec == "compact":
            return datetime.fromtimestamp(ts, timezone.utc).strftime(_LAYOUTS["compact"])
        return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec=timespec).replace("+00:00", "Z")
    whole = int(ts)
    micro = round((ts - whole) * 1e6)  # ts - whole: exact, as modf's fraction is
    if micro >= 1_000_000:
        whole, micro = whole + 1, micro - 1_000_000
    text = time.strftime(_LAYOUTS[timespec], time.gmtime(whole))
    if timespec == "milliseconds":
        return f"{text}.{micro // 1000:03d}Z"
    return text if timespec == "compact" else text + "Z"
