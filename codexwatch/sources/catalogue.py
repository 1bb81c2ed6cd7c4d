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


class CatalogueCache:
    """The catalogue, read again only when the file changes (its size and mtime): the
    dashboard asks at every view build. Thread-safe enough for one builder at a time."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._catalogue: Catalogue | None = None

    def get(self, home: Path | str | None) -> Catalogue | None:
        if home is None:
            return None
        try:
            st = (Path(home) / FILE_NAME).stat()
            key = (str(home), st.st_size, st.st_mtime_ns, st.st_ino)
        except (OSError, ValueError):
            key = (str(home), None)
        if key != self._key:
            self._catalogue = load_catalogue(home) if key[1] is not None else None
            self._key = key
        return self._catalogue
