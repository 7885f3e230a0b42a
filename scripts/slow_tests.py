"""Write tests/slow_tests.txt, the tests ``scripts/test.sh --fast`` leaves out, from a timed run.

    bash scripts/test.sh --fast --durations=0 > fast.log   # (or the whole suite)
    python scripts/slow_tests.py fast.log --over 2.0

A test whose setup + call + teardown took at least ``--over`` seconds in that run is listed
(seconds first, then its node id), slowest first, and ``tests/conftest.py`` marks it ``slow``;
the whole suite (``bash scripts/test.sh``, CI) still runs it. The cheapest test of a file is
never listed, so every test file keeps a test in the fast loop. Tests already in the list stay
(a run of ``--fast`` no longer times them). Durations depend on the machine and its load: the
list records the run it came from in its header.

    python scripts/slow_tests.py fast.log slow.log --seconds   # tests/test_seconds.txt

``--seconds`` writes instead every test's seconds from the logs given (those under 0.2 s left
out; a test timed in two logs counts once, from the later; tests not timed keep their line);
``tests/conftest.py`` sums them by file over the tests a run selects and hands the files to
pytest-xdist's workers longest first.
"""
from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LIST = Path(__file__).resolve().parents[1] / "tests" / "slow_tests.txt"
SECONDS = LIST.with_name("test_seconds.txt")
LINE = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def read_durations(log: Path) -> dict[str, float]:
    """{node id: seconds} summed over setup, call and teardown from pytest's --durations."""
    out: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(2)] += float(m.group(1))
    return dict(out)


def read_list(path: Path = LIST) -> dict[str, float]:
    """{node id: seconds} of a slow-test list (comment lines start with #)."""
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            secs, node = line.split(None, 1)
            out[node.strip()] = float(secs)
    return out


def write_seconds(timed: dict[str, float], note: str, path: Path = SECONDS,
                  floor: float = 0.2) -> None:
    """Every test's seconds (``timed``; tests not timed keep their line), those under
    ``floor`` left out."""
    secs = read_list(path)
    secs.update(timed)
    secs = {k: v for k, v in secs.items() if v >= floor}
    head = ["# Seconds of each test (setup + call + teardown; under 0.2 s left out) in "
            f"{note or 'a timed run'}.",
            "# tests/conftest.py sums them by file and starts the longest files first under "
            "pytest-xdist. Regenerate: python scripts/slow_tests.py LOG [LOG...] --seconds.",
            "# seconds  node id"]
    body = [f"{v:6.2f} {k}" for k, v in sorted(secs.items(), key=lambda kv: -kv[1])]
    path.write_text("\n".join(head + body) + "\n", encoding="utf-8")
    print(f"{path}: {len(secs)} tests, {sum(secs.values()):.0f} s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path, nargs="+", help="pytest output with --durations=0")
    ap.add_argument("--over", type=float, default=2.0, help="seconds (default 2.0)")
    ap.add_argument("--note", default="", help="where the timings came from (machine, load)")
    ap.add_argument("--seconds", action="store_true",
                    help="write tests/test_seconds.txt instead of the slow list")
    a = ap.parse_args(argv)
    timed: dict[str, float] = {}
    for log in a.log:
        timed.update(read_durations(log))
    if not timed:
        raise SystemExit(f"{' '.join(map(str, a.log))}: no --durations lines")
    if a.seconds:
        write_seconds(timed, a.note)
        return 0
    slow = {k: v for k, v in read_list().items() if k not in timed}  # kept from before
    slow.update({k: v for k, v in timed.items() if v >= a.over})
    by_file = defaultdict(list)
    for k, v in timed.items():
        by_file[k.split("::")[0]].append((v, k))
    for tests in by_file.values():  # every file keeps its cheapest test in the fast loop
        if all(k in slow for _, k in tests):
            slow.pop(min(tests)[1])
    head = [f"# Tests `scripts/test.sh --fast` leaves out (marked slow by tests/conftest.py): "
            f"each took at least {a.over:g} s", f"# (setup + call + teardown) in {a.note or a.log[0].name}. "
            "Regenerate: python scripts/slow_tests.py LOG --over SECONDS.",
            "# seconds  node id"]
    body = [f"{v:6.2f} {k}" for k, v in sorted(slow.items(), key=lambda kv: -kv[1])]
    LIST.write_text("\n".join(head + body) + "\n", encoding="utf-8")
    print(f"{LIST}: {len(slow)} tests, {sum(slow.values()):.0f} s of {sum(timed.values()):.0f} s timed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
