"""The shared server's holes found by a stranger's probe (issue 30 item 9), each with a test
that failed before its fix: imported runs never answer a ``run=1`` link, History stays usable
with a huge run in it, uploads and answers stay in their session, History rows have owners,
the API key goes only to listed host:port pairs, Connect reveals no bodies or paths, inference
processes are reclaimed, URL-started work is budgeted per session, a huge run is drawn capped."""
from __future__ import annotations

import json

import pytest

from search.runtime import history
from tests.pages import page_helpers as tp
from tests.pages.page_helpers import model_env, navigation_only  # noqa: F401 - autouse fixtures
from ui.settings import widget_key as w


def _forge(res, answer: str = "99") -> bytes:
    """``res``'s export edited by hand: its final answer and tally say ``answer``."""
    d = json.loads(res.to_json())
    d["answer"], d["tally"] = answer, {answer: 3.0}
    for e in d["events"]:
        if e["type"] == "final":
            e["data"]["answer"] = answer
    return json.dumps(d).encode()


# ------------------------------------------------------------------ (1) imported runs
def test_an_imported_run_never_answers_a_run_link_and_is_marked(tmp_path, monkeypatch):
    """A forged export imported on History took over every visitor's matching ``run=1`` link
    (answer 99, no model call, no sign it was imported). Now the link makes the run again on
    this server, and History and the tree page say the row was imported."""
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    at = tp.new_app()
    res = tp.run_once(at, n=3)
    link = dict(at.query_params)
    assert link["run"] == "1" and res.answer != "99"
    for r in history.list_runs():  # a fresh server: only the forged file is there
        history.delete(r.id)
    rid, new = history.import_run(_forge(res))
    assert new and history.load(rid).answer == "99"
    again = tp.new_app(link)  # a visitor opens the shared link
    assert "tree_run" in again.session_state, "the link reopened the imported run"
    made = tp.wait_done(again)
    assert made.answer == res.answer != "99"
    computed = [r for r in history.list_runs() if r.id != rid]
    assert len(computed) == 1 and computed[0].origin == "computed"
    # marked on History and where the imported run is shown
    hist = tp.new_app()
    hist.switch_page("pages/history.py").run()
    assert not hist.exception, hist.exception
    table = hist.dataframe[0].value
    origin = dict(zip(table["id"], table["origin"]))
    assert origin[rid] == "imported" and origin[computed[0].id] == "computed here"
    hist.selectbox(key="hist_pick").set_value(rid).run()
    hist.button(key="hist_open").click().run()
    assert not hist.exception, hist.exception
    lines = [m.value for m in hist.markdown]
    assert any(f"opened from History (run #{rid}, imported: not computed on this server)"
               in m for m in lines), lines


# ------------------------------------------------------------------ (3) uploads per session
from tests.pages.test_page_freeform import stub_policy  # noqa: E402,F401 - the fixture

OWN = "How many moons does the planet in my story have? Think in careful paragraphs."


def test_one_sessions_upload_never_changes_another_sessions_gold(stub_policy):
    """One session's JSONL upload replaced the gold for every session (an upload saying 3
    turned another session's answer "correct"). Now the upload's gold is the uploader's
    expected answer, in its own session and link; another session's run is not judged."""
    import search.tasks
    task = search.tasks.get_task("freeform")
    a = tp.new_app({"task": "freeform"})
    data = json.dumps({"question": OWN, "answer": "42"}).encode()
    a.file_uploader(key="ff_upload").upload("mine.jsonl", data, "application/json").run()
    a.selectbox(key="ff_upload_pick").set_value(0).run()
    assert not a.exception, a.exception
    assert a.text_area(key=w("problem")).value == OWN
    assert a.text_input(key=w("expected")).value == "42"  # the uploader's gold, shown
    a.number_input(key=w("n")).set_value(1).run()
    a.button(key="tree_run_button").click().run()
    mine = tp.wait_done(a)
    assert mine.gold == "42" and mine.correct is True
    assert task.gold(OWN) is None  # nothing registered server-wide
    b = tp.new_app({"task": "freeform"})  # another visitor types the same question
    b.text_area(key=w("problem")).set_value(OWN).run()
    b.number_input(key=w("n")).set_value(1).run()
    b.button(key="tree_run_button").click().run()
    theirs = tp.wait_done(b)
    assert theirs.gold is None and theirs.correct is None


# ------------------------------------------------------------------ (4) History owners
def _delete(at, run_id: int) -> None:
    """Pick ``run_id`` on the History page and press Delete (when it can be pressed), then
    confirm when asked."""
    at.selectbox(key="hist_pick").set_value(run_id).run()
    if at.button(key="hist_delete").disabled:
        return
    at.button(key="hist_delete").click().run()
    if any(b.key == "hist_delete_yes" for b in at.button):
        at.button(key="hist_delete_yes").click().run()
    assert not at.exception, at.exception


def test_only_the_owner_or_the_operator_deletes_a_history_run(monkeypatch):
    """Any visitor could delete any run. Now a row belongs to the browser (or session) that
    saved or imported it; another visitor still sees and opens it but cannot delete it; the
    operator can, after typing $THOUGHTSCOPE_OPERATOR_KEY."""
    from tests.pages.test_history import make_result
    monkeypatch.setenv("THOUGHTSCOPE_OPERATOR_KEY", "op-key-7")
    a = tp.new_app()
    a.switch_page("pages/history.py").run()
    mine = make_result("2+3*4")
    a.file_uploader(key="hist_import").upload("r.json", mine.to_json().encode(),
                                              "application/json").run()
    assert not a.exception, a.exception
    (row,) = history.list_runs()
    old = history.save(make_result("7*8", answers=("56",), gold="56"))  # saved by nobody known
    b = tp.new_app()  # another visitor
    b.switch_page("pages/history.py").run()
    table = b.dataframe[0].value
    assert list(table["id"]) == [old, row.id]
    _delete(b, row.id)
    assert history.exists(row.id), "another visitor deleted the run"
    assert b.button(key="hist_delete").disabled
    _delete(b, old)
    assert history.exists(old)
    a.switch_page("pages/history.py").run()
    yours = dict(zip(a.dataframe[0].value["id"], a.dataframe[0].value["yours"]))
    assert yours == {row.id: "yes", old: ""}
    _delete(a, row.id)  # its owner may
    assert not history.exists(row.id)
    b.text_input(key="hist_operator_key").set_value("wrong").run()
    assert any("not the operator's key" in e.value for e in b.error)
    b.text_input(key="hist_operator_key").set_value("op-key-7").run()
    _delete(b, old)  # the operator may delete any run
    assert not history.exists(old)


# ------------------------------------------------------------------ (6) key hosts
@pytest.mark.parametrize("hosts, url, allowed", [
    (None, "http://127.0.0.1:8000/v1", False),  # was any loopback port
    (None, "http://localhost:41234/v1", False),
    (None, "http://[::1]:8000/v1", False),
    ("127.0.0.1:8000", "http://127.0.0.1:8000/v1", True),
    ("127.0.0.1:8000", "http://127.0.0.1:8001/v1", False),  # a local user's own port
    ("127.0.0.1", "http://127.0.0.1:8001/v1", False),  # a bare host: its standard port only
    ("127.0.0.1", "http://127.0.0.1/v1", True),
    ("gpu-box", "https://gpu-box/v1", True),
    ("gpu-box", "https://gpu-box:8443/v1", False),
    ("*.example.org", "https://a.example.org:9000/v1", False),
    ("*.example.org:9000", "https://a.example.org:9000/v1", True),
])
def test_the_key_goes_only_to_listed_host_port_pairs(monkeypatch, hosts, url, allowed):
    """The default allowed any loopback port, so a local user who bound a port received the
    key when a student pressed Connect. Now: only host:port pairs the operator lists
    (THOUGHTSCOPE_KEY_HOSTS; a bare host is its scheme's standard port), none by default."""
    from search.models import trust
    monkeypatch.delenv(trust.CONFIGURED_ENV, raising=False)
    if hosts is None:
        monkeypatch.delenv(trust.KEY_HOSTS_ENV, raising=False)
    else:
        monkeypatch.setenv(trust.KEY_HOSTS_ENV, hosts)
    assert trust.key_host_allowed(url) is allowed


def test_the_configured_server_gets_the_key_and_no_other_port(monkeypatch):
    """The server the operator configured on the command line (``python -m search`` or the
    gateway's ``--base-url``) is the one default that gets the key."""
    from search.models import trust
    monkeypatch.delenv(trust.KEY_HOSTS_ENV, raising=False)
    monkeypatch.delenv(trust.CONFIGURED_ENV, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-class-key")
    assert trust.key_for("http://127.0.0.1:8000/v1", "OPENAI_API_KEY")[0] is None
    trust.configure_server("http://127.0.0.1:8000/v1")
    assert trust.key_for("http://127.0.0.1:8000/v1", "OPENAI_API_KEY") == ("sk-class-key", None)
    key, why = trust.key_for("http://127.0.0.1:8001/v1", "OPENAI_API_KEY")
    assert key is None and "127.0.0.1:8001" in why


# ------------------------------------------------------------------ (2) a huge run on History
def _pushed_bytes(at) -> int:
    """Bytes of every element the script sent to the browser in its last run (their protos)."""
    total = 0
    stack = [at._tree]
    while stack:
        node = stack.pop()
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ByteSize"):
            total += proto.ByteSize()
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            stack.extend(children.values())
    return total


def test_one_huge_run_keeps_history_usable(tmp_path, monkeypatch):
    """One valid export with a 30 MB problem made History unusable for everyone (30-90 MB
    pushed per visit, the websocket closed over 25 MB, Delete unusable). Now the list reads
    at most history.LIST_CHARS characters of a problem, says it cut them, reads the run's JSON
    only when its download is clicked, and its owner can delete it."""
    from tests.pages.test_history import make_result
    big = make_result(problem="Count the letters: " + "ab " * 10_000_000)
    assert len(big.problem) > 30_000_000
    path = tmp_path / "big.json"
    path.write_text(big.to_json())
    at = tp.new_app()
    at.switch_page("pages/history.py").run()
    at.file_uploader(key="hist_import").upload("big.json", path.read_bytes(),
                                              "application/json").run()
    assert not at.exception, at.exception
    small = history.save(make_result("7*8", answers=("56",), gold="56"))
    at.run()
    assert not at.exception, at.exception
    assert at.dataframe, [e.value for e in at.error]
    (huge,) = [r.id for r in history.list_runs() if r.id != small]
    pushed = _pushed_bytes(at)
    assert pushed < 1_000_000, f"{pushed:,} bytes pushed to the browser"
    cells = dict(zip(at.dataframe[0].value["id"], at.dataframe[0].value["problem"]))
    assert cells[small] == "7*8"
    assert len(cells[huge]) == history.LIST_CHARS + 1 and cells[huge].endswith("…")
    assert any("listed cut" in c.value for c in at.caption), [c.value for c in at.caption]
    at.selectbox(key="hist_pick").set_value(huge).run()
    assert _pushed_bytes(at) < 1_000_000
    _delete(at, huge)  # Delete works, and only the huge run goes
    assert [r.id for r in history.list_runs()] == [small]


# ------------------------------------------------------------------ (9) Connect reveals nothing
BODY_SECRET = "INTERNAL-ADMIN-TOKEN-9f2c"


@pytest.fixture
def leaky_server():
    """Any host a student may name: every request gets an error whose body holds a secret."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _answer(self):
            code = 404 if self.path.rstrip("/").endswith("/models") else 400
            data = json.dumps({"error": {"message": f"{BODY_SECRET} db=10.0.0.5 "
                                                    f"user=admin"}}).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._answer()

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._answer()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_connect_echoes_no_error_body_of_the_server(leaky_server):
    """Connect reached any host and echoed 300 characters of its error body. Now the message
    names the URL and the HTTP status, never the body."""
    from search.models.base import BackendSettingsError
    from search.models.openai_compat import OpenAIPolicy
    with pytest.raises(BackendSettingsError) as info:
        OpenAIPolicy(leaky_server, "m", api_key_env="", timeout=5, max_retries=0)
    msg = str(info.value)
    assert leaky_server in msg and "HTTP 400" in msg, msg
    assert BODY_SECRET not in msg and "10.0.0.5" not in msg, msg


def test_local_folder_messages_do_not_say_which_paths_exist(tmp_path):
    """Local-folder messages told a missing path from a folder without a model and from a
    file that is not one (a way to list the server's files). Now one message for all."""
    from search.models.backends import ModelSpec, load_policy
    from search.models.base import BackendSettingsError
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "empty").mkdir()
    said = []
    for p in (tmp_path / "missing", tmp_path / "empty", tmp_path / "notes.txt", tmp_path):
        with pytest.raises(BackendSettingsError) as info:
            load_policy(ModelSpec("hf", str(p)), "arithmetic")
        said.append(str(info.value).replace(str(p), "PATH"))
    assert len(set(said)) == 1, said


# ------------------------------------------------------------------ (5) inference processes
class _FakeProcess:
    """Stands in for SearchProcess (no model, no process): records starts and closes."""
    started: list = []

    def __init__(self, path, device=None, step_delimiter="\n", dtype=None, overflow="error"):
        self.path, self.alive, self.closed, self.runs = path, True, False, 0
        self.pid = None
        _FakeProcess.started.append(self)

    def busy(self) -> bool:
        return self.runs > 0

    def rss_mb(self) -> float:
        return 400.0  # what one Local-folder process held in the probe

    def close(self, timeout: float = 10) -> None:
        self.alive, self.closed = False, True


def test_local_folder_processes_are_pooled_and_reclaimed(tmp_path, monkeypatch):
    """Each Local-folder load of a new folder started a permanent ~400 MB inference process
    (6 loads: +2.2 GB, kept after the tab closed). Now the processes are a pool: at most
    THOUGHTSCOPE_MAX_PROCESSES, and at most THOUGHTSCOPE_PROCESSES_MEMORY_MB resident in all;
    the least recently used idle one is closed first, a busy one never."""
    from search.models.hf import HFPolicy
    from search.runtime import search_process as sp
    monkeypatch.delenv("THOUGHTSCOPE_RUNS", raising=False)
    monkeypatch.setenv("THOUGHTSCOPE_MAX_PROCESSES", "3")
    monkeypatch.setenv("THOUGHTSCOPE_PROCESSES_MEMORY_MB", "100000")
    monkeypatch.setattr(sp, "SearchProcess", _FakeProcess)
    monkeypatch.setattr(sp, "_workers", {})
    _FakeProcess.started = []

    def folder(i):
        d = tmp_path / f"model{i}"
        d.mkdir(exist_ok=True)
        p = HFPolicy.__new__(HFPolicy)  # a loaded local model, as far as the pool looks
        p.path, p.device, p.step_delimiter = str(d), "cpu", "\n"
        return p

    got = [sp.search_process_for(folder(i)) for i in range(6)]
    assert len(_FakeProcess.started) == 6
    live = [w for w in _FakeProcess.started if not w.closed]
    assert len(live) == 3, f"{len(live)} inference processes kept"
    assert live == got[3:]  # the least recently used went first
    # a busy process is never closed; the memory cap counts too
    got[3].runs = 1
    monkeypatch.setenv("THOUGHTSCOPE_PROCESSES_MEMORY_MB", "900")  # room for two
    again = sp.search_process_for(folder(6))
    live = [w for w in _FakeProcess.started if not w.closed]
    assert got[3] in live and again in live and len(live) == 2, [w.path for w in live]
    # a folder used again after its process was closed gets a fresh one
    assert sp.search_process_for(folder(0)) is not got[0]


# ------------------------------------------------------------------ (10) per-session budgets
def test_a_link_cannot_keep_sampling_past_the_sessions_budget(tiny_model_dir, monkeypatch,
                                                              tmp_path):
    """One link (sc_problems=200&sc_n=32&seed=<new>&sc_measured=1) kept a core busy while its
    tab was open: the page sampled chunk after chunk by itself. Now what a session's pages
    sample by themselves is bounded by THOUGHTSCOPE_SESSION_CPU_S; past it sampling pauses
    with one line, and the person's click (Continue sampling) grants another budget."""
    from tests.pages.pool_pages import page_app, page_text
    monkeypatch.setenv("THOUGHTSCOPE_ORM_ARITHMETIC", str(tmp_path / "no_orm"))
    monkeypatch.setenv("THOUGHTSCOPE_PRM_ARITHMETIC", str(tmp_path / "no_prm"))
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_CPU_S", "0.001")  # spent by the first chunk
    make = page_app("pages/scaling.py", {}, tiny_model_dir, monkeypatch)
    at = make(sc_problems="20", sc_n="4", seed="4242")
    at.run()
    assert not at.exception, at.exception
    said = " ".join(w.value for w in at.warning)
    assert "compute budget" in said and "THOUGHTSCOPE_SESSION_CPU_S" in said, said
    assert "Sampling stopped at 10 of 20 problems" in page_text(at), page_text(at)
    at.button(key="sc_continue").click().run()  # the person's click: the next chunk
    assert not at.exception, at.exception
    text = page_text(at)  # the second (last) chunk sampled: all 20 problems, no pause
    assert "Sampling stopped at" not in text and "of 20 problems" not in text, text
    assert not any("compute budget" in w.value for w in at.warning)


# ------------------------------------------------------------------ (8) a huge run's figure
def test_a_huge_run_is_drawn_capped_with_a_note():
    """A 16 MB run under the caps froze a viewer's browser for 65 s: its figure was 19.6 MB of
    JSON with 120,007 points (benchmarks/bench_huge_tree.py, 20,000 nodes). Now a figure draws
    at most viz.tree.MAX_DRAWN_NODES nodes, says so, and every point keeps its own node id."""
    from benchmarks.bench_huge_tree import huge_tree
    import viz.tree
    from viz.tree import node_ids, tree_figure
    MAX_DRAWN_NODES = getattr(viz.tree, "MAX_DRAWN_NODES", 2000)  # (the code before had none)
    tree = huge_tree(20_000, 600)
    leaf = len(tree.nodes) - 1
    path = tree.path_to(leaf)
    fig = tree_figure(tree, final_path=path, selected=leaf)
    js = fig.to_json()
    assert len(js) < 3_000_000, f"{len(js):,} bytes of figure JSON"
    drawn = {i for tr in fig.data if tr.customdata is not None for i in tr.customdata
             if i is not None}
    assert MAX_DRAWN_NODES <= len(drawn) <= MAX_DRAWN_NODES + len(path)
    assert set(path) <= drawn and leaf in drawn and drawn <= set(tree.nodes)
    for i in list(drawn)[:50]:  # every point's id is its node's: its parent is drawn too
        assert i == 0 or tree.nodes[i].parent in drawn
    assert node_ids([{"customdata": leaf}]) == [leaf]
    notes = [a.text for a in fig.layout.annotations if "of 20,000 steps" in (a.text or "")]
    assert len(notes) == 1 and f"{len(drawn):,} of 20,000 steps" in notes[0], notes


def test_an_imported_file_is_never_listed_as_a_served_request(tmp_path):
    """Hole 1, wherever runs are shown: a forged export whose config names the gateway was
    listed on Traffic as a request this server served."""
    from search.serve.traffic import served
    from tests.pages.test_history import make_result
    db = tmp_path / "h.sqlite3"
    real = make_result("2+3*4")
    real.config["gateway"] = {"status": "done", "client": "alice"}
    rid = history.save(real, path=db)
    forged = make_result("7*8", answers=("99",), gold="56")
    forged.config["gateway"] = {"status": "done", "client": "alice"}
    fid, _new = history.import_run(forged.to_json().encode(), path=db)
    assert fid != rid
    assert [r["run_id"] for r in served(path=db)] == [rid]


def test_the_browser_owner_survives_a_new_mask_of_the_cookie():
    """Streamlit writes its XSRF cookie anew, with a new mask, on every page load (measured in
    chromium: the cookie differed after a reload, the token it masks did not); the owner is
    read from the token, so a reload keeps the browser's runs its own."""
    from ui.history import browser_token
    token = bytes(range(1, 33))

    def cookie(mask: bytes, secret: bytes = token) -> str:
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(secret))
        return f"2|{mask.hex()}|{masked.hex()}|1796590000"

    a, b = cookie(b"\x01\x02\x03\x04"), cookie(b"\xaa\xbb\xcc\xdd")
    assert a != b and browser_token(a) == browser_token(b) == token.hex()
    other = cookie(b"\x01\x02\x03\x04", bytes(range(2, 34)))  # another browser's token
    assert browser_token(other) != token.hex()
    assert browser_token("not-a-v2-cookie") == "not-a-v2-cookie"
