"""Text helpers for the skin: times, durations, ages, class labels.

Pure functions (no Textual import) so they are unit-tested on their own.
"""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo

# Class names in the UI: a word, never a colour alone. The glyph is a second cue.
CLASS_LABELS = {
    "capacity": "capacity",
    "rate_limit": "rate limit",
    "usage_limit": "usage limit",
    "model_unavailable": "model unavailable",
    "auth": "auth",
    "server_error": "server error",
    "stream_disconnected": "stream broke",
    "context_window": "context full",
    "other": "other",
    "unrecorded": "not recorded",
}

CLASS_GLYPHS = {
    "capacity": "◆",
    "rate_limit": "≡",
    "usage_limit": "◔",
    "model_unavailable": "⊘",
    "auth": "⚿",
    "server_error": "✖",
    "stream_disconnected": "↯",
    "context_window": "▣",
    "other": "?",
    "unrecorded": "·",
}

VERDICT_GLYPHS = {"ok": "●", "degraded": "▲", "failing": "✖", "loading": "…", "unknown": "?"}


def class_label(error_class: str | None) -> str:
    if not error_class:
        return "—"
    return CLASS_LABELS.get(error_class, error_class)


def class_cell(error_class: str | None) -> str:
    if not error_class:
        return "—"
    return f"{CLASS_GLYPHS.get(error_class, '?')} {class_label(error_class)}"


def local_time(ts: float | None, tz: tzinfo | None, with_date: bool = True, now: float | None = None) -> str:
    """'Mon 14:03' (or '14:03:07' for today when now is given)."""
    if ts is None:
        return "—"
    dt = datetime.fromtimestamp(ts, tz or timezone.utc) if tz else datetime.fromtimestamp(ts).astimezone()
    if now is not None:
        today = datetime.fromtimestamp(now, dt.tzinfo)
        if dt.date() == today.date():
            return dt.strftime("%H:%M:%S")
    if with_date:
        return dt.strftime("%a %d %H:%M")
    return dt.strftime("%H:%M")


def duration(ms: float | None) -> str:
    """A turn's length: '4 s', '2 m 05 s', '1 h 12 m'."""
    if ms is None:
        return "—"
    seconds = max(0, int(round(ms / 1000)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} m {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} m"


def age(seconds: float | None) -> str:
    """How long ago: '12 s', '4 min', '3 h', '2 d'."""
    if seconds is None:
        return "never"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} d"


def countdown(seconds: float) -> str:
    """'1:05' for a back-off timer; '0:00' when it has run out."""
    seconds = max(0, int(seconds + 0.999))
    minutes, seconds = divmod(seconds, 60)
    if minutes >= 60:
        hours, minutes = divmod(minutes, 60)
        return f"{hours}:{minutes:02d}:{seconds:02d}"
    return f"{minutes}:{seconds:02d}"


def tokens(n: int | None) -> str:
    if not n:
        return "0"
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def percent(rate: float | None) -> str:
    if rate is None:
        return "—"
    return f"{rate * 100:.0f}%"


BAR_CHARS = " ▏▎▍▌▋▊▉█"


def bar(fraction: float | None, width: int) -> str:
    """A horizontal bar of `width` cells filled to `fraction` (eighths resolution)."""
    if fraction is None or width <= 0:
        return " " * max(width, 0)
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = int(round(fraction * width * 8))
    full, rest = divmod(eighths, 8)
    text = "█" * full + (BAR_CHARS[rest] if rest and full < width else "")
    return text.ljust(width)


SPARK_CHARS = "▁▂▃▄▅▆▇█"


def spark(values: list[float]) -> str:
    """A sparkline; empty buckets are shown as a blank, not as the lowest bar."""
    if not values:
        return ""
    top = max(values) or 1.0
    out = []
    for v in values:
        if v <= 0:
            out.append(" ")
        else:
            out.append(SPARK_CHARS[min(len(SPARK_CHARS) - 1, int(v / top * (len(SPARK_CHARS) - 1) + 0.5))])
    return "".join(out)


def short_id(session_id: str | None) -> str:
    if not session_id:
        return "—"
    return session_id[:8]


def one_line(text: str | None, limit: int = 200) -> str:
    """Collapse whitespace and control characters and cap the length (log text is shown literally)."""
    if not text:
        return ""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    cleaned = " ".join(cleaned.split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def fold_path(path: str, width: int) -> list[str]:
    """`path` in lines of at most `width` characters, each broken after a `/` where one
    falls in its second half, else where it is full: a rollout's path, whole, in a pane
    narrower than it (Textual's own folding of a long word dropped a character at each
    fold). `width` 0 or less: unknown, one line."""
    lines: list[str] = []
    rest = path
    while 0 < width < len(rest):
        cut = rest.rfind("/", 0, width) + 1
        if cut <= width // 2:
            cut = width
        lines.append(rest[:cut])
        rest = rest[cut:]
    return lines + [rest]


def literal(text: str | None, limit: int = 4000) -> str:
    """Multi-line text from a log or the network, made safe to show as is.

    Control characters (escape codes included) become visible placeholders so nothing
    in them is interpreted; markup is not parsed because callers wrap the result in
    `Text`/`Content`, never in markup.
    """
    if not text:
        return ""
    out = []
    for ch in text[:limit]:
        if ch == "\n" or ch == "\t" or ch.isprintable():
            out.append(ch)
        elif ch == "\x1b":
            out.append("␛")
        else:
            out.append("�")
    if len(text) > limit:
        out.append("…")
    return "".join(out)
