"""Who may call the gateway, and how much: bearer keys and per-key limits.

Keys come from a file (``--keys-file``) or an environment variable (``--keys-env``) named when the
server starts, never from the command line (a key on a command line is in ``ps`` and the shell's
history). File: one key per line, or ``NAME KEY`` (the name is what logs, History and the Traffic
page show; without one a key is called ``key-1``, ``key-2``... in file order); blank lines and
``#`` comments are skipped. Variable: entries (``KEY`` or ``NAME KEY``) separated by commas or
newlines.
A key is compared in constant time (``hmac.compare_digest``) and never printed, logged or saved:
only its name is.

Without keys the gateway binds to 127.0.0.1 only (``search.serve.cli``) and every caller counts as
``local``; the limits still apply to it.

Limits per key (``Limits``), checked before a request reaches the model:
- requests in flight at once (``max_in_flight``): one more gets 429 ``too_many_requests``;
- tokens per minute (``tokens_per_minute``; 0: none): the usage of the key's requests that
  finished in the last 60 s (every token the searches spent, as the response's ``usage``);
  a request while that sum is at or over the limit gets 429 ``rate_limit_exceeded`` with a
  ``Retry-After`` of the seconds until enough of it is a minute old. A search's tokens are known
  only when it ends, so a key may pass its limit by the requests already in flight; the next
  request then waits.
"""
from __future__ import annotations

import hmac
import math
import os
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

LOCAL = "local"  # the caller's name when the gateway has no keys
MAX_KEYS = 10_000
MIN_KEY_CHARS = 8  # shorter keys are refused at start: guessable


class KeysError(ValueError):
    """The keys file or variable cannot be used (one line, never quoting a key)."""


@dataclass(frozen=True)
class Keys:
    """Named bearer keys; empty means no authentication (local use only)."""
    named: tuple[tuple[str, str], ...] = ()  # (name, key)

    def __bool__(self) -> bool:
        return bool(self.named)

    def __repr__(self) -> str:  # never the keys themselves
        return f"Keys({len(self.named)} keys: {', '.join(n for n, _ in self.named)})"

    def who(self, authorization: Optional[str]) -> Optional[str]:
        """The name of the key an ``Authorization: Bearer KEY`` header carries; None for a
        missing or wrong key. Without keys: ``LOCAL`` for any header."""
        if not self.named:
            return LOCAL
        if not authorization:
            return None
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        given = token.strip().encode()
        found = None
        for name, key in self.named:  # every key compared: the time says nothing of which
            if hmac.compare_digest(given, key.encode()):
                found = name
        return found


def parse_keys(text: str, where: str) -> Keys:
    """Keys from a file's or variable's text (module docstring); KeysError naming ``where``."""
    named, seen = [], set()
    lines = text.splitlines() if where.startswith("file") else re.split(r"[,\n]", text)
    for i, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip() if where.startswith("file") else line.strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) == 1:
            name, key = f"key-{len(named) + 1}", parts[0]
        elif len(parts) == 2:
            name, key = parts
        else:
            raise KeysError(f"{where}, line {i}: write KEY or NAME KEY (two fields at most)")
        if len(key) < MIN_KEY_CHARS:
            raise KeysError(f"{where}, line {i}: a key must have at least {MIN_KEY_CHARS} "
                            "characters")
        if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,40}", name):
            raise KeysError(f"{where}, line {i}: a key's name is 1-40 letters, digits, _ . -")
        if name in seen:
            raise KeysError(f"{where}, line {i}: the name {name!r} is used twice")
        seen.add(name)
        named.append((name, key))
        if len(named) > MAX_KEYS:
            raise KeysError(f"{where}: more than {MAX_KEYS} keys")
    if not named:
        raise KeysError(f"{where} holds no key")
    return Keys(tuple(named))


def load_keys(keys_file: Optional[str] = None, keys_env: Optional[str] = None) -> Keys:
    """The keys named at start (at most one source); ``Keys()`` when neither is given.
    KeysError (one line) for an unreadable file, an unset variable or a bad line."""
    if keys_file and keys_env:
        raise KeysError("give --keys-file or --keys-env, not both")
    if keys_file:
        try:
            text = Path(keys_file).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise KeysError(f"cannot read the keys file {keys_file}: "
                            f"{getattr(e, 'strerror', None) or type(e).__name__}") from None
        return parse_keys(text, f"file {keys_file}")
    if keys_env:
        text = os.environ.get(keys_env)
        if text is None or not text.strip():
            raise KeysError(f"the environment variable {keys_env} is unset or empty")
        return parse_keys(text, f"variable {keys_env}")
    return Keys()


@dataclass(frozen=True)
class Limits:
    """Per-key limits (module docstring). ``tokens_per_minute`` 0: no token limit."""
    max_in_flight: int = 64
    tokens_per_minute: int = 2_000_000


class LimitExceeded(Exception):
    """A request over its key's limit: ``code`` (``too_many_requests`` or
    ``rate_limit_exceeded``), ``retry_after`` seconds (None: when a request ends)."""

    def __init__(self, message: str, code: str, retry_after: Optional[float] = None):
        super().__init__(message)
        self.code, self.retry_after = code, retry_after


@dataclass
class _Usage:
    in_flight: int = 0
    spent: deque = field(default_factory=deque)  # (monotonic time, tokens), oldest first


class Limiter:
    """Per-key counters of requests in flight and tokens spent in the last minute.
    Thread-safe. ``admit`` a request (LimitExceeded when over a limit), ``release`` it with
    the tokens it spent."""

    WINDOW_S = 60.0

    def __init__(self, limits: Limits = Limits(), clock=time.monotonic):
        self.limits, self.clock = limits, clock
        self._lock = threading.Lock()
        self._keys: dict[str, _Usage] = {}

    def _usage(self, key: str, now: float) -> _Usage:
        u = self._keys.setdefault(key, _Usage())
        while u.spent and u.spent[0][0] <= now - self.WINDOW_S:
            u.spent.popleft()
        return u

    def admit(self, key: str) -> None:
        now = self.clock()
        with self._lock:
            u = self._usage(key, now)
            if u.in_flight >= self.limits.max_in_flight:
                raise LimitExceeded(f"too many requests in flight for {key}: at most "
                                    f"{self.limits.max_in_flight} at once; wait for one to "
                                    "finish", "too_many_requests", 1.0)
            tpm = self.limits.tokens_per_minute
            if tpm > 0:
                total = sum(t for _, t in u.spent)
                if total >= tpm:
                    # seconds until the oldest entries that bring it under the limit are old
                    over, wait = total - tpm, 0.0
                    for t0, t in u.spent:
                        over -= t
                        wait = t0 + self.WINDOW_S - now
                        if over < 0:
                            break
                    raise LimitExceeded(f"{key} spent {total:,} tokens in the last minute; "
                                        f"its limit is {tpm:,} tokens per minute",
                                        "rate_limit_exceeded", max(0.0, wait))
            u.in_flight += 1

    def release(self, key: str, tokens: int = 0) -> None:
        now = self.clock()
        with self._lock:
            u = self._usage(key, now)
            u.in_flight = max(0, u.in_flight - 1)
            if tokens > 0:
                u.spent.append((now, int(tokens)))

    def snapshot(self) -> dict:
        """{key name: {"in_flight", "tokens_last_minute"}} (names only, never keys)."""
        now = self.clock()
        with self._lock:
            return {k: {"in_flight": self._usage(k, now).in_flight,
                        "tokens_last_minute": sum(t for _, t in self._usage(k, now).spent)}
                    for k in list(self._keys)}


def retry_after_header(seconds: Optional[float]) -> Optional[str]:
    return None if seconds is None else str(max(1, math.ceil(seconds)))
