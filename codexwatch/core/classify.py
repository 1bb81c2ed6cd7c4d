"""Why a turn failed: `codex_error_info` first, its HTTP status second, the message last.

The values and messages are those real Codex releases wrote (docs/rollout-eras.md) plus the
older variants from the source (docs/codex-rollout-format.md §8).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from codexwatch.core.models import Turn

# codex_error_info values that decide the class on their own.
_BY_INFO = {
    "server_overloaded": "capacity",
    "model_cap": "capacity",  # Jan-Feb 2026 predecessor of server_overloaded
    "usage_limit_exceeded": "usage_limit",
    "model_not_found": "model_unavailable",
    "unauthorized": "auth",
    "internal_server_error": "server_error",
    "context_window_exceeded": "context_window",
    "response_stream_disconnected": "stream_disconnected",
    "response_stream_connection_failed": "stream_disconnected",
}

# Values that say nothing about the cause by themselves: look at the status, then the text.
_UNDECIDED = {
    "other",
    "http_connection_failed",
    "response_too_many_failed_attempts",
    "bad_request",
}

# Values Codex knows that are failures of their own kind (not in the product's classes).
KNOWN_OTHER = {"sandbox_error", "cyber_policy", "thread_rollback_failed", "active_turn_not_steerable"}

_MESSAGE_RULES = [
    (re.compile(r"(selected|reviewer) model is at capacity|^model \S+ is at capacity|"
                r"remote compact task: selected model is at capacity", re.I), "capacity"),
    (re.compile(r"you.ve hit your usage limit|^quota exceeded|upgrade to plus", re.I), "usage_limit"),
    (re.compile(r"exceeded retry limit, last status: 429|too many requests|rate limit", re.I),
     "rate_limit"),
    (re.compile(r"model is not supported when using codex|does not exist or you do not have access|"
                r"model_not_found", re.I), "model_unavailable"),
    (re.compile(r"ran out of room in the model.s context window|context_length_exceeded", re.I),
     "context_window"),
    (re.compile(r"refresh token|log out and sign in again|401 unauthorized|403 forbidden", re.I),
     "auth"),
    (re.compile(r"^stream disconnected before completion|error while reading the server response|"
                r"^connection failed|idle timeout waiting for", re.I), "stream_disconnected"),
    (re.compile(r"experiencing high demand|^unexpected status 5\d\d|internal error", re.I),
     "server_error"),
]

_STATUS_IN_TEXT = re.compile(r"(?:last status:|unexpected status|status)\s*(\d{3})\b", re.I)


def info_key(info: Any) -> str | None:
    """The variant name of a `codex_error_info`: the string, or the one key of an object."""
    if isinstance(info, str):
        return info
    if isinstance(info, dict) and len(info) == 1:
        key = next(iter(info))
        return key if isinstance(key, str) else None
    return None


def http_status_of(info: Any, message: str | None) -> int | None:
    if isinstance(info, dict) and len(info) == 1:
        inner = next(iter(info.values()))
        if isinstance(inner, dict):
            code = inner.get("http_status_code")
            if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
                return code
    if message:
        match = _STATUS_IN_TEXT.search(message[:400])
        if match:
            return int(match.group(1))
    return None


def _by_status(status: int | None) -> str | None:
    if status is None:
        return None
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "model_unavailable"
    if status >= 500:
        return "server_error"
    return None


def _by_message(message: str | None) -> str | None:
    if not message:
        return None
    head = message[:2000]
    for pattern, cls in _MESSAGE_RULES:
        if pattern.search(head):
            return cls
    return None


def classify(info: Any, message: str | None) -> tuple[str, int | None, bool]:
    """-> (error_class, http_status, info_was_unknown)."""
    key = info_key(info)
    status = http_status_of(info, message)
    if key in _BY_INFO:
        # A usage-limit 429 and a capacity 503 are decided by the variant, not the status.
        return _BY_INFO[key], status, False
    if key == "response_too_many_failed_attempts" and status is None:
        status = 429
    if key in _UNDECIDED or key in KNOWN_OTHER:
        if key == "other":  # stream drops and older variants: the text is all there is
            return _by_message(message) or _by_status(status) or "other", status, False
        return _by_status(status) or _by_message(message) or "other", status, False
    if info is None:  # era C error lines may carry a null info
        return _by_message(message) or _by_status(status) or "other", status, False
    # A variant (or shape) never seen before: "other", with the raw value kept by the caller.
    return "other", status, True


def with_logged_cause(turn: Turn, message: str | None) -> Turn:
    """A failure whose cause the rollout did not record, given the one Codex's own log has
    for it (a new Turn, classified by that message); any other turn as it is."""
    if turn.error_class != "unrecorded" or not message:
        return turn
    error_class, http_status, _ = classify(None, message)
    return replace(turn, message=message, error_class=error_class, http_status=http_status)
