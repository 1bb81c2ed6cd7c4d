"""A line's timestamp is read as parse_iso reads it, on every Python (3.10 has its own way)."""

from __future__ import annotations

import random

from codexwatch.core.times import parse_iso
from codexwatch.core.turns import line_time


def _stamps():
    rng = random.Random(14)
    yield from (b"1969-12-31T23:59:59.999Z", b"1970-01-01T00:00:00.000Z", b"9998-12-31T23:59:59.999Z",
                b"9999-01-01T00:00:00.000Z", b"2026-02-29T00:00:00.000Z", b"2024-02-29T12:00:00.000Z",
                b"2026-11-29T23:59:60.000Z", b"2026-11-29 08:35:10.767Z", b"2026-11-29x08:35:10.767Z",
                b"2026-11-29T08:35:10,767Z", b"2026-11-29T08:35:10.767z", b"\xff" * 24,
                "2026-11-29T08:35:10.767Z", None)
    alphabet = b"0123456789-T:.Z+ t,x"
    for _ in range(5000):
        stamp = (f"{rng.randrange(1960, 10000):04d}-{rng.randrange(0, 14):02d}-{rng.randrange(0, 33):02d}"
                 f"T{rng.randrange(0, 26):02d}:{rng.randrange(0, 61):02d}:{rng.randrange(0, 62):02d}"
                 f".{rng.randrange(0, 1000):03d}Z").encode()
        yield stamp
        mutated = bytearray(stamp)
        mutated[rng.randrange(len(stamp))] = alphabet[rng.randrange(len(alphabet))]
        yield bytes(mutated)


def test_line_time_is_parse_iso_to_the_last_bit():
    for stamp in _stamps():
        want, got = parse_iso(stamp), line_time(stamp)
        assert (got is None) == (want is None) and (got is None or got.hex() == want.hex()), stamp
