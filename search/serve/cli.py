"""``python -m search serve`` (also ``python -m search.serve``, the same flags): start the
OpenAI-compatible gateway (FastAPI on uvicorn).

    python -m search serve --port 8321                       # the bundled model, local only
    python -m search serve --host 0.0.0.0 --keys-file keys.txt --port 8321
    python -m search serve --backend openai --base-url http://127.0.0.1:8000/v1 \\
        --model Qwen/Qwen2.5-0.5B-Instruct --task freeform --keys-env THOUGHTSCOPE_GATEWAY_KEYS

Without ``--keys-file``/``--keys-env`` it binds to 127.0.0.1 only (and says so); asking for another
host without keys is refused. Bad settings exit with status 2 and one line, never a traceback.
"""
from __future__ import annotations

import argparse
import ipaddress
import sys

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8321
PROG = "python -m search serve"  # the command as the README and the Temperature page write it


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


KEEP_ALIVE_S = 65  # seconds an idle HTTP keep-alive connection is held (server_config)


def server_config(app, log_level: str = "info", access_log: bool = True):
    """The ``uvicorn.Config`` the gateway runs ``app`` with (``main`` and the tests' servers).

    An idle keep-alive connection is held ``KEEP_ALIVE_S`` (65 s), longer than the clients' own
    expiry (httpx, under the ``openai`` client: 5 s): with uvicorn's default 5 s both ends timed
    out together, and about 1 request in 500 of benchmarks/gateway_vllm_overhead.py went out on
    a connection the server was closing (``APIConnectionError`` with retries off); now the
    client always closes first. Shutdown waits at most 5 s for requests in flight."""
    import uvicorn
    return uvicorn.Config(app, log_level=log_level, access_log=access_log,
                          timeout_graceful_shutdown=5, timeout_keep_alive=KEEP_ALIVE_S)


def _positive(kind):
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        if not v > 0 or v != v or v == float("inf"):
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return v
    return parse


def _non_negative_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return v


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The gateway's flags (``prog``: the command shown in ``--help`` and errors: ``python -m
    search serve`` or ``python -m search.serve``, which take the same flags)."""
    from search.serve.runs import DEFAULT_TIMEOUT_S
    from search.serve.security import Limits
    from search.tasks import DEFAULT_TASK, TASKS
    p = _Parser(prog=prog,
                description="An OpenAI-compatible gateway: model='thoughtscope:<strategy>@"
                            "<budget>[:<scorer>]' runs that search; every request is a run in "
                            "History.")
    p.add_argument("--host", default=None,
                   help=f"address to bind (default {LOOPBACK}; another needs keys)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0: any free port, printed)")
    p.add_argument("--keys-file", default=None,
                   help="file of bearer keys: one KEY or NAME KEY per line")
    p.add_argument("--keys-env", default=None,
                   help="environment variable holding the keys (KEY or NAME KEY, separated by "
                        "commas or newlines)")
    p.add_argument("--max-in-flight", type=_positive(int), default=Limits.max_in_flight,
                   help=f"requests in flight per key (default {Limits.max_in_flight})")
    p.add_argument("--tokens-per-minute", type=_non_negative_int,
                   default=Limits.tokens_per_minute,
                   help="tokens (usage.total_tokens) per key per minute; 0: no limit "
                        f"(default {Limits.tokens_per_minute:,})")
    p.add_argument("--timeout", type=_positive(float), default=DEFAULT_TIMEOUT_S,
                   help=f"seconds one request's search may run (default {DEFAULT_TIMEOUT_S:g})")
    from search.serve.runs import SAMPLING_DEFAULTS as D
    from search.strategies import ranges
    p.add_argument("--temperature", type=ranges.TEMPERATURE.cli, default=D["temperature"],
                   help=f"sampling temperature of requests that send none, in "
                        f"{ranges.TEMPERATURE.shown()} (default {D['temperature']:g}; the "
                        "Temperature page's 'Serve this' sets the one tuned there)")
    p.add_argument("--top-p", type=ranges.TOP_P.cli, default=D["top_p"],
                   help=f"top-p of requests that send none, in {ranges.TOP_P.shown()} "
                        f"(default {D['top_p']:g})")
    p.add_argument("--seed", type=ranges.SEED.cli, default=D["seed"],
                   help=f"seed of requests that send none, in {ranges.SEED.shown()} "
                        f"(default {D['seed']})")
    from search.tasks import get_task
    p.add_argument("--prompt-style", choices=get_task("freeform").prompt_styles, default=None,
                   help="free-form task: the prompt style of requests that send none (default: "
                        "the model's, chosen on validation; 'custom' needs --prompt-template)")
    p.add_argument("--prompt-template", default=None,
                   help="with --prompt-style custom: the prompt, {question} where the question "
                        "goes")
    p.add_argument("--chain-tokens", type=ranges.CHAIN_TOKENS.cli, default=None,
                   help=f"token cap of one chain for requests that send none, in "
                        f"{ranges.CHAIN_TOKENS.shown()} (default: the task's)")
    p.add_argument("--task", default=DEFAULT_TASK, choices=TASKS,
                   help=f"the task of requests that name none (default {DEFAULT_TASK})")
    p.add_argument("--backend", choices=["bundled", "hf", "openai"], default="bundled",
                   help="the model: bundled (default), hf (--model FOLDER or .gguf), openai "
                        "(--base-url URL --model NAME: a vLLM/SGLang server)")
    p.add_argument("--model", default=None, help="hf: the folder; openai: the served name")
    p.add_argument("--base-url", default=None, help="openai: e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--api-key-env", default="",
                   help="openai: the environment variable with the upstream server's key (the "
                        "key is never printed, logged or saved)")
    p.add_argument("--log-level", default="info",
                   choices=["critical", "error", "warning", "info", "debug"])
    return p


def _is_loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def config_from_args(a):
    """(ServeConfig, host, startup lines) from parsed flags; ValueError (one line)."""
    from search.models.backends import ModelSpec
    from search.runtime import history
    from search.serve.http import ServeConfig
    from search.serve.runs import Backend
    from search.serve.security import Limits, load_keys
    keys = load_keys(a.keys_file, a.keys_env)
    lines = []
    if keys:
        host = a.host or LOOPBACK
        lines.append(f"{len(keys.named)} bearer key(s) loaded ({', '.join(n for n, _ in keys.named[:5])}"
                     f"{', ...' if len(keys.named) > 5 else ''}); requests without one get 401")
    else:
        if a.host and not _is_loopback(a.host):
            raise ValueError(f"refusing to bind {a.host} without keys: give --keys-file or "
                             "--keys-env (anyone who can reach the port could use the model)")
        host = LOOPBACK
        lines.append(f"no keys: binding to {LOOPBACK} only (local use; start with --keys-file "
                     "or --keys-env to serve other machines)")
    if a.backend == "bundled" and a.model:
        raise ValueError("--model needs --backend hf or --backend openai")
    if a.backend != "openai" and a.base_url:
        raise ValueError("--base-url needs --backend openai")
    spec = ModelSpec(backend=a.backend, model=a.model or "", base_url=a.base_url or "",
                     api_key_env=a.api_key_env)
    if a.backend == "openai" and a.base_url:  # the operator's configured server gets the key
        from search.models.trust import configure_server
        configure_server(a.base_url)
    backend = Backend(spec)
    from search.serve.runs import SAMPLING_DEFAULTS
    sampling = {k: getattr(a, k, v) for k, v in SAMPLING_DEFAULTS.items()}
    style, template = getattr(a, "prompt_style", None), getattr(a, "prompt_template", None)
    if template is not None and style != "custom":
        raise ValueError("--prompt-template needs --prompt-style custom")
    if style is not None:
        from search.tasks import get_task
        task = get_task(a.task)
        if not getattr(task, "prompt_styles", ()):
            raise ValueError(f"--prompt-style is for a free-form task; task {a.task} has none")
        task.with_prompt(style, template)  # ValueError: the template cannot be used
        sampling.update(prompt_style=style, prompt_template=template)
    if getattr(a, "chain_tokens", None) is not None:
        sampling["chain_tokens"] = a.chain_tokens
    cfg = ServeConfig(backend=backend, task=a.task, keys=keys,
                      limits=Limits(max_in_flight=a.max_in_flight,
                                    tokens_per_minute=a.tokens_per_minute),
                      timeout_s=a.timeout, history=history.enabled(), sampling=sampling)
    lines.append(f"model {backend.label}, default task {a.task}; per key: "
                 f"{a.max_in_flight} in flight, "
                 f"{a.tokens_per_minute:,} tokens/min" if a.tokens_per_minute else
                 f"model {backend.label}, default task {a.task}; per key: "
                 f"{a.max_in_flight} in flight, no token limit")
    lines.append(f"requests that send none: temperature {sampling['temperature']:g}, top_p "
                 f"{sampling['top_p']:g}, seed {sampling['seed']}"
                 + (f", prompt style {style}" if style else "")
                 + (f", {sampling['chain_tokens']} tokens a chain" if "chain_tokens" in sampling
                    else ""))
    lines.append(f"every request is saved to History ({history.db_path()})" if cfg.history
                 else "THOUGHTSCOPE_HISTORY=0: requests are not saved to History")
    return cfg, host, lines


def main(argv=None, prog: str = PROG) -> int:
    """Run the gateway until interrupted (``argv``: the flags after the command; ``prog``: how
    the command was typed). Returns the exit status: 0 after a clean stop, 2 for bad settings
    (one line on stderr), 1 when the port cannot be bound or a file cannot be read."""
    a = build_parser(prog).parse_args(argv)
    from search.models.base import BackendError
    try:
        cfg, host, lines = config_from_args(a)
        from search.models.worker import worker_threads
        import torch
        torch.set_num_threads(worker_threads())  # the requests' threads (verifiers) too
        cfg.backend.policy(cfg.task)  # load (or probe the server) now: errors before serving
    except (ValueError, BackendError) as e:
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.strerror or e}", file=sys.stderr)
        return 1
    import socket
    import uvicorn
    from search.serve.http import create_app
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, a.port))
    except OSError as e:
        print(f"error: cannot bind {host}:{a.port}: {e.strerror or e}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    for line in lines:
        print(line, flush=True)
    base = f"http://{host if ':' not in host else '[' + host + ']'}:{port}/v1"
    print(f"serving on {base}  (example: OpenAI(base_url={base!r}, api_key=...)"
          ".chat.completions.create(model='thoughtscope:majority@16', messages=[{'role': "
          "'user', 'content': '8*7+6'}]))", flush=True)
    config = server_config(create_app(cfg), a.log_level)
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
