"""The sidebar's model picker: which model every page's runs use.

Three choices (``CHOICES``): the task's bundled model (the default), a local Hugging Face
causal LM folder, or an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp,
transformers serve). The typed settings are session settings drawn with ``ui.settings.bind``
(so switching the choice or the page loses nothing typed); **Load** / **Connect** turns them into
a ``search.models.backends.ModelSpec`` and loads it (``ui.model_loading.load_spec``: cached per
spec and task with ``st.cache_resource``). Only a spec that loaded becomes the one the pages use
(``ui.model_loading.model_spec``, session key ``ui.model_loading.MODEL_SPEC``); a spec that
cannot work
(``BackendSettingsError``: a folder without a model, an unreachable URL, a model name the
server does not serve) leaves the model in use as it was and says why in one line
(``PICK_ERROR``), never with a traceback. Picking "Bundled" applies at once.

Keys: a server's API key is never typed here, stored, or put in the URL: the picker offers the
*names* of the environment variables the operator allows (``search.models.trust``:
``THOUGHTSCOPE_KEY_VARS``, default ``OPENAI_API_KEY`` only), and the key goes only to servers on
the host:port pairs the operator lists (``THOUGHTSCOPE_KEY_HOSTS``, default none); under
Connect a line says, before anything is sent, which URL will be contacted and whether the key
goes with it. The URL carries ``backend``, ``base_url`` and ``model`` (a folder or a served
model's name) of the spec in use when it is not the bundled one; an installed real model goes
by its catalogue key (``backend=real&model=smollm2-135m-instruct``; a link's key must be one
installed here, never a path). A link with them only fills
the fields: nothing is loaded or contacted until the user presses Load / Connect / Use (and
until then the URL keeps the link's model, ``link_pending``). A parameter
of a link that cannot be used (an unknown backend, a value too long, a URL with user-info) is
said in one line and dropped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import streamlit as st

from i18n import N_, _
from ui import model_loading, settings, wording
from ui.model_loading import MODEL_SPEC
from ui.settings import bind, one_of, set_url, text
from ui.wording import error_line

CHOICE, FOLDER, BASE_URL, SERVED, KEY_ENV = ("model_choice", "model_folder", "model_base_url",
                                             "model_served", "model_key_env")
REAL = "model_real"  # the key of the real model picked (search.models.catalog)
PICK_ERROR = "model_pick_error"  # session state: the last Load/Connect's one-line error
FROM_LINK = "model_from_link"  # session state: the fields were filled by a link, not yet used
URL_DONE = "_url_loaded_model"
CHOICES = {"bundled": N_("Bundled (task's model)"), "real": N_("Real model (installed)"),
           "hf": N_("Local folder"), "openai": N_("Server (OpenAI-compatible)")}
KIND_LABELS = {"instruct": N_("instruct"), "base": N_("base")}
URL_KEYS = ("backend", "base_url", "model")  # query parameters (never a key)
MAX_FIELD = 500


def _defaults() -> dict:
    from search.models.trust import default_key_var
    return {CHOICE: "bundled", FOLDER: "", BASE_URL: "", SERVED: "", KEY_ENV: default_key_var(),
            REAL: ""}


def _real_spec(key: str):
    """The hf ModelSpec of the installed real model ``key`` (its GGUF file), or an unchecked
    blank hf spec when it is unknown or not installed."""
    from search.models.backends import ModelSpec
    from search.models.catalog import installed_models
    for m in installed_models():
        if m.key == key:
            try:
                return ModelSpec("hf", model=str(m.path()))
            except OSError:
                break
    return ModelSpec("hf", model="")


def _installed_key(model: str) -> Optional[str]:
    """The key of the installed real model whose GGUF file is ``model`` (a path), or None."""
    from search.models.catalog import installed_models
    for m in installed_models():
        try:
            if model and Path(model).resolve() == Path(m.path()).resolve():
                return m.key
        except OSError:
            continue
    return None


def typed_spec():
    """The ModelSpec the picker's fields describe now (not checked, not loaded)."""
    from search.models.backends import ModelSpec
    ss = st.session_state
    choice = ss.get(CHOICE, "bundled")
    if choice == "hf":
        return ModelSpec("hf", model=ss.get(FOLDER, ""))
    if choice == "real":
        return _real_spec(ss.get(REAL, ""))
    if choice == "openai":
        return ModelSpec("openai", model=ss.get(SERVED, ""), base_url=ss.get(BASE_URL, ""),
                         api_key_env=ss.get(KEY_ENV, "") or _defaults()[KEY_ENV])
    return ModelSpec()


def apply(spec) -> Optional[str]:
    """Load ``spec`` for the current task and, when it loads, make it the spec the pages use.
    Returns None, or the one-line reason it cannot be used (the spec in use is then kept)."""
    from search.models.base import BackendSettingsError
    try:
        spec = spec.check()
        if spec.backend != "bundled":  # the bundled model loads when a page needs it
            model_loading.load_spec(spec, settings.current_task().name)
    except BackendSettingsError as e:
        return error_line(e)
    except Exception as e:  # noqa: BLE001 - any failure to load is a message, not a traceback
        return f"{type(e).__name__}: {error_line(e)}"
    st.session_state[MODEL_SPEC] = spec
    return None


def _in_use(spec) -> bool:
    """Whether ``spec`` is the spec the pages use now."""
    try:
        return spec.check() == model_loading.model_spec()
    except ValueError:  # BackendSettingsError: blanks still to fill in
        return False


def _connect() -> None:
    st.session_state[FROM_LINK] = False
    st.session_state[PICK_ERROR] = apply(typed_spec())


def _choice_changed(key: str) -> None:
    settings._commit(key)
    if st.session_state[key] == "bundled":  # nothing to type: in use at once
        _connect()
    else:
        st.session_state[PICK_ERROR] = None


def _from_url() -> None:
    """On the session's first run: the model a link names (``backend``, ``base_url``,
    ``model``) fills the picker's fields, and nothing more: loading a folder or contacting a
    server takes the user's own Load / Connect (a link must never make this server send its
    API key anywhere). A value that cannot be used is said (``settings.say_ignored``) and
    dropped from the URL."""
    from search.models.trust import has_userinfo
    ss = st.session_state
    if URL_DONE in ss:
        return
    ss[URL_DONE] = True
    qp = st.query_params
    if not any(k in qp for k in URL_KEYS):
        return
    values = {}
    real = qp.get("backend") == "real"  # an installed real model, named by its key only
    for key, parse in (("backend", one_of(["hf", "openai", "real"])),
                       ("model", one_of(_installed_keys()) if real else text(MAX_FIELD)),
                       ("base_url", text(MAX_FIELD))):
        if key not in qp:
            continue
        raw = qp.get(key, "")
        try:
            values[key] = parse(raw)
        except ValueError as e:
            settings.say_ignored(key, raw, e)
            set_url(key, None)
    if values.get("base_url") and has_userinfo(values["base_url"]):
        settings.say_ignored("base_url", values.pop("base_url"),
                             settings.BadValue(_("a user name or password in a URL is never kept")))
        set_url("base_url", None)
    backend = values.get("backend")
    if backend is None:
        for key in ("model", "base_url"):
            if key in values:
                settings.say_ignored(key, values[key],
                                     settings.BadValue(_("the link names no backend")))
        return
    if backend == "real":  # a key of an installed model (checked above), never a path
        if "base_url" in values:
            settings.say_ignored("base_url", values["base_url"],
                                 settings.BadValue(_("a real model has no server URL")))
            set_url("base_url", None)
        if not values.get("model"):
            return
        ss[CHOICE], ss[REAL], ss[FROM_LINK] = "real", values["model"], True
        return
    ss[CHOICE] = backend
    real = _installed_key(values.get("model", "")) if backend == "hf" else None
    if real is not None:  # the link names an installed real model: its one-click choice
        ss[CHOICE], ss[REAL] = "real", real
    if backend == "hf":
        ss[FOLDER] = values.get("model", "")
        if "base_url" in values:
            settings.say_ignored("base_url", values["base_url"],
                                 settings.BadValue(_("a local folder has no server URL")))
    else:
        ss[SERVED], ss[BASE_URL] = values.get("model", ""), values.get("base_url", "")
    ss[FROM_LINK] = True


def _installed_keys() -> list[str]:
    from search.models.catalog import installed_models
    return [m.key for m in installed_models()]


def link_pending() -> bool:
    """Whether a link filled the picker with a model that is not in use yet (the user has not
    pressed Use / Load / Connect): the link's model, and what it reopens, wait for that."""
    ss = st.session_state
    return (bool(ss.get(FROM_LINK)) and ss.get(CHOICE, "bundled") != "bundled"
            and not _in_use(typed_spec()))


def write_model_url() -> None:
    """The spec in use in the URL (nothing for the bundled model; never a key). An installed
    real model is written by its key (``backend=real&model=smollm2-135m-instruct``: a link
    names no path of this machine). While a link's model waits for its Use / Load /
    Connect (``link_pending``), the link's own values stay, so a copied URL still names it."""
    if link_pending():
        return
    spec = model_loading.model_spec()
    values = dict.fromkeys(URL_KEYS)
    if spec.backend != "bundled":
        values = {"backend": spec.backend, "model": spec.model,
                  "base_url": spec.base_url if spec.backend == "openai" else None}
        real = _installed_key(spec.model) if spec.backend == "hf" else None
        if real is not None:
            values["backend"], values["model"] = "real", real
    for k, v in values.items():
        set_url(k, v or None)


def model_picker() -> None:
    """Draw the picker (inside the sidebar): the choice, its fields, Load/Connect, and the
    last error in one line. Call before the model card (``ui.page_frame.model_card``)."""
    ss = st.session_state
    for k, v in _defaults().items():
        ss.setdefault(k, v)
    _from_url()
    kw = bind(CHOICE)
    kw["on_change"] = _choice_changed
    choice = st.radio(_("Model"), list(CHOICES), format_func=lambda c: _(CHOICES[c]), **kw,
                      label_visibility="collapsed",
                      help=_("Bundled: the small model trained for the task (the free-form "
                             "task has none). Real model: a pretrained model an installed "
                             "package ships (SmolLM2, Gemma 3), one click. Local folder: any "
                             "Hugging Face causal LM folder or .gguf file on this machine. "
                             "Server: an OpenAI-compatible completions endpoint "
                             "(vLLM, SGLang, llama.cpp, transformers serve)."))
    if choice == "hf":
        st.text_input(_("Model folder"), **bind(FOLDER), placeholder="/path/to/model",
                      help=_("A folder with config.json, the weights and the tokenizer, or a "
                             ".gguf file (or a folder holding one)."))
        st.button(_("Load"), on_click=_connect, key="model_load", icon=":material/upload:")
    elif choice == "real":
        real_models()
    elif choice == "openai":
        st.text_input(_("Server URL"), **bind(BASE_URL), placeholder="http://127.0.0.1:8000/v1",
                      help=_("The server's OpenAI API root, ending in /v1."))
        st.text_input(_("Model name"), **bind(SERVED),
                      placeholder=_("the name the server serves"),
                      help=_("The model name the server lists at /v1/models."))
        _key_field()
        st.button(_("Connect"), on_click=_connect, key="model_connect", icon=":material/link:")
        where = connect_line(typed_spec())
        if where:
            st.caption(wording.md(where))
    if ss.get(FROM_LINK) and choice != "bundled" and not _in_use(typed_spec()):
        st.info(_("A link filled these fields. Nothing is loaded or contacted until you press "
                  "{button}.").format(button=_("Load") if choice == "hf" else
                                      _("Use") if choice == "real" else _("Connect")),
                icon=":material/link:")
    if ss.get(PICK_ERROR):  # typed text inside: shown as text (md), never as markup or links
        st.error(wording.md(ss[PICK_ERROR]))
    elif choice not in ("bundled", "real") and not _in_use(typed_spec()):
        st.caption(_("Not in use yet: press Load.") if choice == "hf" else
                   _("Not in use yet: press Connect."))


def _key_field() -> None:
    """The API key variable: a choice among the variables the operator allows (never a free
    name: a student must not pick which secret is sent), or a line saying none is."""
    from search.models.trust import KEY_VARS_ENV, allowed_key_vars, default_key_var
    ss = st.session_state
    allowed = list(allowed_key_vars())
    if not allowed:
        ss[KEY_ENV] = ""
        st.caption(_("No API key is sent to any server (the operator allows no key variable: "
                     "{setting}).").format(setting=KEY_VARS_ENV))
        return
    if ss.get(KEY_ENV) not in allowed:
        ss[KEY_ENV] = default_key_var()
    st.selectbox(_("API key variable"), allowed, **bind(KEY_ENV), disabled=len(allowed) == 1,
                 help=_("The environment variable (on the machine running this app) whose "
                        "value is sent as the server's API key; the operator chooses which "
                        "ones may be used ({setting}). The key itself is never typed here, "
                        "stored, or put in links or exports.").format(setting=KEY_VARS_ENV))


def connect_line(spec) -> Optional[str]:
    """What pressing Connect will do, said before it is pressed: the URL that will be
    contacted and whether the API key goes with it (``search.models.trust.key_for``); None
    when the fields do not name a server yet (the error comes on Connect)."""
    from search.models.base import BackendSettingsError
    from search.models.trust import KEY_HOSTS_ENV, key_for, key_host_allowed
    try:
        spec = spec.check()
    except BackendSettingsError:
        return None
    if spec.backend != "openai":
        return None
    key, why = key_for(spec.base_url, spec.api_key_env)
    if key is not None:
        how = _("with the API key in ${var}").format(var=spec.api_key_env)
    elif not spec.api_key_env:
        how = _("without an API key")
    elif not key_host_allowed(spec.base_url):
        how = _("without an API key: this host is not one the operator allows keys to go to "
                "({setting})").format(setting=KEY_HOSTS_ENV)
    else:
        how = _("without an API key: ${var} is not set").format(var=spec.api_key_env)
    del key, why
    return _("Connect will contact {url} for the model {model}, {how}.").format(
        url=spec.base_url, model=spec.model, how=how)


REAL_TASK = "freeform"  # the task the real models are for: word problems answered in prose


def _use_real(key: str) -> None:
    """The Use button of the installed real model ``key``: the task becomes the free-form one
    (a real model answers word problems in prose; the other tasks' step formats are those their
    bundled models were trained on), said once under the button, then the model loads."""
    from search.tasks import TASKS
    ss = st.session_state
    ss[REAL] = key
    task = ss.get(settings.TASK, settings.TASK_DEFAULT)
    if task != REAL_TASK and REAL_TASK in TASKS:
        ss[settings.TASK] = REAL_TASK
        ss["_real_task_from"] = task
    _connect()


def use_real_button(key: str) -> bool:
    """On a page whose task has no bundled model: a one-click Use button for the first
    installed real model (as under "Real model (installed)" in the sidebar: the choice becomes
    it and it loads). False (nothing drawn) when no real model is installed."""
    from search.models.catalog import installed_models
    models = installed_models()
    if not models:
        return False
    m = models[0]
    st.button(_("Use {model}").format(model=m.label), key=key, on_click=_use_real_now,
              args=(m.key,), icon=":material/download_done:",
              help=f"{real_model_line(m)}. {_(m.about)}")
    return True


def _use_real_now(key: str) -> None:
    st.session_state[CHOICE] = "real"
    _use_real(key)


def real_model_line(m) -> str:
    """What a real model is, in one line: kind, parameters, licence."""
    return _("{kind} · {params} M parameters · {licence}").format(
        kind=_(KIND_LABELS.get(m.kind, m.kind)), params=round(m.parameters / 1e6),
        licence=m.licence)


def real_models() -> None:
    """The real models installed packages provide, each a one-click Use button with what it
    is (instruct or base, parameters, licence, what it can do); a line saying how to install
    them when there is none."""
    from search.models.catalog import installed_models
    models = installed_models()
    if not models:
        st.caption(_("No real model is installed. Install SmolLM2-135M-Instruct with: "
                     "pip install -r requirements-real.txt"))
        return
    for m in models:
        in_use = _in_use(_real_spec(m.key)) if st.session_state.get(REAL) == m.key else False
        st.button(_("Use {model}").format(model=m.label), key=f"real_{m.key}",
                  on_click=_use_real, args=(m.key,), disabled=in_use,
                  icon=":material/check:" if in_use else ":material/download_done:",
                  width="stretch")
        st.caption(f"{real_model_line(m)}. {_(m.about)}")
    was = st.session_state.pop("_real_task_from", None)
    settings.one_time_note(
        "real_task", None if was is None else _(
            "Task set to {task}: a real model answers word problems in prose (the task "
            "{was} is written in the step format its bundled model was trained on).").format(
            task=_(settings.task_label(REAL_TASK)), was=_(settings.task_label(was))))


def pending_note() -> Optional[str]:
    """One line for the page when the sidebar shows a local folder or a server that is not in
    use (Load/Connect not pressed, or it failed): runs would use another model than the one
    on screen. None when the picked choice is the one in use."""
    ss = st.session_state
    choice = ss.get(CHOICE, "bundled")
    if choice in ("bundled", "real") or _in_use(typed_spec()):
        return None
    spec = model_loading.model_spec()
    using = _("the bundled model") if spec.backend == "bundled" else spec.label()
    return (_("The local folder in the sidebar is not in use yet (press Load there); runs use "
              "{using}.") if choice == "hf" else
            _("The server in the sidebar is not in use yet (press Connect there); runs use "
              "{using}.")).format(using=using)


def capability_lines(caps) -> tuple[str, list[str]]:
    """What a backend supports (``search.models.base.Capabilities``) as one summary line and
    its ``notes`` (one line each: what is degraded and why)."""
    yes = {True: _("yes"), False: _("no")}
    ctx = (_("{n} tokens").format(n=f"{caps.context_length:,}") if caps.context_length
           else _("unknown"))
    line = _("log-probabilities **{logprobs}** · reproducible seeds **{seeds}** · batched "
             "**{batched}** · chat template **{chat}** · context **{context}**").format(
        logprobs=yes[caps.logprobs], seeds=yes[caps.reproducible], batched=yes[caps.batched],
        chat=yes[caps.chat_template], context=ctx)
    return line, list(caps.notes)
