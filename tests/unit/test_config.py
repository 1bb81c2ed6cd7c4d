from pathlib import Path

import pytest

from codexwatch.config import ConfigError, load_settings, parse_duration


def test_layers_flags_over_env_over_file_over_defaults(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('since = "24h"\nstatus_url = "http://file"\nbell = false\n')
    env = {"CODEXWATCH_STATUS_URL": "http://env", "CODEX_HOME": "/from/env"}
    s = load_settings({"since": "1h", "codex_home": None}, env=env, config_path=cfg)
    assert (s.since, s.status_url, s.bell, s.codex_home) == ("1h", "http://env", False, Path("/from/env"))


def test_defaults_follow_codex(monkeypatch, tmp_path):
    s = load_settings({}, env={}, config_path=tmp_path / "none.toml")
    assert s.codex_home == Path.home() / ".codex" and s.since == "7d"


@pytest.mark.parametrize("text,seconds", [("90m", 5400), ("24h", 86400), ("7d", 604800), ("all", None)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_bad_config_is_a_clear_error(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("colour = 'red'\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_settings({}, env={}, config_path=cfg)
    with pytest.raises(ConfigError, match="not a duration"):
        load_settings({"since": "soon"}, env={}, config_path=tmp_path / "x.toml")


def test_a_relative_home_is_made_absolute(tmp_path, monkeypatch):
    """The index names files by path: a home given relative to one folder must name the
    same files when the next command starts in another."""
    monkeypatch.chdir(tmp_path)
    s = load_settings({"codex_home": "codex", "cache_dir": "~/cache"}, env={},
                      config_path=tmp_path / "none.toml")
    assert s.codex_home == tmp_path / "codex" and s.cache_dir == Path.home() / "cache"


def test_the_default_status_address_is_the_status_page_s_own():
    from codexwatch.config import DEFAULT_STATUS_URL
    from codexwatch.core.status import DEFAULT_PAGE_URL

    assert DEFAULT_STATUS_URL == DEFAULT_PAGE_URL  # written twice so a start need not import core.status
