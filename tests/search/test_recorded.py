"""Seeded searches against results recorded before a refactor (tests/fixtures/search_recorded.json).

Each case searches a 9x9 position after a short opening with the native playouts on a playout budget, plays the
chosen move and searches again (tree reuse): the chosen moves, principal variations, win rates and the visits of
every root child must stay exactly as recorded.  Native playouts give the same results for any number of threads.
A change of the search, of its limits or of the playouts shows here; when such a change is meant, record anew:

    JAX_PLATFORMS=cpu .venv/bin/python tests/search/test_recorded.py
"""

from __future__ import annotations

import json
import os
import pathlib

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import gtp_to_point  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.limits import SearchLimits  # noqa: E402
from jaxgo.search.searcher import Searcher  # noqa: E402

FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "search_recorded.json"
OPENING = ["E5", "C4", "G6", "D7"]
LIGHT = dict(playout_policy="light", bias_c2=0.0, prior_pattern=0.0, late_playout_policy=None)
# name: (SearchConfig fields, playouts per search, search limits)
CASES = {
    "uct": (dict(strategy="uct", **LIGHT), 512, {}),
    "rave_default": ({}, 512, {}),
    "rave_light": (dict(playout_policy="light", leaves_per_batch=8), 512, {}),
    "mc": (dict(strategy="mc", playout_policy="light"), 600, {}),
    "amaf": (dict(strategy="amaf", playout_policy="light"), 600, {}),
    "pp": (dict(strategy="pp", playout_policy="light", pp_min_samples=16), 1500, {}),
    "depth2": (dict(strategy="depth2", playout_policy="light"), 1000, {}),
    "rave_forbid_pass": (dict(playout_policy="light"), 256, {"forbid_pass": True}),
    "rave_max_nodes": (dict(playout_policy="light", leaves_per_batch=8), 512, {"max_nodes": 30}),
}


def run_case(fields: dict, playouts: int, limits: dict) -> list[dict]:
    """Two searches (seed 7) of the position after ``OPENING`` and after the first search's move."""
    game = new_game(size=9, komi=7.5)
    for i, move in enumerate(OPENING):
        game.play(1 if i % 2 == 0 else -1, gtp_to_point(move, 9))
    searcher = Searcher(game.rules, SearchConfig(backend="native", **fields), seed=7)
    results = []
    for _ in range(2):
        result = searcher.search(game, SearchLimits(playouts=playouts, **limits))
        results.append(dict(move=int(result.move), playouts=int(result.playouts), pv=[int(m) for m in result.pv[:4]],
                            visits=[round(float(v), 6) for v in result.visits],
                            win_rate=round(float(result.win_rate), 6)))
        game.play(game.to_play, result.move)
    return results


@pytest.mark.parametrize("name", sorted(CASES))
def test_search_matches_recording(name):
    recorded = json.loads(FIXTURE.read_text())[name]
    assert run_case(*CASES[name]) == recorded


if __name__ == "__main__":
    cases = [f'  "{name}": {json.dumps(run_case(*case), separators=(",", ":"))}' for name, case in CASES.items()]
    FIXTURE.write_text("{\n" + ",\n".join(cases) + "\n}\n")
    print(f"recorded {len(cases)} cases in {FIXTURE}")
