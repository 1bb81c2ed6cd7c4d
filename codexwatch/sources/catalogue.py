"""Reading Codex's model catalogue, `$CODEX_HOME/models_cache.json`: read-only, once, and
never a reason to fail. Absent (an API-key login never writes it), half-written, too large or
of a shape nobody knows: no catalogue, and everything else goes on as before."""

from __future__ import annotations

from pathlib import Path

import orjson

from codexwatch.core.catalogue import Catalogue, parse_catalogue

FILE_NAME = "models_cache.json"
LARGEST = 8 << 20  # a real one is tens of kilobytes


def load_catalogue(home: Path | str | None) -> Catalogue | None:
    if home is None:
        return None
    path = Path(home) / FILE_NAME
    try:
        with open(path, "rb") as f:
            raw = f.read(LARGEST + 1)
    except (OSError, ValueError):
        return None
    if len(raw) > LARGEST:
        return None
    try:
        return parse_catalogue(orjson.loads(raw))
    except (orjson.JSONDecodeError, RecursionError, ValueError, TypeError):
        return None
