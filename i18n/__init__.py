"""Translations of every string a user sees: English (the source language) and Simplified
Chinese.

Strings in code are English and are wrapped where they are shown: ``_("Search tree")``,
``ngettext("{n} chain", "{n} chains", n).format(n=n)``. A string that must be listed where it is
defined but translated where it is shown (a constant, a page title) is marked with ``N_`` and
passed through ``_`` at the point of display. Placeholders use ``str.format`` names, never
positional ``%s``, so a translation may reorder them.

Catalogues are standard gettext PO files, one per language: ``i18n/<lang>.po`` (read with
Babel's ``read_po``; no compiled ``.mo`` files to keep in step). ``python -m i18n extract``
lists every marked string of the code base into ``i18n/messages.pot`` and merges it into each
catalogue (Babel's extractor and ``Catalog.update``), so a new string shows up there as
untranslated.

Which language: ``using(lang)`` for a block (tests, the CLI), otherwise the resolver the UI
registers with ``set_resolver`` (the Streamlit session's choice; this package imports no
Streamlit, so viz stays pure), otherwise English. An unknown language, or a string missing from
a catalogue, falls back to English: ``tests/pages/test_i18n.py`` fails on any English left on a page
drawn in Chinese.
"""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator, Optional

HERE = Path(__file__).resolve().parent
DOMAIN = "thoughtscope"
SOURCE = "en"
# language code -> its name in that language (what the sidebar's switch shows)
LANGUAGES = {"en": "English", "zh": "中文"}

_override: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("lang", default=None)
_resolver: Optional[Callable[[], Optional[str]]] = None


def set_resolver(fn: Optional[Callable[[], Optional[str]]]) -> None:
    """Register ``fn() -> language code or None``, asked on every lookup outside ``using``
    (the UI passes one that reads the session's choice). Errors in ``fn`` mean English."""
    global _resolver
    _resolver = fn


def language() -> str:
    """The language strings are translated into now: a code of ``LANGUAGES``."""
    lang = _override.get()
    if lang is None and _resolver is not None:
        try:
            lang = _resolver()
        except Exception:  # no session (a background thread, a bare script): the source
            lang = None
    return lang if lang in LANGUAGES else SOURCE


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Translate into ``lang`` inside the block (this thread/context only).

    Raises ValueError for a code not in ``LANGUAGES``."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGUAGES)}")
    token = _override.set(lang)
    try:
        yield
    finally:
        _override.reset(token)


def catalogue_path(lang: str) -> Path:
    return HERE / f"{lang}.po"


@lru_cache(maxsize=None)
def _catalogue(lang: str) -> dict:
    """msgid -> msgstr (str, or tuple of plural forms) for ``lang``; untranslated and fuzzy
    entries are left out (they fall back to English). Cached for the process; ``reload()``
    clears it."""
    path = catalogue_path(lang)
    if lang == SOURCE or not path.exists():
        return {}
    from babel.messages.pofile import read_po
    with path.open("rb") as f:
        cat = read_po(f, locale=lang.replace("-", "_"), domain=DOMAIN)
    out = {}
    for m in cat:
        if not m.id or m.fuzzy:
            continue
        if isinstance(m.id, (tuple, list)):
            forms = tuple(m.string) if isinstance(m.string, (tuple, list)) else (m.string,)
            if all(forms):
                out[tuple(m.id)] = forms
        elif m.string:
            out[m.id] = m.string
    return out


def reload() -> None:
    """Forget the cached catalogues (after editing a PO file in a running process)."""
    _catalogue.cache_clear()


def _(msgid: str) -> str:
    """``msgid`` (English) in the current language; English when it has no translation."""
    if not msgid:
        return msgid
    lang = language()
    if lang == SOURCE:
        return msgid
    return _catalogue(lang).get(msgid, msgid)


gettext = _


def ngettext(singular: str, plural: str, n: float) -> str:
    """The form for ``n`` of a string with a plural. Chinese has one form (the first
    translation); English picks ``singular`` for n == 1."""
    lang = language()
    english = singular if n == 1 else plural
    if lang == SOURCE:
        return english
    forms = _catalogue(lang).get((singular, plural))
    if not forms:
        return english
    return forms[0] if len(forms) == 1 else forms[0 if n == 1 else 1]


def N_(msgid: str) -> str:
    """Mark ``msgid`` for the catalogue without translating it here (translate it with ``_``
    where it is shown)."""
    return msgid
