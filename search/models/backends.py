"""Which model a run uses: the task's bundled model, any local Hugging Face causal LM folder, or
an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp, transformers serve).

A :class:`ModelSpec` names the model without holding it (it is what the CLI flags, the page's
model picker and a run's JSON record); :func:`load_policy` turns it into a Policy
(``search.models.base.Policy``), cached per process. The API key of a server is never part of a
spec: the spec names the *environment variable* that holds it (``api_key_env``), so exports,
URLs and saved runs never contain a key.
"""
from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from search.models.base import BackendSettingsError

BACKENDS = ("bundled", "hf", "openai")
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


@dataclass(frozen=True)
class ModelSpec:
    """The model of a run, by name.

    backend: ``"bundled"`` (the task's bundled model, or the folder ``THOUGHTSCOPE_MODEL_<TASK>``
        names), ``"hf"`` (a local Hugging Face causal LM folder, a ``.gguf`` file or a folder
        holding one, or a hub id already in the local cache: ``model``), ``"openai"`` (a
        server at ``base_url`` serving ``model``).
    model: the folder (hf) or the served model name (openai); ignored for bundled.
    base_url: the server's OpenAI API root, e.g. ``http://127.0.0.1:8000/v1`` (openai only).
    api_key_env: name of the environment variable holding the server's API key (openai only;
        the key itself is read when the policy is made and is never stored in the spec); it
        must be one the operator allows (``search.models.trust.allowed_key_vars``; "" means
        the first allowed one).
    device: ``"cuda"``, ``"cpu"`` or None (CUDA when available); hf/bundled only.
    """
    backend: str = "bundled"
    model: str = ""
    base_url: str = ""
    api_key_env: str = DEFAULT_API_KEY_ENV
    device: Optional[str] = None

    def check(self) -> "ModelSpec":
        """The spec with blanks stripped; BackendSettingsError (one line) when it cannot name a
        model: an unknown backend, hf without a folder, openai without a URL or model name, a
        URL that is not http(s) or carries user-info (``user:password@``), an API key variable
        the operator does not allow (``search.models.trust``)."""
        b = (self.backend or "bundled").strip().lower()
        if b not in BACKENDS:
            raise BackendSettingsError(f"unknown backend {self.backend!r}; choose one of "
                                       f"{', '.join(BACKENDS)}")
        model, url = (self.model or "").strip(), (self.base_url or "").strip().rstrip("/")
        if b == "hf" and not model:
            raise BackendSettingsError("the hf backend needs a model folder (--model PATH)")
        env = (self.api_key_env or "").strip()
        if b == "openai":
            from search.models import trust
            if not url:
                raise BackendSettingsError("the openai backend needs a server URL "
                                           "(--base-url http://HOST:PORT/v1)")
            try:
                url = trust.check_url(url)
                env = trust.check_key_var(env or trust.default_key_var())
            except trust.TrustError as e:
                raise BackendSettingsError(str(e)) from None
            if not model:
                raise BackendSettingsError("the openai backend needs the served model's name "
                                           "(--model NAME)")
        else:
            env = env or DEFAULT_API_KEY_ENV
        return ModelSpec(b, model, url, env, self.device)

    def label(self) -> str:
        """A short human name: ``bundled``, ``hf: /path/folder``, ``openai: NAME @ URL``."""
        if self.backend == "hf":
            return f"hf: {self.model}"
        if self.backend == "openai":
            from search.models.trust import strip_userinfo
            return f"openai: {self.model} @ {strip_userinfo(self.base_url)}"
        return "bundled"

    def to_dict(self) -> dict:
        """JSON-ready fields (no API key: only the variable's name; a URL's user-info, which
        ``check`` refuses, is stripped should an unchecked spec carry one)."""
        from search.models.trust import strip_userinfo
        d = asdict(self)
        d["base_url"] = strip_userinfo(d["base_url"] or "")
        return d


_CACHE: dict = {}
_LOCK = threading.Lock()


def load_policy(spec: ModelSpec = ModelSpec(), task=None):
    """The Policy that ``spec`` names for ``task`` (a Task or registry name; None: arithmetic),
    stopping steps at the task's ``step_delimiter``; cached per (spec, delimiter, task) for the
    process, so a page rerun or a second run costs no loading. A local model ends a whole
    chain at its first answer step for a task with ``chain_ends_at_answer`` (free-form:
    ``HFPolicy.chain_stop = task.is_terminal``: a base model
    that never stops costs what an instruct model does) and carries the validated prompt style
    of a known real model (``search.models.catalog``; ``HFPolicy.prompt_style``).

    Raises BackendSettingsError (one line) for settings that cannot work: an unknown backend,
    a folder without a model, an unreachable server, a model name the server does not serve;
    the bundled backend of a task without a bundled model (free-form) says to pick a model.
    """
    from search.tasks import get_task
    t = get_task(task)
    spec = spec.check()
    if spec.backend == "bundled":
        if t.model_dir is None:
            raise BackendSettingsError(f"the {t.label} task has no bundled model: choose a "
                                       "local model folder (--backend hf --model PATH) or a "
                                       "server (--backend openai --base-url URL --model NAME)")
        from search.models.hf import load_bundled
        try:
            return load_bundled(spec.device, task=t)
        except OSError as e:
            raise BackendSettingsError(str(e).splitlines()[0] if str(e) else repr(e)) from None
    key = (spec, t.step_delimiter, t.name)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    if spec.backend == "hf":
        policy = _load_hf(spec, t)
    else:
        from search.models.openai_compat import OpenAIPolicy
        policy = OpenAIPolicy(spec.base_url, spec.model, api_key_env=spec.api_key_env,
                              step_delimiter=t.step_delimiter)
    with _LOCK:
        return _CACHE.setdefault(key, policy)


def no_model_at(path: str) -> str:
    """The one message for a Local-folder path that holds no loadable model, whatever the
    reason (missing, a file that is not a .gguf, a folder without config.json, weights that
    do not load): issue 30 item 9, separate messages told a student which paths exist on the
    server. The reason is logged for the operator (``logging``), not shown."""
    return (f"no model could be loaded from {path} (give a local Hugging Face model folder "
            "with config.json and weights, or a .gguf file, that this app may read)")


def _load_hf(spec: ModelSpec, task):
    import logging
    from search.models.hf import HFPolicy, gguf_location
    log = logging.getLogger(__name__)
    path = Path(spec.model).expanduser()
    why = ("missing" if not path.exists() else
           "a file but not a .gguf model" if path.is_file() and gguf_location(path) is None else
           "no config.json and no .gguf file" if path.is_dir()
           and not (path / "config.json").is_file() and gguf_location(path) is None else None)
    if why is not None:
        log.info("Local folder %s: %s", spec.model, why)
        raise BackendSettingsError(no_model_at(spec.model))
    try:
        policy = HFPolicy(path, device=spec.device, step_delimiter=task.step_delimiter)
    except ImportError as e:  # a .gguf file without the gguf package: the install, not a path
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise BackendSettingsError(f"could not load {spec.model}: {first} (pip install -r "
                                   "requirements-real.txt)") from None
    except (OSError, ValueError, KeyError) as e:
        log.info("Local folder %s does not load: %s", spec.model, " ".join(str(e).split()))
        raise BackendSettingsError(no_model_at(spec.model)) from None
    return configure_local(policy, task, path)


def configure_local(policy, task, path) -> "object":
    """Give a local ``HFPolicy`` of ``task`` (loaded from ``path``) what the task and the
    catalogue say: ``chain_stop = task.is_terminal`` for a task whose chains end at their first
    answer step (``chain_ends_at_answer``), else None; and, for a known real model
    (``search.models.catalog.model_for_path``), its name and validated ``prompt_style``.
    Returns ``policy``. Used by ``load_policy`` and by the app's inference worker process."""
    from search.models.catalog import model_for_path
    policy.chain_stop = task.is_terminal if getattr(task, "chain_ends_at_answer", False) \
        else None
    known = model_for_path(path)
    if known is not None:
        policy.name, policy.prompt_style = known.label, known.prompt_style
    return policy


def drop(policy) -> int:
    """Forget the cached entries whose policy is ``policy`` (the object itself), so the model
    can be freed once no session holds it; returns how many were dropped."""
    with _LOCK:
        keys = [k for k, v in _CACHE.items() if v is policy]
        for k in keys:
            del _CACHE[k]
    return len(keys)


def forget(spec: Optional[ModelSpec] = None) -> None:
    """Drop cached policies (all, or those of ``spec``), e.g. after a server restarted."""
    with _LOCK:
        for k in list(_CACHE):
            if spec is None or k[0] == spec.check():
                del _CACHE[k]


def api_key(env_name: str = DEFAULT_API_KEY_ENV, url: str = "") -> Optional[str]:
    """The API key from the environment variable ``env_name`` for the server at ``url`` (None
    when unset or blank, or when the operator's rule, ``search.models.trust.key_for``, does
    not let that variable or that host have it)."""
    from search.models.trust import key_for
    return key_for(url, env_name)[0]
