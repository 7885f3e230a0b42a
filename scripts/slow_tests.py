"""Write tests/slow_tests.txt, the tests ``scripts/test.sh --fast`` leaves out, from a timed run.

    bash scripts/test.sh --fast --durations=0 > fast.log   # (or the whole suite)
    python scripts/slow_tests.py fast.log --over 2.0

A test whose setup + call + teardown took at least ``--over`` seconds in that run is listed
(seconds first, then its node id), slowest first, and ``tests/conftest.py`` marks it ``slow``;
the whole suite (``bash scripts/test.sh``, CI) still runs it. The cheapest test of a file is
never listed, so every test file keeps a test in the fast loop. Tests already in the list stay
(a run of ``--fast`` no longer times them). Durations depend on the machine and its load: the
list records the run it came from in its header.
"""
from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LIST = Path(__file__).resolve().parents[1] / "tests" / "slow_tests.txt"
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path, help="pytest output with --durations=0")
    ap.add_argument("--over", type=float, default=2.0, help="seconds (default 2.0)")
    ap.add_argument("--note", default="", help="where the timings came from (machine, load)")
    a = ap.parse_args(argv)
    timed = read_durations(a.log)
    if not timed:
        raise SystemExit(f"{a.log}: no --durations lines")
    slow = {k: v for k, v in read_list().items() if k not in timed}  # kept from before
    slow.update({k: v for k, v in timed.items() if v >= a.over})
    by_file = defaultdict(list)
    for k, v in timed.items():
        by_file[k.split("::")[0]].append((v, k))
    for tests in by_file.values():  # every file keeps its cheapest test in the fast loop
        if all(k in slow for _, k in tests):
            slow.pop(min(tests)[1])
    head = [f"# Tests `scripts/test.sh --fast` leaves out (marked slow by tests/conftest.py): "
            f"each took at least {a.over:g} s", f"# (setup + call + teardown) in {a.note or a.log.name}. "
            "Regenerate: python scripts/slow_tests.py LOG --over SECONDS.",
            "# seconds  node id"]
    body = [f"{v:6.2f} {k}" for k, v in sorted(slow.items(), key=lambda kv: -kv[1])]
    LIST.write_text("\n".join(head + body) + "\n", encoding="utf-8")
    print(f"{LIST}: {len(slow)} tests, {sum(slow.values()):.0f} s of {sum(timed.values()):.0f} s timed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
