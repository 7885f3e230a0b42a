"""Strategies on the free-form task (issue 9 items 1 and 3): paragraph steps, answers from
\\boxed{}, "The answer is" or a finished chain's last line, spellings of one number voting
together, chat templates rendered by the policy, and no confidence scorer without logprobs."""
from __future__ import annotations

import pytest

from search.models.base import Capabilities, Continuation, SampleBatch, check_sample_args
from search.runtime.solve import solve
from search.tasks import get_task
from search.tasks.freeform import DATA_DIR, GSM8K_FILE

T = get_task("freeform")
D = T.step_delimiter
needs_gsm8k = pytest.mark.skipif(not (DATA_DIR / GSM8K_FILE).is_file(),
                                 reason=f"GSM8K data absent: {DATA_DIR / GSM8K_FILE} "
                                        "(../shared/data beside the project)")


def _cont(text: str, finish: str, logprobs: bool = True) -> Continuation:
    parts = text.split(D)
    steps = [(s, len(s) + (len(D) if i < len(parts) - 1 else 0), -0.1 * (i + 1))
             for i, s in enumerate(parts)]
    tokens = sum(s[1] for s in steps)
    lps = [-0.01] * tokens if logprobs else []
    return Continuation(text=text, tokens=tokens, token_logprobs=lps, finish=finish, steps=steps)


class ParagraphPolicy:
    """Hands out scripted whole chains (``stop="chain"``) and, for ``stop="step"``, the next
    paragraph of ``script`` after the steps already in the prefix. Records every prefix."""
    name, n_parameters, device = "paragraphs", 1, "cpu"

    def __init__(self, chains=(), script=(), logprobs=True, template=None):
        self.chains, self.script, self.prefixes = list(chains), list(script), []
        self.logprobs, self.template = logprobs, template
        self.capabilities = Capabilities(backend="openai", logprobs=logprobs,
                                         chat_template=template is not None)

    def render_chat(self, messages):
        if self.template is None:
            return None
        return "".join(f"<|{m['role']}|>{m['content']}<|end|>" for m in messages) + "<|assistant|>"

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64):
        check_sample_args(prefixes, n, temperature, top_p, max_new_tokens)
        self.prefixes += list(prefixes)
        rows = []
        for p in prefixes:
            row = []
            for j in range(n):
                if stop == "chain":
                    row.append(_cont(*self.chains.pop(0), logprobs=self.logprobs))
                else:
                    done = p.count(D) - 1 - (0 if self.template else 2)  # steps already there
                    i = min(max(done, 0), len(self.script) - 1)
                    text, finish = self.script[i]
                    row.append(_cont(text + f" ({j})" * (finish == "step"), finish,
                                     logprobs=self.logprobs))
            rows.append(row)
        gen = sum(c.tokens for r in rows for c in r)
        return SampleBatch(rows, sum(len(p) for p in prefixes), gen, 0, 0.0)


@needs_gsm8k
def test_spellings_of_the_gold_2125_vote_together_in_a_majority_run():
    problem = next(p for p in T.split("heldout") + T.split("validation") if p.answer == "2125")
    chains = [(f"Add the parts.{D}The total is 2,125 bolts.{D}The answer is 2,125.", "eos"),
              (f"Multiply first.{D}So it is \\boxed{{2125}}", "eos"),
              (f"Work it out.{D}2125.0", "eos"),  # no marker: the finished chain's last line
              (f"A slip.{D}The answer is 2126", "eos"),
              (f"Cut off before the end{D}The answer is 21", "length")]  # cut: no answer
    pol = ParagraphPolicy(chains)
    r = solve(problem.text, "majority", 5, policy=pol, task="freeform")
    assert r.gold == "2125"
    assert r.tally == {"2125": 3.0, "2126": 1.0}
    assert r.answer == "2125" and r.correct is True and r.extra["abstained"] == 1
    # Steps are paragraphs: no node holds the delimiter.
    assert all(D not in n.text for n in r.tree.nodes.values())


def test_chat_messages_go_through_the_policys_template():
    script = [("First, 2 bolts of blue.", "step"), ("Half of 2 is 1, so 2 + 1 = 3.", "step"),
              ("The answer is \\boxed{3}.", "step")]
    pol = ParagraphPolicy(script=script, template="toy")
    r = solve(T.example, "beam", 2, policy=pol, task="freeform", temperature=0.8)
    rendered = pol.render_chat(T.chat_messages(T.canonical(T.example)))
    assert pol.prefixes and all(p.startswith(rendered) for p in pol.prefixes)
    assert any(p.startswith(rendered + script[0][0]) and p.endswith(D) for p in pol.prefixes)
    assert r.answer == "3"
    # Without a template the plain prompt is used.
    plain = ParagraphPolicy(script=script)
    solve(T.example, "beam", 2, policy=plain, task="freeform")
    assert all(p.startswith(T.prompt(T.canonical(T.example))) for p in plain.prefixes)


@pytest.mark.parametrize("strategy,kw", [("beam", {}), ("mcts", {}),
                                         ("majority", {"weighted": True})])
def test_no_logprobs_means_no_confidence_scorer(strategy, kw):
    pol = ParagraphPolicy(script=[("The answer is 3", "step")], logprobs=False)
    with pytest.raises(ValueError, match="no token log-probabilities"):
        solve(T.example, strategy, 2, policy=pol, task="freeform", **kw)
    # Plain majority needs no scorer: it runs on such a backend.
    ok = ParagraphPolicy([("The answer is 3", "eos")] * 2, logprobs=False)
    assert solve(T.example, "majority", 2, policy=ok, task="freeform").tally == {"3": 2.0}


# ------------------------------------------- issue 30 item 4: a typed problem's expected answer
BAKER = ("A baker made 24 muffins and sold 9 of them. Then she baked 6 more. How many muffins "
         "does she have now?")


def _baker_chains():
    return [("She has 24 - 9 = 15 left." + D + "15 + 6 = 21. The answer is 21.", "eos"),
            ("24 - 9 = 15." + D + "The answer is \\boxed{21}", "eos"),
            ("9 - 2 = 7." + D + "The answer is 7.", "eos")]


def test_an_expected_answer_judges_a_typed_question():
    from search.runtime.live_run import RunSpec
    from search.replay.timeline import is_right
    spec = RunSpec(text=BAKER, strategy="majority", budget=3, task="freeform", expected=" 21 ")
    assert spec.check() == T.canonical(BAKER)
    r = spec.solve(ParagraphPolicy(chains=_baker_chains()))
    assert r.gold == "21" and r.answer == "21" and r.correct is True
    assert r.tally == {"21": 2.0, "7": 1.0}
    verdicts = sorted((n.answer, n.correct) for n in r.tree.nodes.values() if n.terminal)
    assert verdicts == [("21", True), ("21", True), ("7", False)]
    assert is_right("freeform", r.problem, "7", r.gold) is False
    assert is_right("freeform", r.problem, "21.0", r.gold) is True  # answer equivalence
    assert spec.settings()["expected"] == " 21 "
    # reloaded from its file, the run is still judged against the answer it was given
    from search.tree import SearchResult
    again = SearchResult.from_json(r.to_json())
    assert again.gold == "21" and again.correct is True
    # nothing leaks into the task every other session uses
    assert T.gold(T.canonical(BAKER)) is None and not T.is_correct(T.canonical(BAKER), "21")
    # the vote that the issue saw win is judged wrong against 21
    wrong = RunSpec(text=BAKER, strategy="majority", budget=1, task="freeform", expected="21")
    r7 = wrong.solve(ParagraphPolicy(chains=_baker_chains()[2:]))
    assert r7.answer == "7" and r7.correct is False


def test_without_an_expected_answer_a_typed_question_is_not_judged():
    from search.runtime.live_run import RunSpec
    spec = RunSpec(text=BAKER, strategy="majority", budget=3, task="freeform")
    r = spec.solve(ParagraphPolicy(chains=_baker_chains()))
    assert r.gold is None and r.correct is None and r.answer == "21"
    assert "expected" not in spec.settings()  # old saved runs' settings still match links
    assert all(n.correct is None for n in r.tree.nodes.values() if n.terminal)


@pytest.mark.parametrize("task,expected,match", [
    ("freeform", "x" * 101, "is not an answer"),
    ("freeform", "twenty one apples please", "is not an answer"),
    ("arithmetic", "62", "computes its own gold"),
])
def test_a_bad_expected_answer_is_one_line(task, expected, match):
    from search.runtime.live_run import RunSpec
    text = BAKER if task == "freeform" else "8*7+6"
    with pytest.raises(ValueError, match=match):
        RunSpec(text=text, strategy="majority", budget=3, task=task, expected=expected).check()
