"""``compiled_snapshot``: a task's snapshot and the moves' columns of a response in compiled calls equal the
former numpy code (kept here) bit for bit, on random trees and statistics."""

import types

import numpy as np
import pytest
from server.test_responses import rounded

from jaxgo.go.coords import BLACK, WHITE
from jaxgo.search import descent
from jaxgo.search.tree import finite_values, rank_actions
from jaxgo.server import compiled_snapshot, responses, score_estimate, tasks
from jaxgo.server.tasks import mean_and_stdev, visits_shown


def rounded_rows(rows: list, digits: int) -> list[list]:
    """``responses.rounded_rows`` until 2026-12-08: ``rounded`` of each float [n] of ``rows`` in one step."""
    if not rows[0].shape[0]:
        return [[] for _ in rows]
    return rounded(np.stack(rows), digits)


def former_snapshot(task, max_pv_moves: int) -> responses.Snapshot:
    """``Task.snapshot`` until 2026-12-08 (numpy calls)."""
    tree, query = task.job.tree, task.query
    root = tree.root
    legal = tree.children_legal[root].copy()
    visits = tree.children_visits[root].copy()
    visits[~legal] = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(visits > 0, tree.children_values[root] / np.maximum(visits, 1e-9), np.nan)
    raw, score_stdev = mean_and_stdev(task.score_sum, task.score_sq_sum, task.score_n)
    where = score_estimate.Position(query.size, task.komi, task.turn)
    score = score_estimate.move_scores(task.score_estimate, raw, score_stdev, task.score_n, where)
    ranking = rank_actions(visits, values)
    ranked = ranking[:max_pv_moves]
    ranked = ranked[visits[ranked] > 0].astype(np.int32)
    lines = np.empty((len(ranked), max(0, query.pv_len - 1)), np.int32)
    lengths = np.empty(len(ranked), np.int32)
    for m, start in enumerate(tree.children_index[root, ranked]):  # (``tasks.best_lines`` until 2026-12-08)
        lengths[m] = descent.best_line(tree.children_index, tree.children_visits, tree.children_values,
                                       tree.children_legal, start, lines[m])
    pvs = {a: [a] + line[:n] for a, line, n in zip(ranked.tolist(), lines.tolist(), lengths.tolist())}
    total = float(visits.sum())
    root_rate = float(np.nansum(tree.children_values[root][legal]) / total) if total > 0 else 0.5
    scale = task.config.playouts_per_visit
    shown = visits_shown(visits, scale) if scale > 1 else visits
    owner = stdev = None
    if task.owner_n:
        owner, stdev = mean_and_stdev(task.owner_sum, task.owner_abs_sum, task.owner_n)
    moves_owner = None
    if task.moves_owner_sum is not None:
        moves_owner = task.moves_owner_sum / np.maximum(task.score_n, 1)[:, None]
    return responses.Snapshot(
        size=query.size, to_play=int(tree.to_play[root]), visits=shown, values=values, score=score,
        score_stdev=score_stdev, prior=np.where(legal, tree.children_prior[root], 0.0), legal=legal, pvs=pvs,
        root_visits=int(round(task.job.done / scale)), root_winrate=root_rate,
        root_score=score_estimate.root_score(score, shown, float(score_estimate.calibrated(
            task.score_estimate, task.root_score_sum / max(task.owner_n, 1), where))),
        ownership=owner, ownership_stdev=stdev, moves_ownership=moves_owner,
        pv_visits=None, ranking=ranking if shown is visits else None)


def former_move_infos(snap, perspective: str = "BLACK") -> list[dict]:
    """``responses.move_infos`` until 2026-12-08 (numpy columns, ``rounded_rows`` above)."""
    flip_rate = responses._flip(snap.to_play, perspective)
    score_sign = -1.0 if (perspective == "WHITE" or (perspective == "SIDETOMOVE" and snap.to_play == WHITE)) else 1.0
    visits = np.asarray(snap.visits, np.float64)
    visited = (visits > 0) & np.asarray(snap.legal)
    ranked = snap.ranking if snap.ranking is not None else rank_actions(snap.visits, snap.values)
    order = ranked[visited[ranked]]
    names = responses.gtp_names(snap.size)
    n = visits[order]
    own_rate = finite_values(snap.values)[order]
    lcb = own_rate - 1.96 * np.sqrt(np.maximum(own_rate * (1 - own_rate), 1e-4) / n)
    rate = 1.0 - own_rate if flip_rate else own_rate
    lcb = 1.0 - lcb if flip_rate else lcb
    rate_r, prior_r, lcb_r, utility_r = rounded_rows(
        [rate, np.asarray(snap.prior, np.float64)[order], lcb, 2 * rate - 1], 6)
    scores = [score_sign * finite_values(snap.score)[order]]
    if snap.score_stdev is not None:
        scores.append(finite_values(snap.score_stdev)[order])
    scores = rounded_rows(scores, 3)
    actions = order.tolist()
    pvs = [list(map(names.__getitem__, snap.pvs.get(a, (a,)))) for a in actions]
    counts = np.rint(n).astype(np.int64).tolist()
    infos = [{"move": names[a], "visits": v, "winrate": w, "scoreLead": s, "scoreMean": s, "prior": p, "lcb": b,
              "utility": u, "order": i, "pv": pv}
             for i, (a, v, w, s, p, b, u, pv) in enumerate(zip(actions, counts, rate_r, scores[0], prior_r, lcb_r,
                                                                utility_r, pvs))]
    if snap.score_stdev is not None:
        for info, value in zip(infos, scores[1]):
            info["scoreStdev"] = value
    return infos


def random_tree(rng, size: int, nodes: int):
    """A tree-like namespace of ``nodes`` rows on a ``size`` board: links only to later rows, random visits
    (many 0), value sums (some NaN), legal moves and priors."""
    actions = size * size + 1
    index = np.full((nodes, actions), -1, np.int32)
    for node in range(nodes - 1):
        linked = rng.random(actions) < 0.3
        index[node, linked] = rng.integers(node + 1, nodes, linked.sum())
    visits = np.where(rng.random((nodes, actions)) < 0.4, rng.integers(0, 60, (nodes, actions)), 0).astype(float)
    visits[rng.random((nodes, actions)) < 0.05] = 30.0  # ties
    values = visits * rng.random((nodes, actions))
    values[rng.random((nodes, actions)) < 0.02] = np.nan
    legal = rng.random((nodes, actions)) < 0.8
    prior = rng.random((nodes, actions)).astype(np.float32)
    return types.SimpleNamespace(root=0, children_index=index, children_visits=visits, children_values=values,
                                 children_legal=legal, children_prior=prior, to_play=np.ones(nodes, np.int8))


def random_task(rng, size: int, scale: int, estimate: str, moves_owner: bool):
    """A namespace with what ``Task.snapshot`` reads: a random tree and root statistics."""
    actions = size * size + 1
    counts = np.where(rng.random(actions) < 0.5, rng.integers(0, 50, actions), 0).astype(float)
    sums = rng.normal(0, 20, actions) * counts
    square = np.abs(sums) * rng.uniform(5, 60, actions)
    owner_n = int(rng.integers(0, 3)) * 100
    return types.SimpleNamespace(
        job=types.SimpleNamespace(tree=random_tree(rng, size, 30), done=int(rng.integers(1, 5000))),
        query=types.SimpleNamespace(size=size, pv_len=int(rng.integers(1, 12)), include_pv_visits=False),
        config=types.SimpleNamespace(playouts_per_visit=scale), komi=7.5, turn=int(rng.integers(0, 80)),
        score_estimate=estimate, score_sum=sums, score_sq_sum=square, score_n=counts,
        owner_sum=rng.integers(-owner_n, owner_n + 1, actions - 1).astype(float),
        owner_abs_sum=np.full(actions - 1, float(owner_n)), owner_n=owner_n,
        moves_owner_sum=rng.normal(0, 5, (actions, actions - 1)) if moves_owner else None,
        root_score_sum=float(rng.normal(0, 1000)))


def assert_snapshots_equal(new, old):
    for field in ("size", "to_play", "root_visits", "root_winrate", "root_score", "pvs", "pv_visits"):
        assert getattr(new, field) == getattr(old, field), field
    for field in ("visits", "values", "score", "prior", "legal", "ownership", "ownership_stdev",
                  "moves_ownership", "score_stdev"):
        a, b = getattr(new, field), getattr(old, field)
        assert (a is None) == (b is None), field
        if a is not None:
            np.testing.assert_array_equal(a, b, err_msg=field, strict=True)
    ranking = old.ranking if old.ranking is not None else rank_actions(old.visits, old.values)
    np.testing.assert_array_equal(new.ranking, ranking)


def test_pairwise_total_is_numpys_sum():
    rng = np.random.default_rng(0)
    for count in list(range(0, 300)) + [361, 362, 513, 1000, 1024, 1037, 4100]:
        for _ in range(5):
            a = rng.standard_normal(count + 3) * 10.0 ** rng.integers(-8, 9, count + 3)
            assert compiled_snapshot.pairwise_total(a, 3, count) == a[3:].sum()
            assert compiled_snapshot.sum_all(a[3:].copy()) == a[3:].sum()


@pytest.mark.parametrize("size", [5, 9, 13, 19])
@pytest.mark.parametrize("scale", [1, 4])
@pytest.mark.parametrize("estimate", ["mean", "shrunk", "calibrated"])
def test_snapshot_equals_former(size, scale, estimate):
    rng = np.random.default_rng(size * 100 + scale * 10 + len(estimate))
    for trial in range(12):
        task = random_task(rng, size, scale, estimate, moves_owner=trial % 3 == 0)
        max_pv = int(rng.integers(1, 50))
        assert_snapshots_equal(tasks.Task.snapshot(task, max_pv), former_snapshot(task, max_pv))


def test_snapshot_of_few_played_moves():
    rng = np.random.default_rng(7)
    for played in range(4):
        task = random_task(rng, 9, 1, "shrunk", moves_owner=False)
        task.score_n[:] = 0.0
        task.score_n[rng.choice(82, played, replace=False)] = 10.0
        task.job.tree.children_visits[0] = 0.0 if played == 0 else task.job.tree.children_visits[0]
        assert_snapshots_equal(tasks.Task.snapshot(task, 40), former_snapshot(task, 40))


@pytest.mark.filterwarnings("ignore:overflow")
@pytest.mark.parametrize("perspective", ["BLACK", "WHITE", "SIDETOMOVE"])
def test_move_infos_equal_former(perspective):
    rng = np.random.default_rng(len(perspective))
    for trial in range(40):
        size = int(rng.choice([5, 9, 19]))
        task = random_task(rng, size, int(rng.choice([1, 3])), "shrunk", moves_owner=False)
        snap = former_snapshot(task, 40)
        snap.to_play = int(rng.choice([BLACK, WHITE]))
        if trial % 4 == 1:
            snap.score_stdev = None
        if trial % 4 == 2:  # extreme values: infinities and NaN in every column
            for column in (snap.score, snap.values, snap.prior):
                column[rng.random(len(column)) < 0.1] = np.inf
                column[rng.random(len(column)) < 0.1] = -np.inf
                column[rng.random(len(column)) < 0.1] = np.nan
        assert responses.move_infos(snap, perspective) == former_move_infos(snap, perspective)
