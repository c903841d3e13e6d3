"""Text as it is shown to a policy or logged: names escaped, long outputs cut with a marker."""

from __future__ import annotations

from typing import Any

TRUNCATION_MARKER = "\n…[truncated {n} characters]"
CUT_MARKER = "\n…[{n} characters cut here]…\n"
MAX_LISTED = 20  # names listed before "… and N more"


def shown(value: Any, limit: int = 120) -> str:
    """A name or value as it can be shown to the policy and logged: bytes that are not UTF-8
    (surrogate-escaped, as `os.fsdecode` gives them) as `\\xNN`, other unprintable characters
    (controls, lone surrogates) escaped, and at most `limit` characters."""
    text = value if isinstance(value, str) else repr(value)
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate outside the escape range: escaped below
        pass
    if not text.isprintable():
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def truncate(text: str, limit: int) -> str:
    """`text` within `limit` characters, its start kept and a marker saying how much was dropped."""
    if len(text) <= limit:
        return text
    marker = TRUNCATION_MARKER.format(n=len(text) - limit)
    return text[: max(0, limit - len(marker))] + marker


def clip(text: str, limit: int) -> str:
    """`text` within `limit` characters, keeping its start and its end (where a command's last
    lines and a traceback's error are) around a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    marker = CUT_MARKER.format(n=len(text) - limit)
    keep = max(0, limit - len(marker))
    head = keep // 2
    return text[:head] + marker + text[len(text) - (keep - head):]


def listing(names: list[str], limit: int = MAX_LISTED) -> str:
    """`a, b, c, … and N more`."""
    more = f", … and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def safe_name(name: str) -> str:
    """`name` (a task id) as a file name: letters, digits and `-_.` kept, the rest `_`, 120 at most."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:120]
