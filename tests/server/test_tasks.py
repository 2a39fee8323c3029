"""Scheduling rules over tasks (fair order) and the tree memory arithmetic (no device work)."""

import threading
import types

import numpy as np

from jaxgo.go.game import new_game
from jaxgo.server import protocol
from jaxgo.server.tasks import fair_order, node_cap, tree_bytes_per_node


def fake_task(client, seq, priority=0):
    query = types.SimpleNamespace(turn_priority=lambda turn: priority)
    return types.SimpleNamespace(client=client, seq=seq, priority=priority, query=query, turn=0)


def test_fair_order_gives_each_client_a_turn_within_a_priority():
    a, b, c = (types.SimpleNamespace(closed=threading.Event()) for _ in range(3))
    tasks = [fake_task(a, s) for s in range(6)] + [fake_task(b, 6), fake_task(c, 7), fake_task(c, 8, priority=1)]
    order = fair_order(tasks, rotation=0)
    assert order[0].seq == 8  # higher priority first
    rest = [(t.client, t.seq) for t in order[1:]]
    assert rest[:3] == [(a, 0), (b, 6), (c, 7)]  # one task per client in turn ...
    assert [seq for client, seq in rest[3:]] == [1, 2, 3, 4, 5]  # ... then the big client's others in order
    rotated = fair_order(tasks, rotation=1)
    assert [t.client for t in rotated[1:4]] == [b, c, a]  # the first client of each turn rotates


def test_node_cap_fits_the_budget_and_tree_bytes_match_a_real_tree():
    from jaxgo.search.tree import STATE_FIELDS, Tree, stack_state

    for size in (5, 9, 19):
        game = new_game(size=size)
        tree = Tree(size * size + 1, capacity=64)
        state = stack_state(game.state, 1)
        tree.add_nodes({name: np.asarray(getattr(state, name)) for name in STATE_FIELDS}, np.array([-1], np.int32),
                       np.array([-1], np.int32))
        real = sum(getattr(tree, name).nbytes for name in Tree.ARRAYS) + sum(v.nbytes for v in tree.states.values())
        assert abs(tree_bytes_per_node(size) * 64 - real) <= 64 * 64  # within the 64-byte allowance per node
        budget = 512 * 2 ** 20
        cap = node_cap(size, budget, leaves=64)
        capacity = 1 << int(np.ceil(np.log2(cap + size * size + 1 + 64)))  # the tree's storage at the cap
        assert capacity * tree_bytes_per_node(size) <= budget
    assert node_cap(19, 1, leaves=64) == 362 + 128  # the floor: root children and two rounds of leaves


def test_katago_error_object_keeps_the_reason_apart():
    error = protocol.RequestError("Illegal move 3: C3", "moves", "q", "occupied")
    assert error.to_json() == {"error": "Illegal move 3: C3", "field": "moves", "id": "q", "reason": "occupied"}


def real_task(max_visits=500, max_time=None, leaves=8, lpl=4):
    from jaxgo.search.config import SearchConfig
    from jaxgo.server.tasks import QueryState, Task

    query = protocol.parse_request({"id": "q", "moves": [], "rules": "chinese", "boardXSize": 5, "boardYSize": 5,
                                    "maxVisits": max_visits, **({} if max_time is None else {"maxTime": max_time})})
    config = SearchConfig(leaves_per_batch=leaves, playouts_per_leaf=lpl)
    task = Task(client=None, query=query, turn=0, seq=0, group=QueryState(1), game=new_game(5), config=config,
                evaluator=None)
    task.job = types.SimpleNamespace(done=0, exhausted=False)
    return task


def test_max_time_counts_from_the_query_arrival():
    """KaTrain's maxTime 8 finished in 8.4-13 s: the clock started when the search first got the device."""
    task = real_task(max_visits=10 ** 7, max_time=8.0)
    task.job.done = 16
    task.started_at = task.arrived + 5.0  # served 5 s after it arrived
    assert not task.finished(task.arrived + 7.9)
    assert task.finished(task.arrived + 8.0)  # 8 s after arrival, only 3 s after its first round


def test_leaves_and_playouts_shrink_to_end_exactly_at_max_visits():
    task = real_task(max_visits=1, leaves=8, lpl=4)
    assert task.round_leaves() == 1 and task.playouts_per_leaf_now(1) == 1  # maxVisits 1: one playout
    task = real_task(max_visits=45, leaves=8, lpl=4)
    assert task.round_leaves() == 8 and task.playouts_per_leaf_now(8) == 4  # 32 of 45
    task.job.done = 32
    assert task.round_leaves() == 4 and task.playouts_per_leaf_now(4) == 3  # 13 left: 4 leaves x 3 = 12
    task.job.done = 44
    assert task.round_leaves() == 1 and task.playouts_per_leaf_now(1) == 1  # 1 left: 1
    task = real_task(max_visits=64, leaves=1024, lpl=256)
    assert task.round_leaves() == 1 and task.playouts_per_leaf_now(1) == 64  # not 1024 x 256


def test_score_statistics_per_root_move_match_numpy_over_the_playouts():
    from jaxgo.server.tasks import mean_and_stdev

    task = real_task()
    actions = 5 * 5 + 1
    task.score_sum, task.score_sq_sum, task.score_n = np.zeros(actions), np.zeros(actions), np.zeros(actions)
    task.owner_sum, task.owner_abs_sum = np.zeros(actions - 1), np.zeros(actions - 1)
    task.moves_owner_sum = np.zeros((actions, actions - 1))
    rng = np.random.default_rng(0)
    seen = {a: [] for a in range(actions)}
    owners, moves_owner = [], np.zeros((actions, actions - 1))
    for _ in range(3):  # three rounds of 6 leaves x 4 playouts (the last not backed up); -1: a leaf at the root
        roots = rng.choice([-1, 3, 7, 7, 12], size=6)
        final = rng.normal(2.0, 9.0, size=(8, 4)).round(1)  # the call's rows: this task's are 1 .. 6
        owner = rng.choice(np.array([-1, 0, 1], np.int8), size=(8, 4, actions - 1))
        task.job = types.SimpleNamespace(pending=types.SimpleNamespace(root_actions=lambda r=roots: r))
        task.accumulate(final, owner, slice(1, 7), 3)
        owners.append(owner[1:7, :3])
        for action, row, own in zip(roots, final[1:7, :3], owner[1:7, :3]):
            if action >= 0:
                seen[action].extend(row)
                moves_owner[action] += own.sum(axis=0)
    owners = np.concatenate(owners)
    np.testing.assert_array_equal(task.owner_sum, owners.sum(axis=(0, 1)))
    np.testing.assert_array_equal(task.owner_abs_sum, np.abs(owners).sum(axis=(0, 1)))
    np.testing.assert_array_equal(task.moves_owner_sum, moves_owner)
    assert task.owner_n == 3 * 6 * 3
    mean, stdev = mean_and_stdev(task.score_sum, task.score_sq_sum, task.score_n)
    for action in range(actions):
        if seen[action]:
            assert np.isclose(mean[action], np.mean(seen[action])) and np.isclose(stdev[action], np.std(seen[action]))
        else:
            assert np.isnan(mean[action]) and np.isnan(stdev[action])
    assert len(seen[7]) > 0 and stdev[7] > 1.0


def test_max_time_does_not_count_the_engines_warm_up():
    """The engine compiled for 30 s after the query arrived (its warm-up went from 2 to 32 s): that time is not the
    search's, so maxTime 8 ends 38 s after arrival, not 8 (issue 61: KaTrain's first query got 16 visits)."""
    task = real_task(max_visits=10 ** 7, max_time=8.0)
    task.job.done = 16
    task.warmup_mark = 2.0
    assert not task.finished(task.arrived + 37.9, warmup=32.0)
    assert task.finished(task.arrived + 38.0, warmup=32.0)


def test_fair_order_equals_the_former_sort_on_mixed_priorities_and_clients():
    import random
    import types

    def former(tasks, rotation):
        clients = {}
        for task in tasks:
            clients.setdefault(id(task.client), len(clients))
        count = max(1, len(clients))
        rank, keyed = {}, []
        for task in sorted(tasks, key=lambda t: t.seq):
            slot = (task.priority, id(task.client))
            index = rank.get(slot, 0)
            rank[slot] = index + 1
            keyed.append(((-task.priority, index, (clients[id(task.client)] - rotation) % count), task))
        keyed.sort(key=lambda item: item[0])
        return [task for _, task in keyed]

    rng = random.Random(3)
    owners = [object() for _ in range(6)]
    for rotation in range(8):
        tasks = [types.SimpleNamespace(seq=seq, client=rng.choice(owners), priority=rng.choice([0, 0, 1, -2]))
                 for seq in rng.sample(range(100), 40)]
        assert fair_order(tasks, rotation) == former(tasks, rotation)
