"""How long Stop takes against an OpenAI-compatible server that hangs (issue 19, item 7).

A local server answers the connection probe, then holds every sampling request for
``--hang`` seconds. ``OpenAIPolicy.sample`` is called with an ``interrupt`` (a threading.Event's
``is_set``, as the Search tree page's Stop sets it) that a timer sets after 0.5 s; the figure is
the time from the Event being set to ``Interrupted`` reaching the caller. Before the fix the call
waited for the request timeout and its retries (the issue saw three minutes).

    python benchmarks/bench_stop_server.py [--runs 5] [--hang 30]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MODEL = "bench-model"


def hanging_server(hang: float) -> ThreadingHTTPServer:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _send(self, obj) -> None:
            data = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self):
            self._send({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            if body.get("max_tokens", 0) > 8:  # the probe's requests ask 4 or 8 tokens
                time.sleep(hang)
            self._send({"id": "x", "object": "text_completion", "created": 0, "model": MODEL,
                        "choices": [{"index": 0, "text": "1", "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                  "total_tokens": 2}})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hang", type=float, default=30.0)
    a = ap.parse_args()
    from search.models.base import Interrupted
    from search.models.openai_compat import POLL_SECONDS, OpenAIPolicy
    httpd = hanging_server(a.hang)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    pol = OpenAIPolicy(url, MODEL, timeout=60.0, max_retries=2)
    lat = []
    for k in range(a.runs):
        ev, t_set = threading.Event(), []

        def fire():
            t_set.append(time.perf_counter())
            ev.set()
        threading.Timer(0.5 + 0.037 * k, fire).start()  # off the poll grid
        try:
            pol.sample(["1+2="] * 4, n=4, max_new_tokens=32, interrupt=ev.is_set)
        except Interrupted:
            lat.append(time.perf_counter() - t_set[0])
    httpd.shutdown()
    print(f"Stop against a server hanging {a.hang:g} s (timeout 60 s, 2 retries, poll "
          f"{POLL_SECONDS:g} s): median {statistics.median(lat):.3f} s, max {max(lat):.3f} s "
          f"over {len(lat)} of {a.runs} runs")


if __name__ == "__main__":
    main()
