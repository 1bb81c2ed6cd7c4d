"""Settings, from one place: flags > environment > config file > defaults.

The Codex home is found the way Codex finds it: `$CODEX_HOME`, else `~/.codex`.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

DEFAULT_STATUS_URL = "https://status.openai.com"  # core.status.DEFAULT_PAGE_URL, not imported: 17 ms a start
ENV_PREFIX = "CODEXWATCH_"


class ConfigError(ValueError):
    """A setting that cannot be used; the message is shown to the user as is."""


@dataclass(frozen=True)
class Settings:
    codex_home: Path = field(default_factory=lambda: Path.home() / ".codex")
    status_url: str = DEFAULT_STATUS_URL
    status_enabled: bool = True
    status_interval: float = 120.0
    since: str = "7d"
    bell: bool = True
    notify: bool = True
    theme: str = "textual-dark"
    cache_dir: Path | None = None  # None: the platform's user cache directory
    state_dir: Path | None = None  # None: the platform's user state directory (`run`'s state)
    use_cache: bool = True


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float | None:
    """'7d' -> seconds; 'all' -> None (no limit). Raises ConfigError on anything else."""
    if text.strip().lower() in ("all", "0", ""):
        return None
    match = _DURATION.match(text.lower())
    if not match:
        raise ConfigError(f"not a duration: {text!r} (use e.g. 90m, 24h, 7d, 4w or 'all')")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def default_config_path(env: Mapping[str, str]) -> Path:
    if env.get(ENV_PREFIX + "CONFIG"):
        return Path(env[ENV_PREFIX + "CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "codexwatch" / "config.toml"


def _coerce(name: str, value: Any) -> Any:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    if name in ("codex_home", "cache_dir", "state_dir"):
        # Absolute: the index names files by path, and a path relative to wherever the
        # command was started would not match the next start's.
        return Path(str(value)).expanduser().absolute()
    if "bool" in str(kind):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{name}: expected true or false, got {value!r}")
    if "float" in str(kind):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{name}: expected a number, got {value!r}") from None
    return str(value)


def _from_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    # Imported here: most runs have no config file, and every command starts by asking.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    known = {f.name for f in fields(Settings)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s): {', '.join(unknown)}")
    return {k: _coerce(k, v) for k, v in data.items()}


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if env.get("CODEX_HOME"):
        out["codex_home"] = _coerce("codex_home", env["CODEX_HOME"])
    for f in fields(Settings):
        key = ENV_PREFIX + f.name.upper()
        if env.get(key):
            out[f.name] = _coerce(f.name, env[key])
    return out


def load_settings(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> Settings:
    """Merge the layers; a flag left at None does not override anything."""
    env = os.environ if env is None else env
    path = config_path or default_config_path(env)
    merged: dict[str, Any] = {}
    merged.update(_from_file(path))
    merged.update(_from_env(env))
    merged.update({k: _coerce(k, v) for k, v in (flags or {}).items() if v is not None})
    settings = replace(Settings(), **merged)
    parse_duration(settings.since)  # fail early on a bad --since
    return settings
