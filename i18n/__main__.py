"""``python -m i18n extract``: collect every string marked with ``_``, ``N_`` or ``ngettext``
in app.py, pages/, ui/, viz/ and search/ into ``i18n/messages.pot`` and merge it into each
language's PO file (new strings appear untranslated, strings no longer in the code are marked
obsolete). ``python -m i18n check``: list untranslated or fuzzy entries per language and exit 1
if there are any. Both use Babel (``babel.messages``)."""
from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from i18n import DOMAIN, HERE, LANGUAGES, SOURCE, catalogue_path

ROOT = HERE.parent
SOURCES = ["app.py", "pages", "ui", "viz", "search"]
KEYWORDS = {"_": None, "N_": None, "gettext": None, "ngettext": (1, 2)}


def template() -> Catalog:
    """A catalogue of every marked string in SOURCES (locations relative to the repo)."""
    cat = Catalog(domain=DOMAIN, project="Thoughtscope", charset="utf-8")
    for name in SOURCES:
        path = ROOT / name
        if path.is_file():
            from babel.messages.extract import extract_from_file
            found = [(path.name, lineno, msg, comments, ctx)
                     for lineno, msg, comments, ctx in
                     extract_from_file("python", str(path), keywords=KEYWORDS)]
        else:
            found = [(f"{name}/{fname}", lineno, msg, comments, ctx)
                     for fname, lineno, msg, comments, ctx in
                     extract_from_dir(str(path), method_map=[("**.py", "python")],
                                      keywords=KEYWORDS)]
        for fname, lineno, msg, comments, ctx in found:
            cat.add(msg, None, [(fname, lineno)], auto_comments=comments, context=ctx)
    return cat


def extract() -> None:
    tpl = template()
    with (HERE / "messages.pot").open("wb") as f:
        write_po(f, tpl, width=100, omit_header=False)
    for lang in LANGUAGES:
        if lang == SOURCE:
            continue
        path = catalogue_path(lang)
        if path.exists():
            with path.open("rb") as f:
                cat = read_po(f, locale=lang)
        else:
            cat = Catalog(locale=lang, domain=DOMAIN, project="Thoughtscope", charset="utf-8")
        cat.update(tpl, no_fuzzy_matching=True)
        with path.open("wb") as f:
            write_po(f, cat, width=100, ignore_obsolete=True)
        missing = sum(1 for m in cat if m.id and (not m.string or (
            isinstance(m.string, tuple) and not all(m.string))))
        print(f"{path.relative_to(ROOT)}: {len(cat)} strings, {missing} untranslated")


def check() -> int:
    bad = 0
    for lang in LANGUAGES:
        if lang == SOURCE:
            continue
        with catalogue_path(lang).open("rb") as f:
            cat = read_po(f, locale=lang)
        for m in cat:
            if not m.id:
                continue
            empty = not m.string or (isinstance(m.string, tuple) and not all(m.string))
            if empty or m.fuzzy:
                bad += 1
                print(f"{lang}: {'fuzzy' if m.fuzzy else 'untranslated'}: {m.id!r}")
    return 1 if bad else 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "extract":
        extract()
    elif cmd == "check":
        sys.exit(check())
    else:
        sys.exit("usage: python -m i18n extract|check")
