"""One analysed turn of a query (``Task``), its statistics and read-outs, and the scheduling rules over tasks.

A task is created when its query arrives (a game copy, a few small arrays) and *started* when the device thread
first selects leaves for it: then it gets its ``Searcher`` and tree.  ``fair_order`` decides which tasks a
round serves first (priority, then one task per client in turn, so one client's many turns cannot starve
another client), and ``EngineConfig.max_running_searches`` bounds how many trees exist at once.

Memory: a tree node holds the position and [A] arrays of child statistics (``tree_bytes_per_node``: about 4.8 KB
on 9x9 and 21 KB on 19x19).  ``node_cap`` turns the engine's tree memory budget into a node limit per search;
a search that reaches it goes on in the capped tree (``SearchLimits.max_nodes``: descents stop at the frontier) and
its client gets one warning.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import time

import numpy as np

from jaxgo.search.config import SearchConfig
from jaxgo.search.round_step import RoundStep
from jaxgo.server import compiled_snapshot, positions, responses, round_sums, score_estimate
from jaxgo.server.protocol import Query

STATE_BYTES_PER_POINT = 1 + 4 * 4  # stones int8, chain / lib_count / lib_sum / lib_sumsq int32 (tree.STATE_FIELDS)
CHILD_BYTES_PER_ACTION = 8 * 4 + 4 + 4 + 1  # visits, values, rave visits, rave values f64; prior f32; index i32; legal


def tree_bytes_per_node(size: int) -> int:
    """Bytes one search-tree node takes on a ``size`` board (its position and its [A] child arrays)."""
    points = size * size
    return points * STATE_BYTES_PER_POINT + (points + 1) * CHILD_BYTES_PER_ACTION + 64


def node_cap(size: int, budget_bytes: float, leaves: int) -> int:
    """Most nodes a search may hold within ``budget_bytes`` -- kept below a power of two, since the tree doubles
    its storage when full -- and never fewer than room for the root's children and two rounds of leaves."""
    actions = size * size + 1
    nodes = int(budget_bytes // tree_bytes_per_node(size))
    capacity = 1
    while capacity * 2 <= nodes:
        capacity *= 2
    return max(capacity - actions - leaves, actions + 2 * leaves)


def tree_capacity(max_nodes: int, leaves: int, most_nodes: int | None = None) -> int:
    """Rows of the storage of a tree capped at ``max_nodes``, or of ``most_nodes`` when the search can make no
    more (a node per leaf and the root's children): a power of two (so that one search's storage fits the next
    similar one's) that holds them, the up to ``leaves`` nodes a round may create past the cap (the root's
    children are always created) and the K more ``Tree.reserve`` asks for before each round."""
    need = min(max_nodes, most_nodes if most_nodes is not None else max_nodes) + 2 * leaves + 1
    capacity = 16
    while capacity < need:
        capacity *= 2
    return capacity


EMPTY_MOVES_OWNER = np.zeros((0, 0))  # ``compiled_snapshot.owner_means``' moves ownership when none is kept
SIZED_CONFIGS: dict = {}  # (id of a config, board size) -> (that config, its for_size): ``sized_config``


def sized_config(config: SearchConfig, size: int) -> SearchConfig:
    """``config.for_size(size)``, made once per config and size (``dataclasses.replace`` of a SearchConfig's
    hundred fields costs a task's start tens of microseconds under the GIL); the same config object each time."""
    key = (id(config), size)
    found = SIZED_CONFIGS.get(key)
    if found is None or found[0] is not config:
        if len(SIZED_CONFIGS) >= 256:
            SIZED_CONFIGS.clear()
        found = SIZED_CONFIGS[key] = (config, config.for_size(size))
    return found[1]


@dataclasses.dataclass
class QueryState:
    """Turns of one query still to be answered (the client's outstanding count drops when all are)."""

    left: int


@dataclasses.dataclass
class Task:
    """One analysed turn of one query: created on arrival, started (Searcher and tree) when first served."""

    client: object  # connection.Client
    query: Query
    turn: int
    seq: int
    group: QueryState
    game: object  # jaxgo.go.game.Game at this turn
    config: SearchConfig  # the server's search config with the query's overrideSettings
    evaluator: object  # shared by the tasks of one batch key
    searcher: object = None
    job: object = None
    step: object = None  # jaxgo.search.round_step.RoundStep: the compiled leaf selection (native tree backend)
    arena: object = None  # jaxgo.search.arena.TreeArena the tree's storage came from and goes back to
    slots: object = None  # jaxgo.search.round_batch.SearchSlots holding its arrays (compiled_round.CompiledRound)
    slot: int | None = None  # ... at this slot
    search_arrays: dict | None = None  # its slot's search and statistics arrays (round_batch.slot_arrays)
    slot_marks: tuple = ()  # (id of its tree's visits, id of its leaf buffers) when its slot was last set
    wave_constants: object = None  # compiled_round.WaveConstants: its slot's fixed per-search columns
    tree_capacity: int = 0
    terminated: bool = False
    cancelled: bool = False
    started_at: float | None = None
    last_report: float = 0.0
    capped: bool = False  # the tree reached its node cap (warned once)
    owner_sum: np.ndarray | None = None  # [P] summed final ownership (+1 Black)
    owner_abs_sum: np.ndarray | None = None  # [P] summed |ownership| (= squares: owners are -1, 0, +1)
    owner_n: int = 0
    score_sum: np.ndarray | None = None  # [A] summed final scores per root move
    score_sq_sum: np.ndarray | None = None  # [A] summed squares of the final scores per root move
    score_n: np.ndarray | None = None  # [A] playouts per root move
    moves_owner_sum: np.ndarray | None = None  # [A, P] summed ownership per root move (includeMovesOwnership)
    root_score_sum: float = 0.0
    depths: np.ndarray | None = None  # int [nodes] depth below the root (only with deep avoid/allowMoves)
    policy: np.ndarray | None = None  # [A] the gammas' move model at the root (includePolicy), computed once
    arrived: float = dataclasses.field(default_factory=time.perf_counter)  # maxTime counts from here ...
    score_estimate: str = "shrunk"  # how each root move's scoreLead is estimated (score_estimate.SCORE_ESTIMATES)
    warmup_mark: float = 0.0  # ... less the engine's warm-up (compiling) since then: its warmup_seconds on arrival

    @functools.cached_property
    def priority(self) -> int:
        return self.query.turn_priority(self.turn)

    @functools.cached_property
    def komi(self) -> float:
        return float(self.query.rules.komi)

    @functools.cached_property
    def max_playouts(self) -> int:
        """The search's playouts: ``maxVisits`` visits of ``SearchConfig.playouts_per_visit`` playouts each."""
        return self.query.max_visits * self.config.playouts_per_visit

    @property
    def started(self) -> bool:
        return self.job is not None

    @functools.cached_property
    def batch_key(self) -> tuple:
        """Tasks with equal keys share device calls: board size, playout policy (the one of the task's position,
        ``SearchConfig.playout_policy_at``), gammas and their temperature, playouts per leaf."""
        cfg = self.config
        return (self.query.size, self.evaluator.policy, cfg.gammas, cfg.playout_temperature, cfg.playouts_per_leaf)

    @property
    def live(self) -> bool:
        return not self.cancelled and not self.client.closed.is_set()

    # -- life cycle -------------------------------------------------------------------------------------------
    def start(self, seed: int, max_nodes: int, arena=None) -> None:
        """Create the Searcher and the tree (its storage from ``arena``, a ``jaxgo.search.arena.TreeArena``, at
        the capacity the node cap needs: it never grows), apply avoid/allowMoves at the root, allocate the
        statistics."""
        from jaxgo.search.budget import first_batch_size
        from jaxgo.search.limits import SearchLimits
        from jaxgo.search.searcher import Searcher
        from jaxgo.search.tree import state_specs

        self.searcher = Searcher(self.game.rules, sized_config(self.config, self.game.rules.size),
                                 evaluator=self.evaluator, seed=seed)
        limits, storage, leaves = SearchLimits(max_nodes=max_nodes), None, None
        if arena is not None:  # the root straight into the arena's storage (K as start_tree_search takes it)
            leaves = first_batch_size(self.searcher.config, limits.playouts, None, self.game.size)
            most = self.max_playouts // max(1, self.config.playouts_per_leaf) + self.query.size ** 2 + 1
            self.arena, self.tree_capacity = arena, tree_capacity(max_nodes, leaves, most)
            storage = arena.take(self.searcher.num_actions, self.tree_capacity, state_specs(self.game.state))
        self.job = self.searcher.start_tree_search(self.game, limits, leaves, storage)
        if self.searcher.tree_backend == "native":
            self.step = RoundStep(self.searcher, seed, pool=arena.buffers if arena is not None else None)
        self.started_at = self.last_report = time.perf_counter()
        actions = self.query.size ** 2 + 1
        self.owner_sum = np.zeros(actions - 1)
        self.owner_abs_sum = np.zeros(actions - 1)
        self.score_sum, self.score_sq_sum, self.score_n = np.zeros(actions), np.zeros(actions), np.zeros(actions)
        if self.query.include_moves_ownership:
            self.moves_owner_sum = np.zeros((actions, actions - 1))
        if self.query.restrictions:
            tree = self.job.tree
            self.depths = np.zeros(tree.capacity, np.int32)
            self._restrict(np.array([tree.root]))
            self.job.on_expand = self._restrict  # every other node when a descent first goes through it

    def cap_nodes(self, cap: int) -> bool:
        """Let the tree grow to at most ``cap`` nodes from now on (a tree already bigger keeps its nodes but grows
        no more); whether it is full."""
        if self.job.limits.max_nodes != cap:
            self.job.limits = dataclasses.replace(self.job.limits, max_nodes=cap)
        return self.job.tree.size >= cap

    def leave_slots(self) -> None:
        """Free the task's slot of the compiled rounds (``compiled_round``), on the thread that runs them."""
        if self.slots is not None:
            self.slots.release(self.slot)
            self.slots = self.slot = self.search_arrays = self.wave_constants = None

    def release(self) -> None:
        """Drop the tree and the statistics (the task is answered or cancelled): the memory goes back at once."""
        self.leave_slots()
        if self.step is not None:
            self.step.release()
        if self.arena is not None and self.job is not None:
            self.arena.give_back(self.job.tree, self.tree_capacity)
        self.searcher = self.job = self.game = self.step = self.arena = None
        self.owner_sum = self.owner_abs_sum = self.score_sum = self.score_sq_sum = self.score_n = None
        self.moves_owner_sum = None
        self.depths = None

    def select_leaves(self):
        """This round's leaves (``TreeSearch.select_leaves``, through the compiled ``RoundStep`` where there is
        one): their positions [K, ...], or None."""
        if self.step is not None:
            return self.step.select(self.job)
        return self.searcher.select_leaves(self.job)

    def finished(self, now: float, warmup: float = 0.0) -> bool:
        """maxVisits reached, maxTime spent, terminated, or nothing left to search at the root.  ``warmup``: the
        engine's warm-up seconds so far (``warmup_seconds``); the time it spent compiling since this task
        arrived does not count against maxTime (KataGo's maxTime counts the search)."""
        job = self.job
        if self.terminated:
            return True
        if job is None:
            return False
        if job.done >= self.max_playouts or job.exhausted:
            return True
        if self.query.max_time is None or job.done <= 0:
            return False
        return now - self.arrived - max(0.0, warmup - self.warmup_mark) >= self.query.max_time

    def round_leaves(self) -> int:
        """K for this round's ``select_leaves``: the search's K, or fewer near ``maxVisits`` (the largest power
        of two not above the leaves still needed, so a handful of shapes is compiled) -- ``maxVisits`` is a
        hard cap, as in KataGo."""
        k = self.config.leaves_per_batch
        remaining = self.max_playouts - self.job.done
        needed = -(-remaining // self.config.playouts_per_leaf)
        if needed >= k:
            return k
        power = 1
        while power * 2 <= needed:
            power *= 2
        return power

    def playouts_per_leaf_now(self, leaves: int) -> int:
        """Playouts of each of this round's ``leaves`` leaves to back up: L, or fewer so that the search ends
        at ``maxVisits`` exactly (the other playouts of the call are dropped); at least 1."""
        remaining = self.max_playouts - self.job.done
        return max(1, min(self.config.playouts_per_leaf, remaining // max(1, leaves)))

    def _restrict(self, nodes: np.ndarray) -> None:
        """Apply avoid/allowMoves to the searched moves of nodes int32 [n] (the root, then each node as it is
        expanded, its parent's depth known by then)."""
        tree, query = self.job.tree, self.query
        if len(self.depths) < tree.capacity:
            self.depths = np.concatenate([self.depths, np.zeros(tree.capacity - len(self.depths), np.int32)])
        parents = tree.parents[nodes]
        self.depths[nodes] = np.where(parents >= 0, self.depths[np.maximum(parents, 0)] + 1, 0)
        limit = positions.max_restricted_depth(query)
        for node in nodes[self.depths[nodes] < limit]:
            forbidden = positions.forbidden_actions(query, int(tree.to_play[node]), int(self.depths[node]),
                                                    tree.num_actions)
            if forbidden is not None:
                tree.children_legal[node] &= ~forbidden
        if tree.root in nodes and not tree.children_legal[tree.root].any():
            self.job.exhausted = True

    def accumulate(self, final: np.ndarray, owner: np.ndarray, rows: slice, cols: int) -> None:
        """Per-root-move score sums and ownership from this round's playouts: rows ``rows`` and the first ``cols``
        columns of final [T, L] and owner [T, L, P] (``round_sums.add_round``)."""
        count = rows.stop - rows.start
        moves = self.moves_owner_sum if self.moves_owner_sum is not None else np.zeros((0, 0))
        self.root_score_sum += round_sums.add_round(
            rows.start, count, cols, self.job.pending.root_actions(), final, owner, self.score_sum, self.score_sq_sum,
            self.score_n, self.owner_sum, self.owner_abs_sum, moves, self.moves_owner_sum is not None)
        self.owner_n += count * cols

    # -- read-outs --------------------------------------------------------------------------------------------
    def snapshot(self, max_pv_moves: int) -> responses.Snapshot:
        """What the search knows now, for ``responses.build_response``: its arrays in compiled calls
        (``compiled_snapshot``), equal to the former numpy code's bit for bit."""
        tree, query = self.job.tree, self.query
        root = tree.root
        scale = self.config.playouts_per_visit
        (legal, _, values, prior, root_rate, raw, score_stdev, score, shown, ranking, lines,
         lengths) = compiled_snapshot.snapshot_arrays(
            tree.children_index, tree.children_visits, tree.children_values, tree.children_legal,
            tree.children_prior, root, self.score_sum, self.score_sq_sum, self.score_n,
            self.score_estimate != "mean", scale, max_pv_moves, max(0, query.pv_len - 1))
        if self.score_estimate not in ("mean", "shrunk"):  # (calibrated: numpy's maps; anything else raises)
            where = score_estimate.Position(query.size, self.komi, self.turn)
            score = score_estimate.move_scores(self.score_estimate, raw, score_stdev, self.score_n, where)
            fallback = float(score_estimate.calibrated(
                self.score_estimate, self.root_score_sum / max(self.owner_n, 1), where))
        else:
            fallback = self.root_score_sum / max(self.owner_n, 1)
        pvs = {line[0]: line[:n] for line, n in zip(lines.tolist(), lengths.tolist())}
        owner = stdev = moves_owner = None
        if self.owner_n:  # (|owner| = owner ** 2: owners are -1, 0, +1)
            with_moves = self.moves_owner_sum is not None
            owner, stdev, moves_owner = compiled_snapshot.owner_means(
                self.owner_sum, self.owner_abs_sum, self.owner_n,
                self.moves_owner_sum if with_moves else EMPTY_MOVES_OWNER, self.score_n, with_moves)
            moves_owner = moves_owner if with_moves else None
        elif self.moves_owner_sum is not None:
            moves_owner = self.moves_owner_sum / np.maximum(self.score_n, 1)[:, None]
        return responses.Snapshot(
            size=query.size, to_play=int(tree.to_play[root]), visits=shown, values=values, score=score,
            score_stdev=score_stdev, prior=prior, legal=legal, pvs=pvs,
            root_visits=int(round(self.job.done / scale)), root_winrate=root_rate,
            root_score=compiled_snapshot.weighted_score(np.asarray(score, np.float64), shown, float(fallback)),
            ownership=owner, ownership_stdev=stdev, moves_ownership=moves_owner,
            pv_visits={a: [int(shown[a])] + self._pv_visits(pv)[1:] for a, pv in pvs.items()}
            if query.include_pv_visits else None,
            ranking=ranking)  # (the moves' order of the visits shown)

    def _pv_visits(self, pv: list) -> list:
        """Visits of each move of a principal variation that starts at the root."""
        tree = self.job.tree
        node, out = tree.root, []
        for action in pv:
            if node < 0:
                break
            out.append(int(round(tree.children_visits[node, action] / self.config.playouts_per_visit)))
            node = int(tree.children_index[node, action])
        return out


def visits_shown(playouts: np.ndarray, scale: int) -> np.ndarray:
    """float [A] visits reported for ``playouts`` float [A] through each move at ``scale`` playouts a visit: whole
    numbers adding up to round(total / scale) (largest remainders); a move left at 0 is not listed."""
    exact = np.asarray(playouts, np.float64) / scale
    shown = np.floor(exact)
    extra = int(round(exact.sum())) - int(shown.sum())
    if extra > 0:
        shown[np.argsort(-(exact - shown), kind="stable")[:extra]] += 1
    return shown


def fair_order(tasks: list, rotation: int = 0) -> list:
    """Tasks in service order: higher priority first; within a priority the clients take turns (each client's
    tasks in arrival order, the first client of each turn rotating with ``rotation``), so one client's
    thousand-turn query shares every round with the other clients' queries."""
    clients = {}
    for task in tasks:
        clients.setdefault(id(task.client), len(clients))
    count = max(1, len(clients))
    rank = {}
    keyed = []
    for task in sorted(tasks, key=operator.attrgetter("seq")):
        client = id(task.client)
        priority = task.priority
        slot = (priority, client)
        index = rank.get(slot, 0)
        rank[slot] = index + 1
        keyed.append((-priority, index, (clients[client] - rotation) % count, task))
    keyed.sort(key=operator.itemgetter(0, 1, 2))  # (stable: equal keys keep the arrival order)
    return [item[3] for item in keyed]


def mean_and_stdev(sums: np.ndarray, square_sums: np.ndarray, count) -> tuple:
    """(mean, standard deviation) float [...] of samples given by their sums, sums of squares and counts (an
    array [...] or one count for all): the final scores per root move, the final owner per point; NaN where the
    count is 0."""
    played = np.asarray(count) > 0
    n = np.maximum(count, 1)
    mean = np.where(played, sums / n, np.nan)
    spread = np.sqrt(np.maximum(square_sums / n - np.where(played, mean, 0.0) ** 2, 0.0))
    return mean, np.where(played, spread, np.nan)
