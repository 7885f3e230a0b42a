"""SearchTree.to_networkx / to_graphml: every node and attribute survives, and a GraphML
round trip gives back the same tree shape and values."""
from __future__ import annotations

import io

import networkx as nx

from search.tree import SearchTree


def _tree() -> SearchTree:
    t = SearchTree("8*7+6")
    t.charge(generated_tokens=5)
    a = t.add(0, "8*7=56", 5, -0.5, False, None, None)
    t.charge(generated_tokens=4)
    b = t.add(a, "56+6=62", 4, -0.25, False, None, None)
    t.charge(generated_tokens=3)
    c = t.add(b, "Answer: 62", 3, -0.1, True, "62", True)
    t.charge(generated_tokens=4)
    d = t.add(a, "56+6=61", 4, -2.0, False, None, None)
    t.emit("score", id=c, score=0.75)
    t.emit("backprop", path=[0, a, b, c], value=1.0)
    t.emit("vote", leaf=c, answer="62", weight=1.0)
    t.emit("final", answer="62", path=[a, b, c])
    assert d == 4
    return t


def test_to_networkx_has_every_node_edge_and_attribute():
    t = _tree()
    g = t.to_networkx()
    assert isinstance(g, nx.DiGraph)
    assert sorted(g.nodes) == sorted(t.nodes)
    assert sorted(g.edges) == [(0, 1), (1, 2), (1, 4), (2, 3)]
    for nid, n in t.nodes.items():
        a = g.nodes[nid]
        assert a["text"] == n.text and a["depth"] == n.depth and a["tokens"] == n.tokens
        assert a["logprob"] == n.logprob and a["visits"] == n.visits
        assert a["answer"] == n.answer and a["correct"] == n.correct and a["score"] == n.score
    assert g.nodes[3]["score"] == 0.75 and g.nodes[2]["visits"] == 1
    assert g.graph["problem"] == "8*7+6" and g.graph["final_answer"] == "62"
    assert g.graph["generated_tokens"] == 16
    assert nx.is_tree(g)
    # Root-to-leaf path in the graph equals the tree's own path.
    assert nx.shortest_path(g, 0, 3)[1:] == t.path_to(3)


def test_graphml_round_trip():
    t = _tree()
    g2 = nx.read_graphml(io.BytesIO(t.to_graphml().encode()), node_type=int)
    assert sorted(g2.edges) == sorted(t.to_networkx().edges)
    for nid, n in t.nodes.items():
        a = g2.nodes[nid]
        assert a["text"] == n.text and int(a["tokens"]) == n.tokens
        assert float(a["logprob"]) == n.logprob and bool(a["terminal"]) == n.terminal
        assert a.get("answer") == n.answer  # None is left out of GraphML
    assert g2.graph["problem"] == "8*7+6"
