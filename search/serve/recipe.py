"""What the Temperature page's "Serve this" prints: the exact ``python -m search serve`` command
for the settings tuned there, and an ``openai``-client snippet that calls it (pure: no Streamlit).

The command carries the model (the sidebar's: bundled, a local folder or GGUF file, or a server
with its base URL and the *name* of its key's environment variable, never a key), the task, and
the sampling settings as the gateway's defaults (``--temperature``, ``--top-p``, ``--seed``: a
request that sends none gets the tuned ones); the strategy and budget go in the model name the
client sends (``search.serve.naming``). ``serve_argv`` gives the words after ``python -m search
serve``, which ``search.serve.cli.build_parser`` reads back (the page's test checks it does).
"""
from __future__ import annotations

import shlex
from typing import Optional

from search.serve.cli import DEFAULT_PORT, PROG
from search.serve.naming import Choice

# the Temperature page's accuracy measures -> the served strategy and scorer (pass@k reads the
# gold answer: no served strategy does that, so its settings are served as a majority vote)
ESTIMATOR_STRATEGY = {"maj": ("majority", None), "best_conf": ("best_of_n", "confidence"),
                      "pass": ("majority", None)}


def served_choice(estimator: str, budget: int) -> Choice:
    """The strategy the page's accuracy measure ``estimator`` ("maj", "best_conf", "pass") at
    ``budget`` samples corresponds to, checked by the gateway's own name rules
    (``search.serve.naming.check``: ModelNameError for a budget out of range). KeyError for
    an unknown measure."""
    from search.serve.naming import check
    strategy, scorer = ESTIMATOR_STRATEGY[estimator]
    return check(strategy, str(int(budget)), scorer)


def serve_argv(spec, task: str, temperature: float, top_p: float, seed: int,
               port: int = DEFAULT_PORT, prompt_style: Optional[str] = None,
               template: Optional[str] = None, chain_tokens: Optional[int] = None) -> list[str]:
    """The flags after ``python -m search serve`` that serve ``spec`` (a
    ``search.models.backends.ModelSpec``) on ``task`` with these sampling defaults on
    ``port``; for a free-form task also the page's prompt style (None: the model's validated
    one, no flag), its template (style "custom") and the token cap of one chain. Numbers are
    written with ``repr`` precision (``0.6`` stays ``0.6``)."""
    argv = ["--port", str(int(port)), "--task", task, "--temperature", f"{float(temperature):g}",
            "--top-p", f"{float(top_p):g}", "--seed", str(int(seed))]
    if prompt_style is not None:
        argv += ["--prompt-style", prompt_style]
        if prompt_style == "custom" and template is not None:
            argv += ["--prompt-template", template]
    if chain_tokens is not None:
        argv += ["--chain-tokens", str(int(chain_tokens))]
    if spec.backend == "hf":
        argv += ["--backend", "hf", "--model", spec.model]
    elif spec.backend == "openai":
        argv += ["--backend", "openai", "--base-url", spec.base_url, "--model", spec.model]
        if spec.api_key_env:
            argv += ["--api-key-env", spec.api_key_env]
    return argv


def command_line(argv: list[str]) -> str:
    """``python -m search serve`` and ``argv``, quoted for a POSIX shell (``shlex.join``)."""
    return PROG + " " + shlex.join(argv)


def client_snippet(model: str, problem: str, port: int = DEFAULT_PORT,
                   key_env: Optional[str] = None) -> str:
    """Python that calls the gateway on ``port`` with the ``openai`` client, asking ``model``
    (a served model name) to solve ``problem``, and prints the answer, the tokens the search
    spent and the run id (open it on the Traffic page). The problem is written with ``repr``
    (a string literal, never code). ``key_env``: the environment variable holding a gateway
    key (None: a gateway started without keys, which takes any)."""
    key = f'os.environ["{key_env}"]' if key_env else '"local"'
    return "\n".join([
        "import os" if key_env else "",
        "from openai import OpenAI",
        "",
        f'client = OpenAI(base_url="http://127.0.0.1:{int(port)}/v1", api_key={key})',
        "reply = client.chat.completions.create(",
        f"    model={model!r},",
        f"    messages=[{{'role': 'user', 'content': {problem!r}}}])",
        "print(reply.choices[0].message.content)",
        "print(reply.usage.total_tokens, 'tokens; run', reply.thoughtscope_run_id)",
    ]).lstrip("\n")
