"""`python -m search curve`: names its split and its interval; validation is selectable."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _curve(*args):  # 3 problems x 2 chains of the bundled model: a few seconds
    r = subprocess.run([sys.executable, "-m", "search", "curve", "--budgets", "1,2",
                        "--problems", "3", "--json", *args], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_curve_on_validation_names_split_and_wilson_interval():
    from search.tasks.arithmetic import validation
    o = _curve("--split", "validation")
    assert o["split"] == "validation" and o["problems"] == 3
    assert "Wilson" in o["ci_method"]
    for row in o["curve"]:
        assert 0.0 <= row["ci_low"] < row["ci_high"] <= 1.0  # never a point, even at 0 or 1
    assert len(validation(3)) == 3
