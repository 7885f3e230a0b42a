"""Every command and project path the README (and docs/*.md) names in backticks exists (issue 30
item 8: a figure is only as good as the command that measured it, so the command must still run
under that name).

What is checked, in inline code spans and fenced code blocks (backslash continuations joined):

- a project path (``benchmarks/...``, ``scripts/...``, ``search/...``, ``tests/...``, ...) is a
  file or folder of the checkout (a few paths made at run time are listed in ``RUNTIME_PATHS``);
- ``python -m search SUB --flag ...``: ``SUB`` is a subcommand of ``search.cli.main``'s parser
  and every ``--flag`` is an option of that subcommand's parser (its own parser for ``forcing``
  and ``serve``, the module's source for ``train-verifier``);
- ``python -m MODULE --flag`` for a module of this project: the module exists and names each
  flag in its source; ``python FILE.py --flag``: the file exists and names each flag.

A renamed benchmark, a removed subcommand or a renamed flag fails here, naming the README line.
"""
from __future__ import annotations

import argparse
import functools
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Top-level folders of the checkout whose paths the README names.
PROJECT_DIRS = ("benchmarks", "scripts", "search", "tests", "viz", "ui", "pages", "docs",
                "weights", "i18n", ".ci", "data")
# Paths the app writes at run time (not in a clean checkout).
# made at run time (git-ignored /data/): absent on a clean clone until the app or a test runs
RUNTIME_PATHS = {"data/", "data/runs.sqlite3", "data/pools/"}


def _spans(text: str) -> list[tuple[int, str]]:
    """(line number, code) for every fenced block line (continuations joined, comments cut)
    and every inline code span of ``text``."""
    out: list[tuple[int, str]] = []
    lines = text.split("\n")
    prose: list[str] = []
    fenced, pending, start = False, "", 0
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            prose.append("")
            continue
        if not fenced:
            prose.append(line)
            continue
        prose.append("")
        if not pending:
            start = i
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        out.append((start, pending + stripped))
        pending = ""
    body = "\n".join(prose)
    for m in re.finditer(r"`([^`]+)`", body):
        out.append((body.count("\n", 0, m.start()) + 1, " ".join(m.group(1).split())))
    return out


def _words(cmd: str) -> list[str]:
    cmd = re.sub(r"\$\((?:[^()]|\([^()]*\))*\)", "X", cmd)  # $(python -c '...') -> X
    try:
        words = shlex.split(cmd, comments=True)
    except ValueError:
        words = cmd.split()
    return words


def _flags(words: list[str]) -> list[str]:
    return [w.split("=")[0] for w in words if re.fullmatch(r"--[a-z][a-z0-9-]*(=.*)?", w)]


def _commands(words: list[str]) -> list[list[str]]:
    """Split a shell line at ``;``, ``&&``, ``|`` and drop leading ``VAR=value`` words and
    ``time``; the pieces that then start with ``python`` or ``bash`` (and have an argument)."""
    pieces, cur = [], []
    for w in words:
        if w in (";", "&&", "|", "||"):
            pieces.append(cur)
            cur = []
        else:
            cur.append(w)
    pieces.append(cur)
    out = []
    for p in pieces:
        while p and (re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", p[0]) or p[0] == "time"):
            p = p[1:]
        if len(p) > 1 and (p[0] == "bash" or p[0] in ("python", "python3")):
            out.append(p)
    return out


@functools.lru_cache(maxsize=1)
def _search_parsers() -> dict[str, argparse.ArgumentParser | None]:
    from search.cli.main import build_parser
    subs: dict[str, argparse.ArgumentParser | None] = {}
    for a in build_parser()._actions:
        if isinstance(a, argparse._SubParsersAction):
            subs.update(a.choices)
    from search.cli.forcing import build_parser as forcing_parser
    from search.serve.cli import build_parser as serve_parser
    subs["forcing"] = forcing_parser()
    subs["serve"] = serve_parser()
    subs["train-verifier"] = None  # its parser is built inside main(): read its source
    return subs


SOURCE_OF_SUB = {"train-verifier": ROOT / "search/training/verifier_train.py"}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for a in parser._actions for o in a.option_strings}


def _module_source(module: str) -> Path | None:
    """The file of a module of this project (a package's ``__main__.py`` or ``__init__.py``),
    or None when it is not one of ours."""
    top = module.split(".")[0]
    if not (ROOT / top).is_dir():
        return None
    path = ROOT.joinpath(*module.split("."))
    for cand in (path.with_suffix(".py"), path / "__main__.py", path / "__init__.py"):
        if cand.is_file():
            return cand
    return ROOT / "__missing__" / module


def _source_text(path: Path) -> str:
    """The source of ``path``; a package's ``__main__.py`` with its siblings (a flag may be
    defined in the package's cli module)."""
    if path.name in ("__main__.py", "__init__.py"):
        return "\n".join(p.read_text() for p in sorted(path.parent.glob("*.py")))
    return path.read_text()


def _py_files() -> dict[str, list[Path]]:
    """File name -> the project's ``.py`` files of that name (top level and PROJECT_DIRS)."""
    out: dict[str, list[Path]] = {}
    for path in [*ROOT.glob("*.py"), *(f for d in PROJECT_DIRS for f in (ROOT / d).rglob("*.py"))]:
        out.setdefault(path.name, []).append(path)
    return out


def _problems(doc: Path) -> list[str]:
    """Every command or path of ``doc`` that does not exist, as 'file:line: what'."""
    subs = _search_parsers()
    py_files = _py_files()
    bad: list[str] = []
    where = doc.relative_to(ROOT)
    for line, code in _spans(doc.read_text()):
        # a bare file name (`bench_adaptive.py`, `bench_real_model.py --rounds 0`)
        first = code.split()[0] if code.split() else ""
        if re.fullmatch(r"[\w-]+\.py", first):
            found = py_files.get(first, [])
            if not found:
                bad.append(f"{where}:{line}: no file named {first} in the project")
            else:
                text = "\n".join(f.read_text() for f in found)
                for f in _flags(_words(code)[1:]):
                    if f not in text:
                        bad.append(f"{where}:{line}: {first} has no flag {f}")
        # project paths
        for m in re.finditer(r"(?<![\w./~$-])((?:%s)/[\w.\-/]*)" % "|".join(
                re.escape(d) for d in PROJECT_DIRS), code):
            p = m.group(1).rstrip(".,:;)")
            if p in RUNTIME_PATHS or "*" in p:
                continue
            if not (ROOT / p).exists():
                bad.append(f"{where}:{line}: path {p} does not exist ({code[:80]!r})")
        for cmd in _commands(_words(code)):
            if cmd[0] == "bash":
                if len(cmd) > 1 and not (ROOT / cmd[1]).is_file():
                    bad.append(f"{where}:{line}: script {cmd[1]} does not exist")
                elif len(cmd) > 1 and cmd[1].startswith("scripts/"):
                    src = (ROOT / cmd[1]).read_text()
                    for f in _flags(cmd[2:]):
                        if f not in src:
                            bad.append(f"{where}:{line}: {cmd[1]} has no flag {f}")
                continue
            if len(cmd) < 2:
                continue
            if cmd[1] == "-m" and len(cmd) > 2:
                module, rest = cmd[2], cmd[3:]
                if module == "search" and rest and not rest[0].startswith("-"):
                    sub = rest[0]
                    if sub not in subs:
                        bad.append(f"{where}:{line}: `python -m search {sub}` is no "
                                   f"subcommand (have {sorted(subs)})")
                        continue
                    parser = subs[sub]
                    known = (_options(parser) if parser is not None
                             else set(re.findall(r"[\"'](--[a-z][a-z0-9-]*)[\"']",
                                                 SOURCE_OF_SUB[sub].read_text())))
                    for f in _flags(rest[1:]):
                        if f not in known and f != "--help":
                            bad.append(f"{where}:{line}: `python -m search {sub}` has no "
                                       f"flag {f}")
                    continue
                src = _module_source(module)
                if src is None:
                    continue  # not this project's (vllm, sglang, pytest ...)
                if not src.is_file():
                    bad.append(f"{where}:{line}: module {module} does not exist")
                    continue
                text = _source_text(src)
                for f in _flags(rest):
                    if f != "--help" and f not in text:
                        bad.append(f"{where}:{line}: `python -m {module}` has no flag {f}")
            elif cmd[1].endswith(".py"):
                path = ROOT / cmd[1]
                if not path.is_file():
                    bad.append(f"{where}:{line}: file {cmd[1]} does not exist")
                    continue
                text = path.read_text()
                for f in _flags(cmd[2:]):
                    if f != "--help" and f not in text:
                        bad.append(f"{where}:{line}: {cmd[1]} has no flag {f}")
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_named_commands_exist(doc):
    assert _problems(doc) == []


def test_readme_names_commands():
    """The parser finds the commands the README is known to name (so an empty result above is
    not a parser that found nothing)."""
    codes = [c for _, c in _spans((ROOT / "README.md").read_text())]
    cmds = [" ".join(c) for code in codes for c in _commands(_words(code))]
    assert any(c.startswith("python benchmarks/bench_adaptive.py") for c in cmds)
    assert any(c.startswith("python -m search forcing ") for c in cmds)
    assert any(c.startswith("bash scripts/test.sh --fast") for c in cmds)
    assert len(cmds) >= 30


def test_renamed_benchmark_fails(tmp_path, monkeypatch):
    """A README naming a benchmark that is not there, a subcommand that is not there or a flag a
    command does not take is reported, naming each."""
    doc = tmp_path / "README.md"
    doc.write_text("Measured (`python benchmarks/bench_adaptive_renamed.py`, 2026-12-06).\n\n"
                   "```bash\npython -m search solvee \"8*7+6\"\n"
                   "python -m search curve --problems 200 \\\n    --no-such-flag\n"
                   "python benchmarks/bench_adaptive.py --no-such-flag\n```\n"
                   "and `bench_live_renamed.py --tabs 1`.\n")
    monkeypatch.setattr(Path, "relative_to", lambda self, other: self.name)
    bad = _problems(doc)
    assert any("bench_adaptive_renamed.py does not exist" in b for b in bad), bad
    assert any("`python -m search solvee` is no subcommand" in b for b in bad), bad
    assert any("`python -m search curve` has no flag --no-such-flag" in b for b in bad), bad
    assert any("bench_adaptive.py has no flag --no-such-flag" in b for b in bad), bad
    assert any("no file named bench_live_renamed.py" in b for b in bad), bad
    assert len(bad) == 6, bad  # the path check also names the missing file
