"""Who may make this process send a secret, and where: the one rule for API keys and server URLs.

On a shared server (one Thoughtscope app, many students) every field a student types or a link
fills is untrusted. The operator, who starts the process, decides:

- **Which environment variables may be read as an API key** (``THOUGHTSCOPE_KEY_VARS``: names
  separated by commas; unset: ``OPENAI_API_KEY`` only; set to ``none`` or blank: no variable,
  no key is ever sent). A spec naming another variable is refused in one line
  (:func:`check_key_var`), so a student cannot make the app send ``$DECOY_SECRET``.
- **Which servers may receive the key**: host:port pairs only (issue 30 item 9: the old default,
  any port of the loopback addresses, gave the key to whichever local user bound a port before
  a student pressed Connect). ``THOUGHTSCOPE_KEY_HOSTS``: entries separated by commas, each
  ``host:port``, ``[v6-address]:port``, ``host`` (its scheme's standard port only: 80 for
  http, 443 for https), ``*.domain[:port]`` (any sub-domain, same port rule) or ``*`` (any
  host and port: the operator's explicit choice). Unset: no listed host. Besides the list, the
  server the operator configured on a command line (``python -m search --base-url``, the
  gateway's ``--base-url``: :func:`configure_server`) gets the key at its own host:port. A key
  sent to a host a student typed is a key the student can read. A server outside the list is
  still reachable, but gets no key (``"EMPTY"``, what local servers accept): see
  :func:`key_for`.

A URL with user-info (``http://user:password@host/v1``) is refused everywhere a URL becomes a
setting (:func:`check_url`): a password in it would be kept in the address bar, the History,
run files and exports. :func:`strip_userinfo` is the one helper that removes it from a URL
that is only shown (an old run file, an error message).

Used by ``search.models.backends.ModelSpec.check`` (the CLI and the sidebar both build a
spec) and by ``search.models.openai_compat.OpenAIPolicy`` (the only code that reads a key).
"""
from __future__ import annotations

import os
from typing import Optional
from urllib.parse import urlsplit, urlunsplit

KEY_VARS_ENV = "THOUGHTSCOPE_KEY_VARS"
KEY_HOSTS_ENV = "THOUGHTSCOPE_KEY_HOSTS"
# The operator's configured server(s), host:port, set by ``configure_server`` from a command
# line (kept in the environment so the processes it starts inherit it)
CONFIGURED_ENV = "THOUGHTSCOPE_KEY_SERVER"
DEFAULT_KEY_VARS = ("OPENAI_API_KEY",)
DEFAULT_KEY_HOSTS: tuple[str, ...] = ()  # none: only the configured server (CONFIGURED_ENV)
NO_KEY = "EMPTY"  # the bearer token sent when no key may be (local servers accept it)


class TrustError(ValueError):
    """A setting the operator's rule refuses (one line, naming the setting that decides)."""


def _names(raw: str) -> tuple[str, ...]:
    out = []
    for part in raw.split(","):
        p = part.strip()
        if p and p.lower() != "none" and p not in out:
            out.append(p)
    return tuple(out)


def allowed_key_vars() -> tuple[str, ...]:
    """The environment variables an API key may be read from, in the operator's order
    (``THOUGHTSCOPE_KEY_VARS``; unset: ``("OPENAI_API_KEY",)``; ``none`` or blank: ())."""
    raw = os.environ.get(KEY_VARS_ENV)
    return DEFAULT_KEY_VARS if raw is None else _names(raw)


def default_key_var() -> str:
    """The first allowed key variable ("" when none is allowed): the default of the CLI's
    ``--api-key-env`` and the sidebar's key field."""
    names = allowed_key_vars()
    return names[0] if names else ""


def allowed_key_hosts() -> tuple[str, ...]:
    """The host entries that may receive a key: ``THOUGHTSCOPE_KEY_HOSTS`` (unset, blank or
    ``none``: none) followed by the configured server's ``host:port`` (``configure_server``)."""
    raw = os.environ.get(KEY_HOSTS_ENV)
    listed = DEFAULT_KEY_HOSTS if raw is None else tuple(h.lower() for h in _names(raw))
    configured = tuple(h.lower() for h in _names(os.environ.get(CONFIGURED_ENV, "")))
    return listed + tuple(h for h in configured if h not in listed)


def configure_server(url: str) -> str:
    """Record ``url``'s host:port as the operator's configured server (a ``--base-url`` on the
    command line that started this process): it may receive the key (``key_host_allowed``).
    Kept in ``$THOUGHTSCOPE_KEY_SERVER`` so child processes inherit it. Returns the entry
    (``host:port``; ``[v6]:port`` for an IPv6 address); "" for a URL with user-info or no host
    (nothing recorded)."""
    if has_userinfo(url):
        return ""
    host, port = _host_port(str(url).strip())
    if not host or port is None:
        return ""
    entry = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    now = _names(os.environ.get(CONFIGURED_ENV, ""))
    if entry not in now:
        os.environ[CONFIGURED_ENV] = ",".join((*now, entry))
    return entry


def check_key_var(name: str) -> str:
    """``name`` stripped ("" is no key), or TrustError when the operator does not allow it."""
    name = (name or "").strip()
    if name and name not in allowed_key_vars():
        allowed = ", ".join(allowed_key_vars()) or "none"
        raise TrustError(f"${name} may not be used as an API key on this server; allowed: "
                         f"{allowed} (the operator sets {KEY_VARS_ENV})")
    return name


def has_userinfo(url: str) -> bool:
    """Whether ``url`` carries user-info (``user@`` or ``user:password@``) before its host."""
    try:
        p = urlsplit(str(url).strip())
    except ValueError:
        return "@" in str(url)
    return bool(p.username is not None or p.password is not None or "@" in p.netloc)


def strip_userinfo(url: str) -> str:
    """``url`` without its user-info (path, query and fragment kept); a text that is not a URL
    is returned with anything up to an ``@`` in its first ``//`` part removed. Used on every
    URL that is shown or kept but was not made a setting here (an old run file, a History row,
    an error message)."""
    s = str(url)
    try:
        p = urlsplit(s)
    except ValueError:
        head, sep, rest = s.partition("//")
        return head + sep + rest.split("@", 1)[-1] if sep and "@" in rest.split("/", 1)[0] else s
    if "@" not in p.netloc:
        return s
    return urlunsplit((p.scheme, p.netloc.rsplit("@", 1)[1], p.path, p.query, p.fragment))


def check_url(url: str) -> str:
    """``url`` stripped of blanks and a trailing ``/``; TrustError for user-info in it (a
    password would be stored wherever the URL is) or a URL that is not ``http(s)://HOST``."""
    u = (url or "").strip().rstrip("/")
    if has_userinfo(u):
        raise TrustError("a server URL with a user name or password (user:password@) is not "
                         f"accepted: {strip_userinfo(u)}; put the key in an environment "
                         "variable instead")
    try:
        p = urlsplit(u)
        port = p.port  # ValueError for a port out of range or not a number
    except ValueError as e:
        raise TrustError(f"the server URL {u!r} cannot be read ({e})") from None
    if p.scheme not in ("http", "https") or not p.hostname:
        raise TrustError(f"the server URL must start with http:// or https:// and name a host, "
                         f"got {u!r}")
    del port
    return u


def _host_port(url: str) -> tuple[str, Optional[int]]:
    p = urlsplit(url)
    try:
        port = p.port
    except ValueError:
        port = None
    default = {"http": 80, "https": 443}.get(p.scheme)
    return (p.hostname or "").lower().rstrip("."), port if port is not None else default


def key_host_allowed(url: str) -> bool:
    """Whether the operator lets the API key go to the server at ``url`` (see the module
    docstring for the entries of ``THOUGHTSCOPE_KEY_HOSTS``). A URL with user-info never
    qualifies."""
    if has_userinfo(url):
        return False
    host, port = _host_port(url)
    if not host:
        return False
    standard = {"http": 80, "https": 443}.get(urlsplit(url).scheme)
    for entry in allowed_key_hosts():
        if entry == "*":
            return True
        e_host, e_port = entry, None
        if entry.startswith("[") and "]" in entry:  # [::1]:8000
            e_host, _, rest = entry[1:].partition("]")
            e_port = rest[1:] if rest.startswith(":") else None
        elif entry.count(":") == 1:  # host:port (an IPv6 address has more colons)
            e_host, e_port = entry.split(":")
        if e_port is None:  # a bare host: its scheme's standard port only, never any port
            if standard is None or port != standard:
                continue
        elif not e_port.isdigit() or int(e_port) != port:
            continue
        if e_host.startswith("*."):
            if host.endswith(e_host[1:]) and host != e_host[2:]:
                return True
        elif host == e_host:
            return True
    return False


def key_for(url: str, env_name: str) -> tuple[Optional[str], Optional[str]]:
    """``(key, why_not)``: the API key to send to the server at ``url`` from the variable
    ``env_name``, or ``(None, one line)`` saying why none is sent (no variable named, the
    variable not allowed, the host not allowed) or ``(None, None)`` when the allowed variable
    is simply unset. The key is read here and nowhere else."""
    name = (env_name or "").strip()
    if not name:
        return None, None
    if name not in allowed_key_vars():
        return None, f"${name} is not an allowed API key variable ({KEY_VARS_ENV})"
    value = os.environ.get(name, "").strip()
    if not value:
        return None, None
    if not key_host_allowed(url):
        host, port = _host_port(url)
        return None, (f"no API key sent: {host}:{port} is not in {KEY_HOSTS_ENV} (now: "
                      f"{', '.join(allowed_key_hosts()) or 'none'})")
    return value, None
