"""``jaxgo.server.responses.move_infos`` with its columns rounded together: the same lines as the former code."""

import dataclasses

import numpy as np

from jaxgo.go.coords import BLACK, WHITE
from jaxgo.search.tree import finite_values, rank_actions
from jaxgo.server import responses


def rounded(values, digits: int = 6) -> list:
    """``responses.rounded`` until 2026-12-08: float [n] -> a list of floats rounded to ``digits`` (NaN/inf as 0)."""
    array = np.asarray(values, np.float64)
    return np.where(np.isfinite(array), np.round(array, digits), 0.0).tolist()


def former_move_infos(snap, perspective: str = "BLACK") -> list[dict]:
    """``responses.move_infos`` until 2026-12-07 (each column rounded on its own, ``np.nan_to_num``)."""
    flip_rate = responses._flip(snap.to_play, perspective)
    score_sign = -1.0 if (perspective == "WHITE" or (perspective == "SIDETOMOVE" and snap.to_play == WHITE)) else 1.0
    visits = np.asarray(snap.visits, np.float64)
    visited = (visits > 0) & np.asarray(snap.legal)
    values = np.nan_to_num(np.asarray(snap.values, np.float64), nan=-1.0)
    ranked = np.lexsort((np.arange(len(visits)), -values, -visits))
    order = ranked[visited[ranked]]
    names = responses.gtp_names(snap.size)
    n = visits[order]
    own_rate = np.nan_to_num(np.asarray(snap.values, np.float64), nan=0.0)[order]
    lcb = own_rate - 1.96 * np.sqrt(np.maximum(own_rate * (1 - own_rate), 1e-4) / n)
    rate = 1.0 - own_rate if flip_rate else own_rate
    lcb = 1.0 - lcb if flip_rate else lcb
    lead = rounded(score_sign * np.nan_to_num(np.asarray(snap.score, np.float64))[order], 3)
    columns = {"move": [names[a] for a in order.tolist()], "visits": np.rint(n).astype(np.int64).tolist(),
               "winrate": rounded(rate), "scoreLead": lead, "scoreMean": lead,
               "prior": rounded(np.asarray(snap.prior, np.float64)[order]),
               "lcb": rounded(lcb), "utility": rounded(2 * rate - 1),
               "order": list(range(len(order))),
               "pv": [list(map(names.__getitem__, snap.pvs.get(a, (a,)))) for a in order.tolist()]}
    if snap.score_stdev is not None:
        columns["scoreStdev"] = rounded(
            np.nan_to_num(np.asarray(snap.score_stdev, np.float64))[order], 3)
    if snap.pv_visits is not None:
        columns["pvVisits"] = [list(map(int, snap.pv_visits.get(a, [v]))) for a, v in
                               zip(order.tolist(), columns["visits"])]
    if snap.moves_ownership is not None:
        owner_sign = -1.0 if responses._owner_flip(snap.to_play, perspective) else 1.0
        owners = np.asarray(snap.moves_ownership, np.float64)[order]
        columns["ownership"] = np.round(owner_sign * np.nan_to_num(owners, nan=0.0, posinf=0.0, neginf=0.0),
                                        4).tolist()
    keys = list(columns)
    return [dict(zip(keys, row)) for row in zip(*columns.values())]


def test_finite_values_are_nan_to_num():
    values = np.array([0.5, np.nan, np.inf, -np.inf, -0.0, 1e308, -3.25])
    for nan in (0.0, -1.0):
        assert np.array_equal(finite_values(values, nan), np.nan_to_num(values, nan=nan))
    visits = np.array([3.0, 3.0, 0.0, 3.0, 1.0, 3.0, 2.0])
    former = np.lexsort((np.arange(7), -np.nan_to_num(values, nan=-1.0), -visits))
    assert np.array_equal(rank_actions(visits, values), former)


def test_move_infos_equal_the_former_code():
    rng = np.random.default_rng(11)
    for trial in range(60):
        size = int(rng.choice([5, 9]))
        actions = size * size + 1
        visits = np.where(rng.random(actions) < 0.6, rng.integers(0, 40, actions), 0).astype(np.float64)
        visits[rng.integers(0, actions)] = visits.max() if trial % 5 == 0 else visits[0]  # ties
        values = np.where(visits > 0, rng.random(actions), np.nan)
        score = np.where(visits > 0, rng.normal(0, 10, actions), np.nan)
        legal = rng.random(actions) < 0.9
        if trial % 7 == 0:
            visits[:] = 0.0  # no move visited
        pvs = {int(a): [int(a)] + rng.integers(0, actions, int(rng.integers(0, 4))).tolist()
               for a in np.flatnonzero(visits)[:5]}
        snap = responses.Snapshot(
            size=size, to_play=int(rng.choice([BLACK, WHITE])), visits=visits, values=values, score=score,
            prior=np.where(legal, rng.random(actions), 0.0), legal=legal, pvs=pvs, root_visits=int(visits.sum()),
            root_winrate=0.5, root_score=0.0,
            score_stdev=np.where(visits > 1, rng.random(actions) * 20, np.nan) if trial % 2 else None,
            pv_visits={a: rng.integers(0, 9, len(pv)).tolist() for a, pv in pvs.items()} if trial % 3 == 1 else None,
            moves_ownership=rng.normal(0, 1, (actions, size * size)) if trial % 4 == 1 else None)
        ranked = dataclasses.replace(snap, ranking=rank_actions(visits, values))  # (as Task.snapshot gives it)
        for perspective in ("BLACK", "WHITE", "SIDETOMOVE"):
            new, former = responses.move_infos(snap, perspective), former_move_infos(snap, perspective)
            assert [list(info.items()) for info in new] == [list(info.items()) for info in former]  # key order too
            assert responses.move_infos(ranked, perspective) == new
