"""Redaction for anything that may leave the machine (the report, pasted advice).

Pure text in, text out. The report builder whitelists its fields first; this is the second
line of defence for the free text that remains (Codex's error message, which a relay can fill
with anything, model names, ids, incident titles). Order matters: tokens are removed before
e-mails and paths so that a key inside a URL or path cannot survive as a "path".
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

# Names of query parameters and header-like keys whose values are secrets.
_SECRET_NAMES = (
    r"access_token|refresh_token|id_token|token|api[_-]?key|apikey|key|secret|client_secret|"
    r"password|passwd|pwd|sig|signature|auth|authorization|code|session|sessionid|jwt"
)

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # "Authorization: Bearer xyz", "bearer xyz"
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 " + REDACTED),
    # JWT-like: three base64url parts, the first starting with '{"' encoded.
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), REDACTED),
    # OpenAI-style keys (sk-, sk-proj-, sk-svcacct-), and other common vendor token shapes.
    (re.compile(r"\bsk-[A-Za-z0-9_-]{6,}"), "sk-" + REDACTED),
    (re.compile(r"\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{8,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    # URL query strings and key=value / "key": "value" pairs naming a secret.
    (re.compile(rf"(?i)([?&;](?:{_SECRET_NAMES})=)[^&#\s\"']+"), r"\1" + REDACTED),
    (re.compile(rf"(?i)\b((?:x-)?(?:{_SECRET_NAMES})[\"']?\s*[:=]\s*[\"']?)"
                r"(?!\[REDACTED\]|(?i:bearer|basic)\s)[^\s\"',;&]{4,}"), r"\1" + REDACTED),
    # Long opaque tokens that no rule above named (40+ chars, letters and digits mixed).
    (re.compile(r"\b(?=[A-Za-z0-9+_=-]*\d)(?=[A-Za-z0-9+_=-]*[A-Za-z])[A-Za-z0-9+_=-]{40,}"),
     REDACTED),
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"), "[email]"),
    # Home directories, POSIX and Windows (either slash), WSL's \\wsl$\distro\home\x too.
    (re.compile(r"(?i)\b[A-Z]:[\\/]+(?:Users|Documents and Settings)[\\/]+[^\\/\s\"'`]+"), "~"),
    (re.compile(r"(?<![\w.~-])/(?:home|Users)/[^/\s\"'`]+"), "~"),
    (re.compile(r"(?i)\\\\wsl(?:\$|\.localhost)\\[^\\\s]+\\home\\[^\\\s\"'`]+"), "~"),
    (re.compile(r"(?<![\w.~-])/root(?=/|\b)"), "~"),
]


def redact(text: str | None, home: str | None = None) -> str:
    """`text` with secrets, e-mail addresses and home directories replaced.

    `home` is the current user's home directory, replaced by `~` wherever it appears, for
    homes outside the usual places (e.g. /var/lib/someone)."""
    if not text:
        return ""
    out = str(text)
    if home and len(home) > 1:
        out = out.replace(home.rstrip("/\\"), "~")
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def redact_value(value, home: str | None = None):
    """Redact every string inside a JSON-like value (dict keys too), keeping its shape."""
    if isinstance(value, str):
        return redact(value, home)
    if isinstance(value, dict):
        return {redact(str(k), home): redact_value(v, home) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, home) for v in value]
    return value


def shorten_home(path: str | None, home: str | None = None) -> str:
    """A path as the user would type it: the home directory becomes `~`."""
    return redact(path, home) if path else ""
