"""Epoch seconds as text: the one ISO-8601 formatter of every output."""

from __future__ import annotations

from datetime import datetime, timezone


def iso_utc(ts: float | None, timespec: str = "milliseconds") -> str | None:
    """`2026-11-29T08:35:10.767Z` (or to the second, `timespec="seconds"`); None stays None."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec=timespec).replace("+00:00", "Z")
