"""Honest claims in what people read: the exact step checker is a perfect *process* verifier,
not "the upper bound for any verifier" (best-of-16 with it measured 0.887 against pass@16 0.910:
it rejects chains that reach the right answer through a wrong step). pass@k is the ceiling for
outcome verifiers."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Everything a person reads: the app's pages and panels, pure viz (captions, legends), the
# backend's labels and CLI help, the README and the model card.
USER_FACING = ["README.md", "app.py", "pages", "ui", "viz", "search", "weights"]
OLD_CLAIM = re.compile(
    r"upper[ -]bound[^.\n]{0,60}\b(any|every|learned|no)\b[^.\n]{0,20}verifier"
    r"|perfect verifier[^.\n]{0,10}\(?(the |an )?upper[ -]bound"
    r"|(verifier|checker)[^.\n]{0,20}(the |an )upper[ -]bound"
    r"|upper[ -]bound (a|no) learned verifier", re.IGNORECASE)


def _files():
    for name in USER_FACING:
        p = ROOT / name
        paths = [p] if p.is_file() else sorted(p.rglob("*")) if p.is_dir() else []
        for f in paths:
            if f.suffix in (".py", ".md", ".json", ".toml") and f.is_file():
                yield f


def test_pattern_catches_the_old_wordings():
    for old in ["best-of-k, perfect verifier (upper bound)",
                "the exact step checker (a perfect verifier, the upper bound)",
                "fully correct chains: an upper bound for any verifier",
                "a perfect verifier: an upper bound no learned verifier reaches",
                "exact step checker (perfect verifier: an upper bound)",
                "a *perfect verifier*, the upper bound a learned verifier aims for"]:
        assert OLD_CLAIM.search(old), old
    assert not OLD_CLAIM.search("pass@k is the ceiling for outcome verifiers")


def test_no_user_facing_text_calls_the_checker_an_upper_bound():
    hits = []
    for f in _files():
        text = f.read_text(encoding="utf-8", errors="replace")
        # Join string literals split over lines ("... an upper " "bound ...") before matching.
        joined = re.sub(r'"\s*\n\s*f?"', "", text)
        for m in OLD_CLAIM.finditer(joined):
            hits.append(f"{f.relative_to(ROOT)}: {m.group(0)!r}")
    assert not hits, "\n".join(hits)


def test_labels_and_cli_help_name_a_process_verifier():
    from search.scoring import ExactChecker
    from search.analysis.sweeps import POOL_CURVES
    assert "process verifier" in ExactChecker.label
    assert "process verifier" in POOL_CURVES["best_check"][2]
    from tests.conftest import run_search_cli
    out = run_search_cli("solve", "--help").stdout
    assert "process verifier" in " ".join(out.split())
    assert not OLD_CLAIM.search(" ".join(out.split()))
