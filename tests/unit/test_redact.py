"""Redaction: secrets, e-mail addresses and home directories never survive."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from codexwatch.core.redact import redact, redact_value, shorten_home


@pytest.mark.parametrize("text, secret", [
    ("key sk-proj-AbCdEf1234567890xyz used", "AbCdEf1234567890"),
    ("Authorization: Bearer abc.def-ghi_jkl123", "abc.def-ghi_jkl123"),
    ("bearer tok_9f8e7d6c5b4a", "tok_9f8e7d6c5b4a"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fw", "SflKxwRJSMeKKF2QT4fw"),
    ("https://relay.example/v1/responses?api_key=s3cr3tvalue&x=1", "s3cr3tvalue"),
    ("https://relay.example/cb?access_token=zzTOPzz", "zzTOPzz"),
    ('{"api_key": "abcd1234efgh"}', "abcd1234efgh"),
    ("password=hunter2hunter2", "hunter2hunter2"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnop"),
    ("AKIAABCDEFGHIJKLMNOP in text", "AKIAABCDEFGHIJKLMNOP"),
    ("opaque a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1 token", "a1b2c3d4e5f6a7b8c9d0"),
    ("mail jane.doe+codex@corp.example.co.uk now", "jane.doe"),
])
def test_secrets_are_removed(text, secret):
    out = redact(text)
    assert secret not in out
    assert "REDACTED" in out or "[email]" in out


@pytest.mark.parametrize("text, expected", [
    ("/home/alice/src/app", "~/src/app"),
    ("/Users/bob/work/x.py", "~/work/x.py"),
    (r"C:\Users\carol\proj", r"~\proj"),
    ("c:/users/carol/proj", "~/proj"),
    (r"\\wsl$\Ubuntu\home\dan\p", r"~\p"),
    ("/root/.codex/sessions", "~/.codex/sessions"),
    ("cd /home/alice && ls", "cd ~ && ls"),
])
def test_home_paths_become_tilde(text, expected):
    assert redact(text) == expected


def test_explicit_home_elsewhere():
    assert redact("/var/lib/svc/x", home="/var/lib/svc") == "~/x"


@pytest.mark.parametrize("text", [
    "Selected model is at capacity. Please try a different model.",
    "exceeded retry limit, last status: 429 Too Many Requests",
    "01a22677-fa5d-7172-925b-dcb719d2880b",
    "https://status.openai.com/incidents/01JXYZ",
    "stream disconnected before completion: stream closed before response.completed",
    "gpt-6.1-sol",
    "/usr/local/bin/codex",
    "http_status_code: 429",
])
def test_harmless_text_is_untouched(text):
    assert redact(text) == text


def test_redact_value_keeps_shape():
    value = {"msg": "mail a@b.io", "n": 3, "nested": [{"k": "Bearer sekrit123"}], "ok": None}
    assert redact_value(value) == {"msg": "mail [email]", "n": 3,
                                   "nested": [{"k": "Bearer [REDACTED]"}], "ok": None}


def test_empty_and_none():
    assert redact(None) == "" and redact("") == "" and shorten_home(None) == ""


_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=8, max_size=30)


@given(key=_word, user=st.from_regex(r"[a-z][a-z0-9]{2,10}", fullmatch=True),
       prefix=st.text(max_size=20), suffix=st.text(max_size=20))
def test_planted_key_email_and_home_never_survive(key, user, prefix, suffix):
    text = f"{prefix} sk-{key} {user}@example.com /home/{user}/p {suffix}"
    out = redact(text)
    assert f"sk-{key}" not in out
    assert f"{user}@example.com" not in out
    assert f"/home/{user}" not in out
