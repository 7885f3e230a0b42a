"""Names people read for the ids runs store (a leaf module: i18n only).

A run and its History row keep language-neutral ids (scorer ``learned_checked``, model
``bundled`` / ``hf: FOLDER`` / ``openai: NAME @ URL``, as ``search.models.backends.ModelSpec.
label`` writes them); a page translates them when it shows them, so a run saved in 中文 is
found by an English search and the other way round (issue 20 item 10).
"""
from __future__ import annotations

from typing import Any, Iterable

import i18n
from i18n import LANGUAGES, N_, _

from search.scoring import SCORER_LABELS  # noqa: E402,F401  (its home: the scorers)


def scorer_label(name: Any) -> str:
    """A scorer's name in the session's language (``SCORER_LABELS``); "none" for None, an
    unknown id as it is."""
    if not name:
        return _("none")
    return _(SCORER_LABELS[name]) if name in SCORER_LABELS else str(name)


BUNDLED = "bundled"  # the model id of the task's bundled model


def model_id(spec: Any) -> str:
    """The language-neutral id of a run's recorded model (``config["model"]``, a ModelSpec's
    fields): ``bundled``, ``hf: FOLDER`` or ``openai: NAME @ URL``; "" without one."""
    if not spec:
        return ""
    if not isinstance(spec, dict):
        return str(spec)
    b = spec.get("backend")
    if b == "hf":
        return f"hf: {spec.get('model')}"
    if b == "openai":
        from search.models.trust import strip_userinfo  # never keep a URL's password
        return f"openai: {spec.get('model')} @ {strip_userinfo(str(spec.get('base_url')))}"
    return BUNDLED


def _bundled_words() -> set[str]:
    """"bundled" in every language: the id, and what rows saved before ids were stored hold."""
    words = {BUNDLED}
    for lang in LANGUAGES:
        with i18n.using(lang):
            words.add(_("bundled"))
    return words


def model_label(stored: str) -> str:
    """A stored model id (``model_id``; also a row saved before, holding a translated
    "bundled") in the session's language."""
    stored = str(stored or "")
    if stored in _bundled_words():
        return _("bundled")
    if stored.startswith("hf: "):
        return _("{model} (local folder)").format(model=stored[4:])
    if stored.startswith("openai: ") and " @ " in stored:
        name, url = stored[8:].rsplit(" @ ", 1)
        from search.models.trust import strip_userinfo  # a row saved before ids were stripped
        return _("{model} (server {url})").format(model=name, url=strip_userinfo(url))
    return stored


def models_matching(text: str, stored: Iterable[str] = ()) -> list[str]:
    """The stored model values (``stored``, plus "bundled" in every language) whose label, in
    any language, contains ``text`` (case-insensitive): what a History search for "bundled"
    or "内置" also matches."""
    t = text.strip().casefold()
    if not t:
        return []
    out = []
    for value in sorted(_bundled_words() | set(stored)):
        names = {value}
        for lang in LANGUAGES:
            with i18n.using(lang):
                names.add(model_label(value))
        if any(t in n.casefold() for n in names):
            out.append(value)
    return out
