"""Codex's own model catalogue: `$CODEX_HOME/models_cache.json`, which Codex writes under a
ChatGPT login (`../shared/fixtures/codex-models/`): the account's line-up, in the order
Codex's `/model` picker shows it (lower `priority` first), with what each model supports.

Pure: the parsed JSON goes in, a `Catalogue` (or None) comes out. Whatever the file holds,
nothing raises: an entry that is not a model (no slug) is skipped, an unknown shape is no
catalogue. Reading the file is `sources/catalogue.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_FAR = 1 << 62  # a model without a priority goes after every model with one


@dataclass(frozen=True, slots=True)
class CatalogueModel:
    slug: str
    display_name: str
    priority: int | None
    visible: bool  # `visibility == "list"`: shown in the picker
    efforts: tuple[str, ...] = ()
    context_window: int | None = None


@dataclass(frozen=True, slots=True)
class Catalogue:
    models: tuple[CatalogueModel, ...]  # Codex's order: by priority, then as the file lists them
    fetched_at: str | None = None
    client_version: str | None = None
    skipped: int = 0  # entries that were not models
    by_slug: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def visible(self) -> list[CatalogueModel]:
        return [m for m in self.models if m.visible]

    def get(self, slug: str | None) -> CatalogueModel | None:
        return self.by_slug.get(slug) if slug else None


def _text(value: Any, longest: int = 128) -> str | None:
    return value if isinstance(value, str) and value.strip() and len(value) <= longest else None


def _int(value: Any) -> int | None:
    return value if type(value) is int and -_FAR < value < _FAR else None


def _efforts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    out = []
    for level in value:
        effort = _text(level.get("effort"), 32) if isinstance(level, dict) else _text(level, 32)
        if effort:
            out.append(effort)
    return tuple(out)


def _model(entry: Any) -> CatalogueModel | None:
    if not isinstance(entry, dict):
        return None
    slug = _text(entry.get("slug"))
    if slug is None:
        return None
    window = _int(entry.get("context_window"))
    return CatalogueModel(
        slug=slug,
        display_name=_text(entry.get("display_name")) or slug,
        priority=_int(entry.get("priority")),
        # Codex shows "list" and hides "hide"; a value it may add later is not assumed shown.
        visible=entry.get("visibility", "list") == "list",
        efforts=_efforts(entry.get("supported_reasoning_levels")),
        context_window=window if window and window > 0 else None,
    )


def parse_catalogue(data: Any) -> Catalogue | None:
    """`models_cache.json` (every release's shape: `{fetched_at, etag, [client_version,
    identity,] models}`), or `codex debug models`' `{models}`, decoded -> a Catalogue;
    None when it lists no model."""
    entries = data.get("models") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    models, skipped = [], 0
    for entry in entries:
        model = _model(entry)
        if model is None:
            skipped += 1
        else:
            models.append(model)
    if not models:
        return None
    order = sorted(range(len(models)), key=lambda i: (models[i].priority if models[i].priority is not None else _FAR, i))
    ordered = tuple(models[i] for i in order)
    by_slug: dict[str, CatalogueModel] = {}
    for m in ordered:
        by_slug.setdefault(m.slug, m)
    return Catalogue(ordered, _text(data.get("fetched_at"), 64), _text(data.get("client_version"), 64),
                     skipped, by_slug)
