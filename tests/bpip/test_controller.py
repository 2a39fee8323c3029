"""BPIP-DFISA controller on hand-built trees with hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.bpip import distributions as D
from jaxgo.bpip.adapter import AdapterSettings, LinearVF, adapt_vf
from jaxgo.bpip.control import adaptation_relevance, run_search, similarity
from jaxgo.bpip.tree import Node, Settings, Tree

GRID = D.Grid(half_width=4.0, step=1.0)


class DictDomain:
    """A hand-built game: ``tree[name]`` lists children, ``evals[name]`` is (M, Up, Lw), ``exact[name]`` a value.

    All values are for the player to move at that node.
    """

    def __init__(self, tree, evals, exact, oet=None, features=None):
        self.tree, self.evals, self.exact = tree, evals, exact
        self.oet = oet or {}
        self.feats = features or {}
        self.vf = LinearVF()

    def moves(self, s):
        return list(self.tree.get(s, []))

    def play(self, s, m):
        return m

    def terminal_value(self, s):
        return self.exact.get(s)

    def evaluate(self, s):
        return self.evals[s]

    def features(self, s):
        return frozenset(self.feats.get(s, ()))

    def expansion_time(self, s):
        return self.oet.get(s, 1.0)

    def move_name(self, m):
        return m

    # Adapter interface
    def stop(self, s):
        return False

    def vf_parts(self, s):
        return 0.0, frozenset([s])


def test_staircase_hand_values_and_mean():
    spikes = D.staircase(1.0, 3.0, 0.0, alpha=0.5)
    assert np.array(spikes) == pytest.approx(np.array([(0.0, 1 / 3), (1.0, 0.5), (3.0, 1 / 6)]))
    assert sum(p for _, p in spikes) == pytest.approx(1.0)
    assert sum(z * p for z, p in spikes) == pytest.approx(1.0)  # mean is M
    assert D.staircase(2.0, 2.0, 2.0, 0.5) == [(2.0, 1.0)]


def test_snap_keeps_mean_and_negation_reverses():
    grid = D.Grid(half_width=2.0, step=0.5)
    pmf = D.snap([0.3], grid)[0]
    assert pmf.sum() == pytest.approx(1.0)
    assert D.mean(pmf, grid) == pytest.approx(0.3)
    assert D.mean(D.negate(pmf), grid) == pytest.approx(-0.3)


def test_best_probabilities_split_ties():
    g = GRID.values
    x = D.spikes_to_pmf([(2.0, 0.25), (1.0, 0.5), (0.0, 0.25)], GRID)
    y = D.spikes_to_pmf([(1.0, 1.0)], GRID)
    pr = D.best_probabilities(np.stack([x, y]))
    assert pr == pytest.approx([0.5, 0.5])  # 0.25 outright + half of the 0.5 tie
    three = D.best_probabilities(np.stack([y, y, y]))
    assert three == pytest.approx([1 / 3] * 3)
    assert len(g) == GRID.size


def one_level_domain():
    # root r: move a leads to an uncertain leaf, b to a decided one.  Values for the side to move there.
    return DictDomain(
        tree={"r": ["a", "b"]},
        evals={"r": (0.0, 1.0, -1.0), "a": (-1.0, 0.0, -2.0)},
        exact={"b": -1.0},
    )


def test_q_value_and_qss_by_hand():
    tree = Tree(one_level_domain(), "r", Settings(grid=GRID, alpha=0.5))
    # X_a (root view) = {2: .25, 1: .5, 0: .25}, X_b = 1 -> max = {2: .25, 1: .75}
    assert tree.child_means() == pytest.approx([1.0, 1.0])
    assert tree.q_value() == pytest.approx(1.25 - 1.0)
    leaves, v_q, v_i, q = tree.leaf_information()
    assert [x.state for x in leaves] == ["a"]  # the exact leaf b carries no information value
    # every spike of a settles the decision: Q_j = 0, so QSS = sum p |0.25 - 0| and V_I = 0.25
    assert v_q == pytest.approx([0.25])
    assert v_i == pytest.approx([0.25])
    assert q == pytest.approx(0.25)


def test_bpip_definition_1_mixture_differs_from_max_distribution():
    dom = DictDomain(
        tree={"r": ["n", "e"], "n": ["c", "d"]},
        evals={"r": (0, 1, -1), "n": (0, 1, -1), "c": (0.0, 2.0, -2.0)},
        exact={"e": -3.0, "d": -1.0},
    )
    tree = Tree(dom, "r", Settings(grid=GRID))
    n = tree.root.children[0]
    tree.expand(n)
    values = tree.bpip_values()
    # at n: -X_c = {-2: .25, 0: .5, 2: .25}, -X_d = 1 -> Pr(c) = .25, Pr(d) = .75
    assert values[id(n)] == pytest.approx(0.25 * 0.0 + 0.75 * 1.0)
    assert D.mean(n.pmf, GRID) == pytest.approx(0.25 * 2 + 0.75 * 1)  # product-rule distribution
    assert values[id(tree.root)] == pytest.approx(max(-0.75, 3.0))
    assert tree.best_move().state == "e"


def test_qss_matches_brute_force_replacement():
    dom = DictDomain(
        tree={"r": ["a", "b"], "a": ["a1", "a2"], "b": ["b1"]},
        evals={"r": (0, 1, -1), "a": (0.0, 1.0, -1.0), "b": (0.0, 2.0, -1.0), "a1": (1.0, 2.0, -1.0),
               "a2": (0.0, 3.0, -2.0), "b1": (-1.0, 1.0, -2.0)},
        exact={},
    )
    tree = Tree(dom, "r", Settings(grid=GRID))
    tree.expand(tree.root.children[0])
    leaves, v_q, v_i, q = tree.leaf_information()
    for x, vq, vi in zip(leaves, v_q, v_i):
        saved, qs = x.pmf, []
        for z, p in x.spikes:
            x.pmf = D.snap([z], GRID)[0]
            tree.propagate(x.parent)
            qs.append((p, tree.q_value()))
        x.pmf = saved
        tree.propagate(x.parent)
        assert vq == pytest.approx(sum(p * abs(q - qj) for p, qj in qs))
        assert vi == pytest.approx(q - sum(p * qj for p, qj in qs))
        assert vi <= vq + 1e-12


def deep_domain():
    # before search b looks better (0.5 > 0); expanding a reveals a forced +2 for the root player
    return DictDomain(
        tree={"r": ["a", "b"], "a": ["a1"]},
        evals={"r": (0, 1, -1), "a": (0.0, 2.0, -2.0)},
        exact={"b": -0.5, "a1": 2.0},
    )


@pytest.mark.parametrize("method", ["qss", "trqss", "atrqss"])
def test_controllers_expand_the_uncertain_move(method):
    res = run_search(deep_domain(), "r", method, Settings(grid=GRID, cost_per_etu=0.01))
    assert res.move == "a"
    assert res.expansions == 2 and res.time_units == 2.0
    assert res.root_values["a"] == pytest.approx(2.0)
    assert res.stop_reason == "all leaves exact"


def test_expensive_search_stops_at_once():
    res = run_search(deep_domain(), "r", "qss", Settings(grid=GRID, cost_per_etu=10.0))
    assert res.expansions == 1 and res.move == "b"
    res = run_search(deep_domain(), "r", "trqss", Settings(grid=GRID, cost_per_etu=10.0))
    assert res.expansions == 1 and res.stop_reason == "best relevance < 0"


def test_adaptation_relevance_by_hand():
    s = Settings(gamma=0.5, cost_per_etu=0.1, adapt_time=10.0, srf=0.5, sim_scale=1.0)
    y = Node(state="y", parent=None, move=None, depth=0, features=frozenset({1, 2}))
    x = Node(state="x", parent=None, move=None, depth=1, features=frozenset({1, 2}), oet=4.0)
    # sim = 1, ET after = min(4, 0.5 * 4) = 2: gain 2 per leaf; U = 0.5*0.1*gain - 0.1*10, C = 1
    assert adaptation_relevance(y, [x], [1.0], [4.0], s) == pytest.approx(0.05 * 2 - 1.0)
    assert adaptation_relevance(y, [x] * 20, [1.0] * 20, [4.0] * 20, s) == pytest.approx(0.05 * 40 - 1.0)
    # a leaf outside the potential set (V <= C after adaptation) contributes nothing
    assert adaptation_relevance(y, [x], [0.1], [4.0], s) == pytest.approx(-1.0)
    assert similarity(frozenset({1}), frozenset({2}), 2.0) == pytest.approx(1 / (1 + 2 / 2))


def test_atrqss_adapts_when_the_time_gain_is_large():
    children = [f"c{i}" for i in range(30)]
    dom = DictDomain(
        tree={"r": children},
        evals={"r": (0, 1, -1), **{c: (0.0, 2.0, -2.0) for c in children}},
        exact={},
        oet={c: 20.0 for c in children},
        features={"r": [1, 2], **{c: [1, 2] for c in children}},
    )
    s = Settings(grid=GRID, gamma=0.5, cost_per_etu=0.001, adapt_time=10.0, max_expansions=3,
                 adapt_trials=1, adapt_steps=1)
    res = run_search(dom, "r", "atrqss", s)
    assert res.adaptations == 1
    assert res.log[1] == ("a", 0)  # the first operation after the root expansion adapts at the root
    assert res.time_units == res.expansions + 10.0 * res.adaptations


def test_adapter_moves_value_towards_lookahead():
    dom = DictDomain(tree={"s0": ["s1"], "s1": ["s2"]}, evals={}, exact={"s2": 1.0})
    vf = LinearVF()
    adapt_vf(dom, vf, "s0", AdapterSettings(trials=1, max_steps=3, epsilon=0.0, rate=1.0), np.random.default_rng(0))
    assert vf.weights["s0"] == pytest.approx(1.0)  # V(s0) <- q = V(s2) = 1 after move and response


class BatchDictDomain(DictDomain):
    """The same hand-built game, children generated and evaluated by ``expand_batch``."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.batches = 0

    def expand_batch(self, s):
        from jaxgo.bpip.tree import Child

        self.batches += 1
        out = []
        for m in self.moves(s):
            if m in self.exact:
                out.append(Child(move=m, state=m, exact=self.exact[m]))
            else:
                out.append(Child(move=m, state=m, est=self.evals[m], oet=self.expansion_time(m)))
        return out


def test_expand_batch_gives_the_same_tree_as_single_evaluation():
    spec = dict(
        tree={"r": ["a", "b"], "a": ["a1", "a2"]},
        evals={"r": (0, 1, -1), "a": (0.0, 2.0, -2.0), "a1": (1.0, 3.0, 0.0), "a2": (-1.0, 0.0, -3.0)},
        exact={"b": -0.5},
    )
    plain, batched = DictDomain(**spec), BatchDictDomain(**spec)
    t1, t2 = Tree(plain, "r", Settings(grid=GRID)), Tree(batched, "r", Settings(grid=GRID))
    t1.expand(t1.root.children[0])
    t2.expand(t2.root.children[0])
    assert batched.batches == 2
    assert t2.q_value() == pytest.approx(t1.q_value())
    assert t2.child_means() == pytest.approx(t1.child_means())
    assert [c.est for c in t2.root.children[0].children] == [(1.0, 3.0, 0.0), (-1.0, 0.0, -3.0)]
    assert t2.root.children[1].exact and t2.child_means()[1] == pytest.approx(0.5)


def test_trace_records_when_the_choice_settled():
    res = run_search(deep_domain(), "r", "qss", Settings(grid=GRID, cost_per_etu=0.01, trace=True))
    # after the root expansion b (0.5) leads; after expanding a (exact +2) the choice is a for good
    assert [name for _e, _t, name in res.trace] == ["b", "a"]
    assert res.settled_at() == 2


def test_adapter_target_uses_the_best_reply_by_default():
    from jaxgo.bpip.adapter import q_values

    # s0 -> m -> replies r1 / r2; exact values are for the side to move there (the original mover again)
    dom = DictDomain(tree={"s0": ["m"], "m": ["r1", "r2"], "r1": ["x"], "r2": ["x"]}, evals={},
                     exact={"r1": 1.0, "r2": 5.0})
    dom.terminal_value = lambda s: dom.exact.get(s)
    rng = np.random.default_rng(0)
    [(q, mv, model)] = q_values(dom, LinearVF(), "s0", rng, epsilon=0.5, target_epsilon=0.0)
    assert mv == "m" and q == pytest.approx(1.0)  # the adversary's best reply
    [(q, _, model)] = q_values(dom, LinearVF(), "s0", rng, epsilon=0.5)  # target noise = sampling noise
    assert q == pytest.approx(0.75 * 1.0 + 0.25 * 5.0)
    assert model[0] == pytest.approx([0.75, 0.25])  # transitions are still sampled with exploration
