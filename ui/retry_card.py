"""The self-correcting model's card on a page (issue 29 item 2): retry data against error-free
and noisy data (Physics of LMs 2.2's comparison) and whether the model detects and fixes its
wrong steps, read from the measurement cached beside its weights
(``weights/arith-retry-tiny/heldout_metrics.json``, written by
``python -m search.training.retry_card --write-card``; ``search.analysis.selfcorrect``). The
page never recomputes it. ``retry_card_tables`` is pure (rows for the tables); ``show`` draws.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import streamlit as st

from i18n import _, ngettext

METRICS = "heldout_metrics.json"
COMMAND = "python -m search.training.retry_card --json"


def load_measurement(model_dir: Path) -> Optional[dict]:
    """The cached measurement in ``model_dir`` (``search.analysis.selfcorrect.measure``'s output
    with ``rows``), or None when the file is missing, damaged or from before the three-way
    comparison (no ``verdict``)."""
    try:
        m = json.loads((Path(model_dir) / METRICS).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or not isinstance(m.get("verdict"), dict) or "models" not in m:
        return None
    return m


def _with_interval(p: float, lo: float, hi: float) -> str:
    """'x% [lo, hi]' (fractions in, percent out) to the digits the interval supports
    (``ui.wording.supported_percent``; issue 29 item 7: before, one decimal over intervals
    several points wide)."""
    from ui.wording import supported_percent as sp
    return f"{sp(p, lo, hi)} [{sp(lo, lo, hi).rstrip('%')}, {sp(hi, lo, hi).rstrip('%')}]"


def _pct(r: Optional[dict]) -> str:
    """'k/n = x% [lo, hi]' of a rate dict ({"k", "n", "rate", "ci"}); '–' with nothing to judge."""
    if not r or not r.get("n"):
        return "–"
    return f"{r['k']}/{r['n']} = " + _with_interval(r["rate"], r["ci"][0], r["ci"][1])


def _acc(run: dict) -> str:
    return _with_interval(run["accuracy"], run["ci"][0], run["ci"][1])


def _rate_words(r: Optional[dict], split: str) -> str:
    """'k/n = x% (95% interval lo–hi, n held-out steps)' of a rate dict ({"k", "n", "rate",
    "ci"}) for a sentence (issue 29 item 7: split, n and interval, digits the interval
    supports); '–' with nothing to judge."""
    from ui.wording import measured_interval
    if not r or not r.get("n"):
        return "–"
    return f"{r['k']}/{r['n']} = " + measured_interval(r["rate"], r["ci"][0], r["ci"][1], r["n"],
                                                        split, bold=False, what=_("steps"))


def _acc_words(run: dict, m: dict) -> str:
    """A model's accuracy for a sentence with its interval, n and split (issue 29 item 7)."""
    from ui.wording import measured_interval
    s = m["settings"]
    return measured_interval(run["accuracy"], run["ci"][0], run["ci"][1], s["problems"],
                             s["split"], bold=False)


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def _model_label(name: str) -> str:
    return {"errorfree": _("error-free data"), "noisy": _("noisy data (the bundled model)"),
            "retry": _("retry data (this model)")}.get(name, name)


def _sampling(temp: str) -> str:
    return _("greedy") if float(temp) == 0 else f"T={float(temp):g}"


def _sample(key: str, d: dict) -> str:
    """A detection sample's name: its sampling and chains per problem (the key when the cache
    predates those fields)."""
    if "temperature" not in d:
        return key
    return ngettext("{sampling}, {n} chain per problem", "{sampling}, {n} chains per problem",
                    d["chains_per_problem"]).format(
        sampling=_sampling(d["temperature"]), n=d["chains_per_problem"])


def retry_card_tables(m: dict) -> tuple[list[dict], list[dict], list[dict]]:
    """Rows of the card's three tables (translated headers): the models (accuracy of one chain
    per problem at each temperature, 95% Wilson, training tokens and steps), the paired
    exact McNemar tests, and the retry model's detection diagnostics per sample."""
    temps = list(next(iter(m["models"].values()))["runs"])
    models = []
    for name, row in m["models"].items():
        tr = row.get("training") or {}
        r = {_("Training data"): _model_label(name),
             _("Training tokens"): f"{tr['tokens']:,}" if tr.get("tokens") else "–",
             _("Optimizer steps"): str(tr.get("steps", "–"))}
        for t in temps:
            r[_("Accuracy, {sampling}").format(sampling=_sampling(t))] = _acc(row["runs"][t])
        models.append(r)
    pairs = []
    for key, p in m["pairs"].items():
        pair, temp = key.split("@")
        a, b = pair.split("_vs_")
        pairs.append({_("A vs B"): f"{_model_label(a)} vs {_model_label(b)}",
                      _("Sampling"): _sampling(temp), _("Only A right"): p["only_a"],
                      _("Only B right"): p["only_b"], _("Both right"): p["both_right"],
                      _("Both wrong"): p["both_wrong"], _("McNemar p"): _p(p["mcnemar_p"])})
    det = []
    for key, d in m.get("detection", {}).items():
        det.append({_("Chains sampled"): _sample(key, d), _("Steps counted"): d["pairs"],
                    _("P(retry | wrong step)"): _pct(d["retry_after_wrong"]),
                    _("P(retry | right step)"): _pct(d["retry_after_right"]),
                    _("Retry fixes the step"): _pct(d["fixed"]),
                    _("Right at the first try"): _pct(d["first_try_right"]),
                    _("Wrong steps repaired"): _pct(d["repaired"])})
    return models, pairs, det


def verdict_lines(m: dict) -> list[str]:
    """The card's conclusions as translated sentences: the paper's shape (retry against
    error-free at each sampling, with the paired counts and p) and, when it does not hold,
    which link fails, with the numbers of the largest detection sample."""
    v = m["verdict"]
    parts = []
    for temp, word in v["shape"].items():
        p = m["pairs"][f"retry_vs_errorfree@{temp}"]
        word_t = {"holds": _("retry ahead"), "reversed": _("error-free ahead"),
                  "no clear difference": _("no clear difference")}.get(word, word)
        parts.append(_("{sampling}: {a} against {b} ({only_a} problems only the retry model "
                       "gets right, {only_b} only the error-free one, p = {p}: {word})").format(
            sampling=_sampling(temp),
            a=_acc_words(m['models']['retry']['runs'][temp], m),
            b=_acc_words(m['models']['errorfree']['runs'][temp], m),
            only_a=p["only_a"], only_b=p["only_b"], p=_p(p["mcnemar_p"]), word=word_t))
    head = (_("**The paper's shape holds here**: retry data beats error-free data.")
            if v["holds"] else
            _("**The paper's shape does not hold at this scale**: retry data does not beat "
              "error-free data."))
    lines = [head + " " + "; ".join(parts) + "."]
    key = v.get("detection_sample")
    if not key:
        return lines
    d, td = m["detection"][key], m.get("training_data", {})
    split = m.get("settings", {}).get("split", "heldout")
    names = {"detection": _("detection"), "correction": _("correction")}
    sample = _sample(key, d)
    if len(v["failing"]) == 2:
        lines.append(_("**Both links fail, detection by far the more** ({sample}): few wrong "
                       "steps are retried, and a retry is no better than a first try.").format(
            sample=sample) if v.get("binding") == "detection" else
            _("**Both links fail: detection and correction** ({sample}).").format(sample=sample))
    elif v["failing"]:
        lines.append(_("**The link that fails: {link}** ({sample}).").format(
            link=names[v["failing"][0]], sample=sample))
    else:
        lines.append(_("**Neither link fails** by the card's rule ({sample}).").format(
            sample=sample))
    lines.append(_("Detection: after a wrong step the model writes a retry {w} of the time, "
                   "after a right step {r}; a model that copied its training data exactly "
                   "would retry {data:.1f}% of wrong steps and no right one.").format(
        w=_rate_words(d["retry_after_wrong"], split), r=_rate_words(d["retry_after_right"], split),
        data=100 * td.get("retry_after_wrong", 0.0)))
    lines.append(_("Correction: a retry after a wrong step states it right {f}, against {first} "
                   "for a step at its first try. Only {rep} of wrong steps are repaired.").format(
        f=_rate_words(d["fixed"], split), first=_rate_words(d["first_try_right"], split),
        rep=_rate_words(d["repaired"], split)))
    if v.get("binding") == "detection":
        lines.append(_("Detection is the binding link: most wrong steps are never retried, "
                       "so even a perfect fix would repair few."))
    elif v.get("binding") == "correction":
        lines.append(_("The binding link is **correction**: wrong steps are retried, but the "
                       "retries are seldom right."))
    return lines


def show(task) -> None:
    """Draw the card of ``task``'s model (an expander) from its cached measurement; a one-line
    note when there is none."""
    m = load_measurement(task.model_dir)
    with st.expander(_("Does training on retry data pay? The self-correcting model, measured "
                       "on held-out")):
        if m is None:
            st.caption(_("No measurement cached beside this model. Run `{command}` to make "
                         "one.").format(command=COMMAND))
            return
        import pandas as pd
        s = m["settings"]
        st.markdown(_("Three models with the same shape, optimizer, schedule and seed, trained "
                      "on different data: every step right, the noisy teacher's data (wrong "
                      "steps carried on), and the same noisy data with retries (a wrong step "
                      "taken back by `Wait, ` and restated), as Ye, Xu, Li and Allen-Zhu 2024 "
                      "(Physics of Language Models 2.2) compare them."))
        for line in verdict_lines(m):
            st.markdown(line)
        models, pairs, det = retry_card_tables(m)
        st.table(pd.DataFrame(models).set_index(_("Training data")))
        if not m.get("tokens_equal"):
            st.caption(_("Training tokens are not exactly equal: the largest gap is {gap:.2f}% "
                         "of the smallest.").format(gap=100 * (m.get("tokens_spread") or 0)))
        st.table(pd.DataFrame(pairs).set_index(_("A vs B")))
        if det:
            st.table(pd.DataFrame(det).set_index(_("Chains sampled")))
        st.caption(_("Split: {split}, the first {n} problems, the same for every "
                     "model; one chain per problem, seed {seed}. Intervals: 95% Wilson; tests: "
                     "exact McNemar on the problems only one model gets right. Steps are "
                     "judged by the exact step checker; counted are steps written from a right "
                     "state and followed by another step. Recompute with `{command}`; the "
                     "model card (weights/arith-retry-tiny/README.md) says more.").format(
            split=_("held-out (report only)") if s["split"] == "heldout" else _("validation"),
            n=s["problems"], seed=s["seed"], command=COMMAND))
