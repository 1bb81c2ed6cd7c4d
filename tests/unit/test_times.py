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
