"""The one length cap on a text shown or read by the app (issue 19 item 5).

A step, a problem, an answer or a message can be as long as the file it came in (a 30 MB run
file of one step); every per-text cost (wrapping it for a hover box, cutting a label, escaping it
for markdown, sending it to the browser in the node inspector or the edit box) must stay bounded
however long it is. So code that shows or walks such a text reads only its first
``MAX_TEXT_CHARS`` characters (a slice: O(``MAX_TEXT_CHARS``) work and memory), and where the
text is shown to a person the cut is said at the cut: "… (cut at 20000 characters)".

The stored run is never changed: the event log, the export and the history keep the whole text.
"""
from __future__ import annotations

from typing import Any

from i18n import _

MAX_TEXT_CHARS = 20_000  # characters of one text that display code looks at


def cut_note(limit: int = MAX_TEXT_CHARS) -> str:
    """The words written where a text was cut: "… (cut at N characters)"."""
    return _("… (cut at {n} characters)").format(n=f"{limit:,}" if limit >= 10_000 else limit)


def head(text: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """``str(text)``'s first ``limit`` characters, for code that shortens it further anyway
    (a label, a hover box: they end in "…" themselves)."""
    s = text if isinstance(text, str) else str(text)
    return s if len(s) <= limit else s[:limit]


def tail(text: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """``str(text)``'s last ``limit`` characters: where a step's answer is looked for (an
    answer line ends a step)."""
    s = text if isinstance(text, str) else str(text)
    return s if len(s) <= limit else s[-limit:]


def cut(text: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """``str(text)`` when it has at most ``limit`` characters; else its first ``limit``
    characters followed by " " and :func:`cut_note` (so a person sees where and why)."""
    s = text if isinstance(text, str) else str(text)
    return s if len(s) <= limit else s[:limit] + " " + cut_note(limit)


