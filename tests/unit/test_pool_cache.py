"""The disk cache of sampled pools (search.analysis.pool_cache, issue 22 item 7): every
setting the pools depend on changes the key, a hit returns the pools that were sampled, a
damaged file or an unwritable folder is one note and never an exception, the folder stays
under its bound, and the chunks do not depend on how many problems were asked for."""
from __future__ import annotations

import os
import time

import pytest

from search.analysis import pool_cache
from search.analysis.pools import sample_pools
from search.tasks import Problem, get_task


@pytest.fixture(autouse=True)
def no_notes_left_behind():
    """The cache's notes are process-wide (one line per problem met, for the pages): clear
    them around each test here, so a page test later in the same process does not show a
    damaged file these tests made on purpose (it did, in a 中文 page test under xdist)."""
    with pool_cache._LOCK:
        pool_cache._NOTES.clear()
    yield
    with pool_cache._LOCK:
        pool_cache._NOTES.clear()

PROBLEMS = [Problem("3+4", "7", 1), Problem("2*5", "10", 1), Problem("9-6", "3", 1)]


class _Chat:
    """A policy stub for prompts only (no sampling): a chat template that shows the turns."""
    prompt_style = None

    def render_chat(self, msgs):
        return "".join(f"<{m['role']}>{m['content']}" for m in msgs)


def _key(**over):
    base = dict(model_id="/m/model.gguf|model.gguf:10:1", task="freeform", problem_set="heldout",
                prompts="abc", problems=PROBLEMS[:2], n=8, temperature=0.6, top_p=1.0, seed=0,
                chain_tokens=512)
    base.update(over)
    return pool_cache.chunk_key(**base)


def test_the_key_changes_when_any_setting_changes():
    k = _key()
    assert k == _key() and len(k) == 64
    changed = [_key(model_id="/m/model.gguf|model.gguf:10:2"), _key(task="arithmetic"),
               _key(problem_set="validation"), _key(prompts="abd"),
               _key(problems=PROBLEMS[1:3]), _key(problems=[Problem("3+4", "8", 1),
                                                            PROBLEMS[1]]),
               _key(n=16), _key(temperature=0.61), _key(top_p=0.95), _key(seed=1),
               _key(chain_tokens=256)]
    assert len({k, *changed}) == 1 + len(changed)


def test_the_prompt_style_changes_the_prompts_digest():
    task = get_task("freeform")
    pol = _Chat()
    zero = pool_cache.prompts_digest(task.with_prompt("zero-shot"), PROBLEMS, pol)
    few = pool_cache.prompts_digest(task.with_prompt("few-shot"), PROBLEMS, pol)
    mine = pool_cache.prompts_digest(task.with_prompt("custom", "Q: {question}"), PROBLEMS, pol)
    assert len({zero, few, mine}) == 3
    assert zero == pool_cache.prompts_digest(task.with_prompt("zero-shot"), PROBLEMS, pol)


def test_model_identity_follows_the_file_and_its_folder(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF" + b"\0" * 10)
    ident = pool_cache.model_identity(f)
    assert ident and str(f.resolve()) in ident
    assert pool_cache.model_identity(tmp_path) == ident  # the folder holding the GGUF file
    os.utime(f, ns=(time.time_ns(), time.time_ns() + 10**9))  # replaced in place: new time
    assert pool_cache.model_identity(f) != ident
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text("{}")
    (hf / "model.safetensors").write_bytes(b"x")
    a = pool_cache.model_identity(hf)
    (hf / "model.safetensors").write_bytes(b"xy")  # retrained: another size
    assert pool_cache.model_identity(hf) != a
    assert pool_cache.model_identity("llama3 @ http://x") is None
    assert pool_cache.model_identity("") is None


@pytest.fixture
def jobs(tiny_policy, tiny_model_dir):
    def make(n=4, temperature=0.8, seed=0, problems=PROBLEMS, chain_tokens=None):
        return pool_cache.plan(tiny_policy, "arithmetic", problems, n, temperature, 1.0, seed,
                               chain_tokens, pool_cache.model_identity(tiny_model_dir),
                               problem_set="heldout", small_model=False)
    return make


def test_a_hit_returns_the_pools_that_were_sampled(jobs, tiny_policy, tmp_path):
    calls = []

    def sampler(*a, **kw):
        calls.append(kw["seed"])
        return sample_pools(*a, **kw)
    pool_cache.forget_memory()
    first = [pool_cache.run(j, tiny_policy, "arithmetic", tmp_path, sampler) for j in jobs()]
    assert [hit for *_, hit in first] == [False] * len(first) and len(calls) == len(first)
    pool_cache.forget_memory()  # a restart: only the disk is left
    again = [pool_cache.run(j, tiny_policy, "arithmetic", tmp_path, sampler) for j in jobs()]
    assert [hit for *_, hit in again] == [True] * len(again) and len(calls) == len(first)
    assert [p for pools, *_ in again for p in pools] == [p for pools, *_ in first for p in pools]
    assert again[0][1]["generated_tokens"] == first[0][1]["generated_tokens"] > 0
    # and they are what sample_pools gives for that chunk and seed
    j = jobs()[0]
    direct, _ = sample_pools(list(j.problems), tiny_policy, 4, 0.8, 1.0, j.seed,
                             problems_per_call=len(j.problems), task="arithmetic")
    assert again[0][0] == direct


def test_chunks_do_not_depend_on_the_number_of_problems(jobs):
    four = jobs(n=4)  # 16 // 4 = 4 problems a chunk for a real model
    assert [(j.start, j.end) for j in four] == [(0, 3)]
    many = [Problem(f"{i}+1", str(i + 1), 1) for i in range(10)]
    a, b = jobs(n=8, problems=many[:5]), jobs(n=8, problems=many)
    assert [(j.start, j.end) for j in b] == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10)]
    assert [j.key for j in a[:2]] == [j.key for j in b[:2]]  # shared leading chunks
    assert pool_cache.chunk_size(8, small_model=True) == 10
    assert {j.key for j in jobs(seed=1)}.isdisjoint({j.key for j in jobs()})
    assert jobs(chain_tokens=50)[0].cap == 50 and jobs()[0].cap == get_task("arithmetic").chain_tokens


def test_a_damaged_file_is_ignored_with_one_note_and_sampled_again(jobs, tiny_policy, tmp_path):
    job = jobs()[0]
    pool_cache.forget_memory()
    pools, _, hit = pool_cache.run(job, tiny_policy, "arithmetic", tmp_path)
    f = tmp_path / f"{job.key}.json"
    for bad in (b"{not json", b"[]", b'{"v": 1, "key": "other", "pools": []}', b"\xff\xfe"):
        f.write_bytes(bad)
        pool_cache.forget_memory()
        assert pool_cache.load(job.key, tmp_path) is None
    assert any("ignored a damaged pool cache file" in n and str(f) in n
               for n in pool_cache.notes())
    again, _, hit = pool_cache.run(job, tiny_policy, "arithmetic", tmp_path)
    assert not hit and again == pools  # sampled again (same seed, same pools), rewritten
    pool_cache.forget_memory()
    assert pool_cache.load(job.key, tmp_path)[0] == pools
    # a file of the wrong shape for the job (e.g. n differs) is not used either
    assert pool_cache.load(job.key, tmp_path, expect=(len(job.problems), 5)) is None


def test_an_unwritable_folder_is_one_note_and_the_pools_still_come_back(jobs, tiny_policy,
                                                                        tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    folder = blocker / "pools"  # cannot be created: its parent is a file
    job = jobs(seed=7)[0]
    pool_cache.forget_memory()
    pools, _, hit = pool_cache.run(job, tiny_policy, "arithmetic", folder)
    assert not hit and len(pools) == len(job.problems)
    assert any("cannot be written" in n and str(folder) in n for n in pool_cache.notes())


def test_the_folder_is_bounded_oldest_used_first(tmp_path):
    pools, _ = [], {}
    for i in range(4):
        pool_cache.store(f"{i:064x}", pools, {}, tmp_path, max_bytes=10**9)
        os.utime(tmp_path / f"{i:064x}.json", ns=(i * 10**9, i * 10**9))
    size = (tmp_path / f"{0:064x}.json").stat().st_size
    assert pool_cache.load(f"{0:064x}", tmp_path) is not None  # a hit: now the newest
    assert pool_cache.prune(tmp_path, max_bytes=2 * size) == 2
    assert sorted(f.name[-6:] for f in tmp_path.glob("*.json")) == ["0.json", "3.json"]


def test_the_progress_line_names_the_chunk_being_sampled(tiny_policy, tmp_path, monkeypatch):
    """Trial finding (issue 22): in the first round the Temperature page said "2 of 30
    problems · sampling problems 3–4 at T = 0.4" while T = 0.4 was drawing its FIRST chunk
    (problems 1–2). The line names the chunk the sweep samples at that temperature."""
    from ui.pool_page import doing_text
    from ui.sampling import Sweep
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    pool_cache.forget_memory()
    task = get_task("arithmetic")
    problems = task.split("heldout", 8)
    sw = Sweep(tiny_policy, task, "tiny", problems, 2, [0.2, 0.4], 1.0, 0)
    first = sw.next_chunk(0.2)
    assert first is not None and first[0] == 1
    sw.step(max_calls=1)  # the first round's first call: T = 0.2's first chunk only
    assert sw.done == first[1] and sw.first_round
    assert sw.next_chunk(0.4) == first and sw.next_chunk(0.2) is None
    assert doing_text(sw, 0.4) == f"sampling problems 1–{first[1]} at T = 0.4"
    sw.step()  # T = 0.4 catches up; then both draw the second chunk
    if sw.total > first[1]:
        a, b = sw.next_chunk(0.2)
        assert a == first[1] + 1 and sw.next_chunk(0.4) == (a, b)
