"""The device rounds: what a fresh server's compiling costs a query's maxTime (issue 61)."""

import time

from jaxgo.search.config import SearchConfig
from jaxgo.server.bench import InstantPlayouts
from jaxgo.server.client import LocalConnection
from jaxgo.server.engine import AnalysisEngine
from jaxgo.server.engine_config import EngineConfig

COMPILE_SECONDS = 4.0


class CompilingPlayouts(InstantPlayouts):
    """Playouts that cost nothing, except the first call of each shape, which takes ``COMPILE_SECONDS`` (as a
    fresh server's first 19x19 call compiles for tens of seconds)."""

    shapes: set = set()  # shared by every task's instance, as the real playouts' compiled code is

    def dispatch(self, states, key, playouts_per_state, komi=0.0, last_moves=None, active=None):
        shape = (int(states.stones.shape[0]), playouts_per_state)
        if shape not in self.shapes:
            self.shapes.add(shape)
            time.sleep(COMPILE_SECONDS)
        return super().dispatch(states, key, playouts_per_state, komi, last_moves, active)


def test_the_first_query_is_not_starved_by_the_warm_up():
    """maxTime 2 on a fresh server whose first device call compiles for 4 s: the query still gets all its 64
    visits (8 leaves x 4 playouts a round), as the second identical query does; before, the first round's
    compiling used up maxTime and the answer had 32 visits."""
    CompilingPlayouts.shapes = set()
    search = SearchConfig(playout_policy="light", leaves_per_batch=8, playouts_per_leaf=4)
    engine = AnalysisEngine(EngineConfig(search=search, max_boards=64, buckets=(64,)),
                            make_evaluator=CompilingPlayouts).start()
    conn = LocalConnection(engine)
    query = {"id": "q", "moves": [], "rules": "chinese", "komi": 7.5, "boardXSize": 5, "boardYSize": 5,
             "maxVisits": 64, "maxTime": 2.0}
    first = conn.query(query).results(timeout=120)[0]
    second = conn.query(dict(query, id="r")).results(timeout=120)[0]
    conn.close()
    assert engine.stop(wait=False, timeout=60)
    assert engine.warmup_seconds >= COMPILE_SECONDS
    assert first["rootInfo"]["visits"] == second["rootInfo"]["visits"] == 64
