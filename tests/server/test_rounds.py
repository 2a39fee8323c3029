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


def _answers(monkeypatch, path: str) -> list:
    """Every answer of two clients' queries (three analysed turns, and one turn) on a server of instant
    playouts, its leaves selected by ``path``: "batch" (all searches of a wave in one compiled call,
    ``compiled_round``), "step" (one compiled ``RoundStep`` per search) or "select_leaves"
    (``TreeSearch.select_leaves``); on the compiled paths every task's tree is checked after each backup
    (consistent, rooted at its own position, the only tree in its storage)."""
    import numpy as np

    from jaxgo.go.rules import hash_key
    from jaxgo.server import rounds
    from jaxgo.server.tasks import Task

    seen_storage = {}

    def check(task) -> None:
        tree = task.job.tree
        tree.check_consistency()
        assert int(tree.hashes[tree.root]) == int(hash_key(np.asarray(task.game.state.hash)))
        owner = seen_storage.get(id(tree.children_visits))
        assert owner is None or owner is task or owner.job is None, "two live tasks share tree storage"
        seen_storage[id(tree.children_visits)] = task

    backup_wave, backup = rounds.DeviceRounds._backup, rounds.backup_task
    if path == "batch":
        def checked_wave(self, selected, results):
            backup_wave(self, selected, results)
            assert all(task.slots is not None for task, _, _ in selected)
            for task, _, _ in selected:
                if task.job is not None:
                    check(task)

        monkeypatch.setattr(rounds.DeviceRounds, "_backup", checked_wave)
    elif path == "step":
        def checked(task, rows, results):
            outcome = backup(task, rows, results)
            check(task)
            return outcome

        monkeypatch.setattr(rounds, "backup_task", checked)
    else:
        monkeypatch.setattr(Task, "select_leaves", lambda task: task.searcher.select_leaves(task.job))
    search = SearchConfig(playout_policy="light", leaves_per_batch=16, playouts_per_leaf=2)
    engine = AnalysisEngine(EngineConfig(search=search, max_boards=64, buckets=(32, 64), tree_memory_mb=64,
                                         compiled_rounds=path == "batch"),
                            make_evaluator=InstantPlayouts)
    one, two = LocalConnection(engine), LocalConnection(engine)
    base = {"rules": "chinese", "komi": 7.5, "boardXSize": 7, "boardYSize": 7, "maxVisits": 200,
            "includeOwnership": True}
    first = one.query({**base, "id": "a", "moves": [["B", "D4"], ["W", "C3"]], "analyzeTurns": [0, 1, 2]})
    second = two.query({**base, "id": "b", "moves": [["B", "E5"]], "komi": 5.5, "includeMovesOwnership": True,
                        "includePVVisits": True})
    engine.start()  # both queries queued first: the rounds (and so the rows of each call) do not depend on timing
    answers = sorted(first.results(timeout=120), key=lambda r: r["turnNumber"]) + second.results(timeout=120)
    one.close()
    two.close()
    assert engine.stop(wait=False, timeout=60)
    return answers


def test_compiled_rounds_answer_as_the_select_leaves_path(monkeypatch):
    """The three paths give the same answers, bit for bit: searches of different positions and komi in one
    compiled call see only their own rows."""
    batch = _answers(monkeypatch, "batch")
    monkeypatch.undo()
    assert len(batch) == 4 and all(a["rootInfo"]["visits"] == 200 for a in batch)
    step = _answers(monkeypatch, "step")
    monkeypatch.undo()
    assert batch == step
    assert batch == _answers(monkeypatch, "select_leaves")


def test_the_device_batch_has_the_trees_fields():
    """``rounds.staged_fields``: the shapes and dtypes of a tree's node positions, so that leaves are copied
    into the device batch as they are."""
    from jaxgo.go.game import new_game
    from jaxgo.search.limits import SearchLimits
    from jaxgo.search.searcher import Searcher
    from jaxgo.server.rounds import staged_fields

    for size in (5, 9):
        game = new_game(size=size)
        tree = Searcher(game.rules, SearchConfig(backend="native")).start_tree_search(game, SearchLimits()).tree
        fields = staged_fields(size * size)
        assert list(fields) == list(tree.states)
        for name, (shape, dtype) in fields.items():
            assert tree.states[name].shape[1:] == shape and tree.states[name].dtype == dtype, name
