"""The one ISO-8601 formatter gives exactly what datetime would, faster."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from codexwatch.core.times import iso_utc


def _datetime(ts: float, timespec: str) -> str:
    moment = datetime.fromtimestamp(ts, timezone.utc)
    if timespec == "compact":
        return moment.strftime("%Y%m%dT%H%M%S")
    return moment.isoformat(timespec=timespec).replace("+00:00", "Z")


EDGES = [0.0, 1e-7, 0.4999995, 0.9999995, 0.9999996, 1.0000005, 1.5, 59.9995, 86399.9999996,
         1793954405.651, 1793954405.9995, 1700000000, 253402300799.999, -1.5, -0.0000004]
RANDOM = [random.Random(7).uniform(0, 2.53e11) for _ in range(3000)]


@pytest.mark.parametrize("timespec", ["milliseconds", "seconds", "compact", "microseconds"])
def test_same_text_as_datetime(timespec):
    for ts in EDGES + RANDOM + [int(x) + 0.0005 * (i % 2000) for i, x in enumerate(RANDOM)]:
        assert iso_utc(ts, timespec) == _datetime(ts, timespec), ts


def test_none_stays_none():
    assert iso_utc(None) is None


# --- the one parser -------------------------------------------------------------------

from codexwatch.core.times import parse_iso  # noqa: E402

BASE = 1795940710.0  # 2026-11-29T08:25:10Z


@pytest.mark.parametrize("text, want", [
    ("2026-11-29T08:25:10Z", BASE),
    ("2026-11-29T08:25:10.767Z", BASE + 0.767),  # Codex's lines
    ("2026-11-29T08:25:10.7Z", BASE + 0.7),  # the status page drops trailing zeros
    ("2026-11-29T08:25:10.66z", BASE + 0.66),
    ("2026-11-29T08:25:10.123456789Z", BASE + 0.123456),  # beyond microseconds: cut
    ("2026-11-29T10:25:10+02:00", BASE),
    ("2026-11-29T10:25:10+0200", BASE),
    ("2026-11-29T10:25:10.5+02", BASE + 0.5),
    ("2026-11-29 08:25:10Z", BASE),
    (" 2026-11-29T08:25:10Z\n", BASE),
    ("2026-11-29T08:25:10", BASE),  # no offset: UTC, as the logs and the page mean it
    (b"2026-11-29T08:25:10.767Z", BASE + 0.767),
])
def test_every_shape_the_writers_send_parses_the_same_on_every_python(text, want):
    assert parse_iso(text) == pytest.approx(want, abs=1e-6)


def test_a_time_without_offset_is_local_where_a_person_typed_it(monkeypatch):
    local = datetime(2026, 11, 29, 8, 25, 10).timestamp()  # the machine's zone
    assert parse_iso("2026-11-29T08:25:10", naive="local") == local


@pytest.mark.parametrize("junk", [None, "", "yesterday", 12, "2026-13-01T00:00:00Z", "2026-11-29T25:00:00Z",
                                  "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2026-11-29T08:25:10Zjunk",
                                  b"\xff\xfe", "9999-12-31T23:59:59Z"])
def test_unusable_or_implausible_times_are_none(junk):
    assert parse_iso(junk) is None
