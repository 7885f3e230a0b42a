"""What a served request asks for, read from its model name (or the path alias).

    thoughtscope:<strategy>@<budget>[:<scorer>]      e.g. thoughtscope:majority@16
                                                          thoughtscope:best-of-n@8:prm

Why the model name: every OpenAI SDK (Python, JS, curl, LangChain, a chat UI's model box) sets
``model`` with no extra code, so an application switches from its plain model to "majority vote
over 16 chains" by changing one string, and the name is what logs and dashboards already show.
The path form ``/v1/<strategy>/<budget>[/<scorer>]/chat/completions`` (ThinkBooster's style,
``base_url=".../v1/majority/16"``) is accepted as an alias for clients that cannot change the model
string; when a request uses the path form, the path decides and ``model`` is only echoed.

The budget and scorer are checked by the strategy registry's own range and scorer table (the
ranges the pages and the CLI use), so a name the gateway accepts is a run the app can open.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

PREFIX = "thoughtscope"
# the name's shape; each part is checked against the registry afterwards
_NAME = re.compile(r"^(?P<strategy>[A-Za-z][A-Za-z0-9_\-]{0,40})"
                   r"(?:@(?P<budget>[^:]{1,12}))?(?::(?P<scorer>[A-Za-z0-9_\-]{1,40}))?$")
# scorers a served request may not use: they read the gold answer (an oracle)
ORACLE_SCORERS = ("perfect",)


class ModelNameError(ValueError):
    """A model name or path the gateway cannot serve; ``param`` and ``code`` for the error
    JSON, ``status`` the HTTP status."""

    def __init__(self, message: str, code: str, param: str = "model", status: int = 400):
        super().__init__(message)
        self.code, self.param, self.status = code, param, status


@dataclass(frozen=True)
class Choice:
    """A checked strategy, budget and scorer (None: the strategy's default)."""
    strategy: str
    budget: int
    scorer: Optional[str] = None

    @property
    def model(self) -> str:
        """The canonical model name of this choice."""
        return f"{PREFIX}:{self.strategy}@{self.budget}" + (f":{self.scorer}" if self.scorer
                                                            else "")


def check(strategy: str, budget: Optional[str], scorer: Optional[str],
          param: str = "model") -> Choice:
    """A Choice from its three parts as typed; ModelNameError (one line) for an unknown strategy
    or scorer, an oracle scorer, or a budget outside the strategy's range."""
    from search.scoring import SCORERS
    from search.strategies import DEFAULTS, STRATEGIES, get_strategy, strategy_name
    name = strategy_name(strategy or "")
    if name not in STRATEGIES:
        raise ModelNameError(f"unknown strategy {strategy!r}; choose one of "
                         f"{', '.join(STRATEGIES)}", "unknown_strategy", param)
    if budget is None or budget == "":
        value = DEFAULTS[name]["budget"]
    else:
        try:
            value = int(budget)
        except ValueError:
            raise ModelNameError(f"the budget in {param} must be a whole number, got "
                             f"{str(budget)[:20]!r}", "invalid_budget", param) from None
    entry = get_strategy(name)
    if not entry.budget_range().contains(value):
        raise ModelNameError(f"budget ({entry.knob}) must be an integer in [1, {entry.max_budget}] "
                         f"for {name}, got {value}", "budget_out_of_range", param)
    if scorer:
        scorer = scorer.strip().lower().replace("-", "_")
        if scorer not in SCORERS:
            raise ModelNameError(f"unknown scorer {scorer!r}; choose one of "
                             f"{', '.join(s for s in SCORERS if s not in ORACLE_SCORERS)}",
                             "unknown_scorer", param)
        if scorer in ORACLE_SCORERS:
            raise ModelNameError(f"scorer {scorer!r} is an oracle (it reads the gold answer): a "
                             "served request cannot use it", "oracle_scorer", param)
        if not entry.uses_scorer:
            raise ModelNameError(f"{name} uses no scorer", "unknown_scorer", param)
    return Choice(name, value, scorer or None)


def parse_model(model) -> Choice:
    """The Choice a model name asks for (module docstring). ModelNameError with status 404
    (``model_not_found``) for a name that is not ``thoughtscope:...``."""
    if not isinstance(model, str) or not model.strip():
        raise ModelNameError("'model' is required: thoughtscope:<strategy>@<budget>[:<scorer>], "
                         "e.g. thoughtscope:majority@16 (GET /v1/models lists them)",
                         "missing_model", "model")
    text = model.strip()
    head, sep, rest = text.partition(":")
    if not sep or head.lower() != PREFIX:
        raise ModelNameError(f"the model {text[:60]!r} does not exist here: this gateway serves "
                         f"{PREFIX}:<strategy>@<budget>[:<scorer>], e.g. {PREFIX}:majority@16",
                         "model_not_found", "model", status=404)
    m = _NAME.match(rest)
    if m is None:
        raise ModelNameError(f"cannot read the model name {text[:60]!r}: write "
                         f"{PREFIX}:<strategy>@<budget>[:<scorer>]", "invalid_model", "model")
    return check(m["strategy"], m["budget"], m["scorer"])


def listed() -> list[Choice]:
    """What ``/v1/models`` lists: every strategy at its default budget (and default
    scorer). Any budget in range is served; these are the starting points."""
    from search.strategies import DEFAULTS, STRATEGIES
    return [Choice(s, DEFAULTS[s]["budget"]) for s in STRATEGIES]
