"""Each root move's scoreLead: the shrunk and calibrated estimates against the raw playout mean
(jaxgo.server.score_estimate)."""

import numpy as np
import pytest

from jaxgo.learn import score_model
from jaxgo.search.config import SearchConfig
from jaxgo.server import score_estimate
from jaxgo.server.client import LocalConnection
from jaxgo.server.engine import AnalysisEngine
from jaxgo.server.engine_config import EngineConfig
from jaxgo.server.score_estimate import move_scores, root_score, shrunk_means

TIMEOUT = 240


def test_shrunk_means_are_closer_to_the_true_means_than_the_raw_ones():
    """Ten moves of true worth around 0 (spread 3 points), playouts of spread 67 (19x19), visits 10-200: over 400
    seeded searches the shrunk means' error is far below the raw means', and most for the least visited moves."""
    rng = np.random.default_rng(0)
    counts = np.array([200, 100, 60, 40, 30, 20, 20, 10, 10, 10], float)
    raw_err, shrunk_err = np.zeros(len(counts)), np.zeros(len(counts))
    for _ in range(400):
        truth = rng.normal(0.0, 3.0, len(counts))
        mean = truth + rng.normal(0.0, 67.0, len(counts)) / np.sqrt(counts)
        stdev = np.full(len(counts), 67.0)
        raw_err += np.square(mean - truth)
        shrunk_err += np.square(shrunk_means(mean, stdev, counts) - truth)
    assert shrunk_err.sum() < 0.2 * raw_err.sum()
    assert shrunk_err[-1] < 0.1 * raw_err[-1]


def test_shrinking_keeps_unplayed_moves_and_a_clear_difference():
    nan = np.nan
    mean = np.array([10.0, -10.0, nan, 0.0])
    stdev = np.array([5.0, 5.0, nan, 5.0])
    counts = np.array([400.0, 400.0, 0.0, 400.0])
    out = shrunk_means(mean, stdev, counts)  # 20 points apart with 0.25 of sampling error: kept
    assert np.isnan(out[2]) and np.allclose(out[[0, 1, 3]], [10.0, -10.0, 0.0], atol=0.01)
    assert np.array_equal(move_scores("mean", mean, stdev, counts), mean, equal_nan=True)
    assert shrunk_means(np.array([3.0, nan]), np.array([9.0, nan]), np.array([5.0, 0.0]))[0] == 3.0  # one move
    assert root_score(out, counts, fallback=99.0) == pytest.approx(0.0, abs=0.01)
    assert root_score(np.array([nan]), np.array([0.0]), fallback=99.0) == 99.0
    with pytest.raises(ValueError, match="score estimate"):
        move_scores("median", mean, stdev, counts)


def answers(estimate: str, seeds, moves=()):
    """Final answers to the same 9x9 query on engines seeded ``seeds`` (light playouts, 256 visits)."""
    search = SearchConfig(playout_policy="light", leaves_per_batch=8, playouts_per_leaf=4)
    out = []
    for seed in seeds:
        engine = AnalysisEngine(EngineConfig(search=search, max_boards=64, buckets=(64,), seed=seed,
                                             score_estimate=estimate)).start()
        conn = LocalConnection(engine)
        query = {"id": "q", "moves": [list(m) for m in moves], "rules": "chinese", "komi": 7.5,
                 "boardXSize": 9, "boardYSize": 9, "maxVisits": 256}
        out.append(conn.query(query).results(timeout=TIMEOUT)[0])
        conn.close()
        assert engine.stop(wait=False, timeout=60)
    return out


def test_the_shrunk_estimate_varies_less_over_seeds_than_the_raw_mean():
    """The same position (9x9, after B E5 W C3) searched with six seeds: the score estimate does not steer the
    search, so both estimates see the same playouts; the moves' scoreLead spreads less over the seeds shrunk,
    and the answers have the same fields."""
    seeds = range(6)
    moves = [("B", "E5"), ("W", "C3")]
    raw, shrunk = answers("mean", seeds, moves), answers("shrunk", seeds, moves)
    assert [a["rootInfo"]["visits"] for a in raw] == [a["rootInfo"]["visits"] for a in shrunk] == [256] * 6
    for a, b in zip(raw, shrunk):
        assert a.keys() == b.keys() and a["rootInfo"].keys() == b["rootInfo"].keys()
        assert [m.keys() for m in a["moveInfos"]] == [m.keys() for m in b["moveInfos"]]
        assert [(m["move"], m["visits"]) for m in a["moveInfos"]] == [(m["move"], m["visits"]) for m in b["moveInfos"]]
    spread = {}
    for name, runs in (("raw", raw), ("shrunk", shrunk)):
        per_move = {}
        for answer in runs:
            for info in answer["moveInfos"]:
                per_move.setdefault(info["move"], []).append(info["scoreLead"])
        spread[name] = np.mean([np.var(v) for v in per_move.values() if len(v) >= 3])
    assert spread["shrunk"] < 0.5 * spread["raw"]
    for answer in shrunk:  # the root's scoreLead is the visit-weighted mean of its moves'
        infos = answer["moveInfos"]
        weighted = sum(m["visits"] * m["scoreLead"] for m in infos) / sum(m["visits"] for m in infos)
        assert answer["rootInfo"]["scoreLead"] == pytest.approx(weighted, abs=0.01)


def test_a_visit_is_playouts_per_visit_playouts():
    """overrideSettings playouts_per_visit 4 and maxVisits 64 on 9x9: 256 playouts, reported as 64 visits at the
    root, each listed move at least one visit, the moves' visits adding up to the root's, the
    fields those of a one-playout visit's answer."""
    search = SearchConfig(playout_policy="light", leaves_per_batch=8, playouts_per_leaf=4)
    engine = AnalysisEngine(EngineConfig(search=search, max_boards=64, buckets=(64,))).start()
    conn = LocalConnection(engine)
    query = {"id": "q", "moves": [["B", "E5"]], "rules": "chinese", "komi": 7.5, "boardXSize": 9, "boardYSize": 9,
             "maxVisits": 64, "includePVVisits": True}
    scaled = conn.query(dict(query, overrideSettings={"playouts_per_visit": 4})).results(timeout=TIMEOUT)[0]
    plain = conn.query(query).results(timeout=TIMEOUT)[0]
    conn.close()
    assert engine.stop(wait=False, timeout=60)
    assert engine.playouts == 4 * 64 + 64
    assert scaled["rootInfo"]["visits"] == plain["rootInfo"]["visits"] == 64
    infos = scaled["moveInfos"]
    assert all(m["visits"] >= 1 and m["pvVisits"][0] == m["visits"] for m in infos)
    assert sum(m["visits"] for m in infos) == 64
    assert scaled.keys() == plain.keys() and infos[0].keys() == plain["moveInfos"][0].keys()


def test_visits_shown_are_whole_and_add_up():
    from jaxgo.server.tasks import visits_shown

    shown = visits_shown(np.array([21.0, 7.0, 6.0, 3.0, 2.0, 1.0, 0.0]), 8)  # 40 playouts: 5 visits
    assert shown.tolist() == [3.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]


def test_the_calibrated_estimate_maps_the_shrunk_one_and_varies_less(monkeypatch):
    """The calibration with a slope under 1 (parameters for 9x9 put in place of the shipped ones) on the same
    position and seeds as the shrunk estimate: each lead is exactly the calibration of the shrunk one, so it
    varies less over the seeds; the fields keep their shape and the root stays the visit-weighted mean."""
    params = {"intercept": [2.0, 0.5], "slope": [0.5, 0.1], "sigma": 10.0}
    monkeypatch.setattr(score_estimate, "shipped_parameters", lambda: {9: params})
    seeds, moves = range(4), [("B", "E5"), ("W", "C3")]
    shrunk, calibrated = answers("shrunk", seeds, moves), answers("calibrated", seeds, moves)
    for a, b in zip(shrunk, calibrated):
        assert a.keys() == b.keys() and a["rootInfo"].keys() == b["rootInfo"].keys()
        assert [m.keys() for m in a["moveInfos"]] == [m.keys() for m in b["moveInfos"]]
        assert [(m["move"], m["visits"]) for m in a["moveInfos"]] == [(m["move"], m["visits"]) for m in b["moveInfos"]]
        want = score_model.calibrate(params, a["rootInfo"]["scoreLead"], 7.5, 2)
        assert b["rootInfo"]["scoreLead"] == pytest.approx(float(want), abs=0.01)
        infos = b["moveInfos"]
        weighted = sum(m["visits"] * m["scoreLead"] for m in infos) / sum(m["visits"] for m in infos)
        assert b["rootInfo"]["scoreLead"] == pytest.approx(weighted, abs=0.01)
    root = {name: np.var([x["rootInfo"]["scoreLead"] for x in runs])
            for name, runs in (("shrunk", shrunk), ("calibrated", calibrated))}
    assert root["calibrated"] < root["shrunk"]


def test_sizes_without_shipped_parameters_are_left_shrunk():
    nan = np.nan
    mean, stdev, counts = np.array([1.0, 5.0, nan]), np.array([9.0, 9.0, nan]), np.array([40.0, 60.0, 0.0])
    where = score_estimate.Position(size=7, komi=7.5, move_number=3)
    assert 7 not in score_estimate.shipped_parameters()
    assert np.allclose(move_scores("calibrated", mean, stdev, counts, where), shrunk_means(mean, stdev, counts),
                       equal_nan=True)
    assert 19 in score_estimate.shipped_parameters()  # the shipped file has 19x19's
