"""Canonical numeric answers: the one place where two spellings of a number become one answer.

Every task's ``extract_answer`` and the vote (``search.voting.vote``) pass answers through here,
so ``Answer: 62``, ``Answer: 62.0``, ``Answer: +062`` and a bare ``62`` all vote for ``"62"``.

Accepted (after stripping surrounding white space, including non-breaking spaces):

- an optional sign: ``+``, ``-``, or a look-alike of minus (U+2212 minus sign, U+2013 en dash,
  U+FE63 small hyphen-minus, U+FF0D fullwidth hyphen-minus), optionally followed by spaces;
- digits (ASCII or any Unicode decimal digit, e.g. fullwidth ``６２``) with leading zeros;
- optionally a decimal point and digits (``62.``, ``62.0``, ``.5``).

The canonical string has no ``+``, no leading zeros, no trailing fractional zeros and no
decimal point when the value is an integer; ``-0`` is ``0``. A non-integer stays a decimal
(``62.50`` -> ``"62.5"``), so it votes as its own (wrong) answer rather than abstaining.
Not accepted (returns None): thousands separators (``1,000`` is ambiguous with a list),
exponents (``6.2e1``), fractions (``124/2``), words, and several numbers on one line.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Optional

__all__ = ["canonical_answer", "vote_key"]

_MINUS_LOOKALIKES = "\u2212\u2013\ufe63\uff0d"
_PLUS_LOOKALIKES = "\uff0b"
_NUMBER = re.compile(r"^([+-]?)\s*(\d*)(?:\.(\d*))?$")
MAX_ANSWER_CHARS = 64  # longer text is not a number this project could have asked for


def canonical_answer(text: Optional[str]) -> Optional[str]:
    """Canonical form of a numeric answer, or None when ``text`` is not a plain number.

    ``canonical_answer(" +062.0 ") == "62"``, ``canonical_answer("\u22123") == "-3"``,
    ``canonical_answer("62.50") == "62.5"``, ``canonical_answer("sixty") is None``.
    Accepts None (returns None) so callers can pass an optional answer straight through.
    """
    if not isinstance(text, str):
        return None
    s = unicodedata.normalize("NFKC", text).strip()  # NFKC: fullwidth digits/signs -> ASCII
    if not s or len(s) > MAX_ANSWER_CHARS:
        return None
    for ch in _MINUS_LOOKALIKES:
        s = s.replace(ch, "-")
    for ch in _PLUS_LOOKALIKES:
        s = s.replace(ch, "+")
    m = _NUMBER.match(s)
    if not m:
        return None
    sign, whole, frac = m.group(1), m.group(2), m.group(3)
    if not whole and not frac:
        return None  # a lone sign or a lone "."
    whole = "".join(str(unicodedata.decimal(ch)) for ch in whole)  # e.g. Arabic-Indic digits
    frac = "".join(str(unicodedata.decimal(ch)) for ch in (frac or ""))
    whole = whole.lstrip("0") or "0"
    frac = frac.rstrip("0")
    body = whole + ("." + frac if frac else "")
    if body == "0":
        return "0"
    return ("-" if sign == "-" else "") + body


def vote_key(answer: Optional[str]) -> Optional[str]:
    """The key an answer votes under: its :func:`canonical_answer` when it is a number; other
    non-empty text (a future task's non-numeric answer) votes as its stripped self; None or
    blank text abstains (None)."""
    if answer is None:
        return None
    c = canonical_answer(answer)
    if c is not None:
        return c
    s = str(answer).strip()
    return s or None
