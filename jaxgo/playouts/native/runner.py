"""Batches of native playouts: S start positions x L playouts each, spread over threads that run compiled
code without the GIL.

``play_batch(policy, stones, to_play, ko, passes, last_moves, playouts_per_state, seed, tables, threads)``
returns the raw results (area score before komi, ownership, first colours, moves) in position-major order,
playout ``j`` of position ``s`` at row ``s * L + j``.  Every playout draws from its own random stream seeded by
(seed, row), so the results do not depend on the number of threads.

``lgrf_heavy`` (``REPLY_POLICIES``) is the heavy policy with the last good replies of Baier & Drake (2010,
LGRF-1): a table of one reply per colour and previous point, read by every playout of a batch
(``heavy.stored_reply``: the reply is played instead of a draw whenever the heavy policy allows it) and learnt
after the batch, playout by playout in row order (``learn_replies``: the winner's replies are stored, the
loser's forgotten), so a batch's results still do not depend on the number of threads, and the next batch
plays with what this one learnt.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import os
import threading

import numpy as np

from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import heavy as nw
from jaxgo.playouts.native import ladder
from jaxgo.playouts.native import light as nl
from jaxgo.playouts.native import rules as rule_playouts
from jaxgo.playouts.native.random import stream_seed

jit = nb.jit

LIGHT, HEAVY, RULES = 0, 1, 2  # policy kinds of ``run_jobs`` (HEAVY - 1 and RULES - 1 are features' kinds)
# The native-only policies that read ladders: name -> (the policy they extend, positions per read, whether
# they also defend two-liberty chains).
LADDER_POLICIES = {"ladder_rules": ("safe_rules", 50, False), "ladder_heavy": ("heavy", 50, False),
                   "ladder2_heavy": ("heavy", 50, True), "local_rules": ("safe_rules", 50, False),
                   "local_heavy": ("heavy", 50, False)}
# The ladder policies that look next to the last move first (``jaxgo.playouts.native.local``).
LOCAL_POLICIES = ("local_rules", "local_heavy")
# The native-only policies with last-good-reply tables: name -> the policy whose draws they replace.
REPLY_POLICIES = {"lgrf_heavy": "heavy"}
NO_REPLIES = np.full((0, 0), -1, np.int32)  # ``replies`` of the policies that keep none


@dataclasses.dataclass(frozen=True)
class PolicyArrays:
    """What the compiled loop needs of a policy on one board size (numpy arrays; zeros where unused)."""

    kind: int  # LIGHT, HEAVY or RULES
    tables: np.ndarray  # float64 [features.TABLE_SIZE]
    dist1: np.ndarray  # float32 [P + 1, PP] (heavy) or [1, 1]
    dist2: np.ndarray


@jit(nrt=True)
def run_jobs(kind, stones, to_play, ko, passes, last_moves, per_state, lo, hi, seed, max_moves, tables, lines,
             dist1, dist2, plain_of, replies, out_score, out_owner, out_first, out_moves, out_trace):
    """Playouts ``lo .. hi - 1`` of a batch (row j: position j // per_state); see ``play_batch``.  out_trace:
    int16 [S * L, M] receives every playout's first M moves as board indices (N * N = pass, -1 after the
    end), or is [0, 0]; replies int32 [2, PP] (heavy: ``heavy.stored_reply``) or [0, 0]."""
    size = int(np.sqrt(stones.shape[1]) + 0.5)
    w = size + 2
    pp = w * w
    exact = kind != LIGHT
    start_st, start_g = nb.new_board(size)
    st, g = nb.new_board(size)
    start_base = np.zeros((2, pp), np.float64)
    start_flags = np.zeros((2, pp), np.int8)
    base = np.zeros((2, pp), np.float64)
    flags = np.zeros((2, pp), np.int8)
    work = nw.new_work(pp, w)
    first = np.zeros(pp, np.int8)
    owner = np.zeros(size * size, np.int8)
    trace = np.zeros(out_trace.shape[1], np.int32)
    atari = rule_playouts.new_atari_set(pp)
    scratch = np.zeros((4, 4 * pp), np.int32)
    ladders = ladder.new_ladder_work(pp, int(tables[ft.LADDER]))
    current = -1
    for j in range(lo, hi):
        s = j // per_state
        if s != current:
            current = s
            nb.set_position(start_st, start_g, stones[s], to_play[s], ko[s], passes[s], last_moves[s, 0],
                            last_moves[s, 1], exact)
            if kind == HEAVY:
                nw.fill_base(start_st, start_g, start_base, start_flags, kind - 1, tables, lines)
        nb.copy_board(start_st, start_g, st, g)
        first[:] = 0
        rng = stream_seed(seed, j)
        if kind == LIGHT:
            moves, rng = nl.light_playout(st, g, rng, max_moves, first, False, trace)
        elif kind == RULES:
            moves, rng = rule_playouts.tiered_playout(st, g, tables, lines, rng, max_moves, first, trace, atari,
                                                      scratch, ladders)
        else:
            base[:, :] = start_base
            flags[:, :] = start_flags
            moves, rng = nw.weighted_playout(st, g, base, flags, kind - 1, tables, lines, dist1, dist2, plain_of,
                                             rng, max_moves, first, work, trace, ladders, replies, scratch[0])
        out_score[j] = nb.area_owner(st, g, owner)
        out_owner[j, :] = owner
        for i in range(size * size):
            f = first[(i // size + 1) * w + i % size + 1]
            out_first[j, i] = 1 if f == nb.BLACK else (-1 if f == nb.WHITE else 0)
        out_moves[j] = moves
        if out_trace.shape[0] > 0:
            for i in range(out_trace.shape[1]):
                m = trace[i]
                out_trace[j, i] = -1 if i >= moves else (size * size if m == nb.PASS else plain_of[m])


@functools.lru_cache(maxsize=None)
def plain_index(size: int) -> np.ndarray:
    """int32 [PP]: board index of every padded point (-1 on the border)."""
    return np.asarray(nb.to_plain(np.arange((size + 2) ** 2), size), np.int32)


@functools.lru_cache(maxsize=None)
def _lines(size: int) -> np.ndarray:
    return ft.line_levels(size)


def default_threads() -> int:
    """Threads a batch is spread over by default: one per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


_pool_lock = threading.Lock()
_pools: dict[int, concurrent.futures.ThreadPoolExecutor] = {}


def _pool(threads: int) -> concurrent.futures.ThreadPoolExecutor:
    with _pool_lock:
        if threads not in _pools:
            _pools[threads] = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="jaxgo-playouts")
        return _pools[threads]


@dataclasses.dataclass(frozen=True)
class RawPlayouts:
    """Results of S * L native playouts (numpy), position-major."""

    score: np.ndarray  # float32 [S * L]: Black area - White area (no komi)
    ownership: np.ndarray  # int8 [S * L, P]
    first_colour: np.ndarray  # int8 [S * L, P]: 1 Black, -1 White, 0 none
    moves: np.ndarray  # int32 [S * L]
    trace: np.ndarray  # int16 [S * L, M]: the moves (N * N = pass, -1 after the end) when recorded, else [0, 0]


def play_batch(policy: PolicyArrays, stones, to_play, ko, passes, last_moves, playouts_per_state: int, seed: int,
               threads: int | None = None, record_moves: bool = False, replies: np.ndarray | None = None
               ) -> RawPlayouts:
    """L = ``playouts_per_state`` playouts from each of S positions: stones int8 [S, P] (1 Black, -1 White),
    to_play int [S] (1 / -1), ko int [S] (board index, -1 none), passes int [S], last_moves int [S, 2] (last
    move and the one before; P = pass, -1 = none).  Spread over ``threads`` threads (default: one per core);
    ``record_moves`` keeps every playout's moves (for tests); ``replies`` int32 [2, PP] (heavy policy only,
    ``new_replies``): the last good replies the playouts play, read only."""
    stones = np.ascontiguousarray(stones, np.int8)
    count, points = stones.shape
    size = int(round(points ** 0.5))
    total = count * playouts_per_state
    out = RawPlayouts(np.zeros(total, np.float32), np.zeros((total, points), np.int8),
                      np.zeros((total, points), np.int8), np.zeros(total, np.int32),
                      np.full((total, 3 * points) if record_moves else (0, 0), -1, np.int16))
    if total == 0:
        return out
    args = (np.ascontiguousarray(to_play, np.int32), np.ascontiguousarray(ko, np.int32),
            np.ascontiguousarray(passes, np.int32), np.ascontiguousarray(last_moves, np.int32).reshape(count, 2))
    threads = max(1, min(threads or default_threads(), total))
    bounds = [total * i // threads for i in range(threads + 1)]
    seed = int(seed) & 0x7FFFFFFFFFFFFFFF
    kept = NO_REPLIES if replies is None else replies

    def run(i):
        run_jobs(policy.kind, stones, *args, playouts_per_state, bounds[i], bounds[i + 1], seed, 3 * points,
                 policy.tables, _lines(size), policy.dist1, policy.dist2, plain_index(size), kept, out.score,
                 out.ownership, out.first_colour, out.moves, out.trace)

    if threads == 1:
        run(0)
    else:
        list(_pool(threads).map(run, range(threads)))
    return out


def new_replies(size: int) -> np.ndarray:
    """int32 [2, PP]: an empty last-good-reply table of an N x N board (-1: no reply kept)."""
    return np.full((2, (size + 2) ** 2), -1, np.int32)


def play_and_learn(policy: PolicyArrays, stones, to_play, ko, passes, last_moves, playouts_per_state: int,
                   seed: int, threads: int | None, replies: np.ndarray, komi) -> RawPlayouts:
    """``play_batch`` with the last good replies ``replies`` (``new_replies``), which then learn from the
    batch's playouts (``learn_replies``, komi float32 [S]); the raw results, their moves recorded."""
    raw = play_batch(policy, stones, to_play, ko, passes, last_moves, playouts_per_state, seed, threads,
                     record_moves=True, replies=replies)
    learn_replies(replies, raw.trace, raw.moves, raw.score, np.ascontiguousarray(komi, np.float32),
                  np.ascontiguousarray(to_play, np.int32), np.ascontiguousarray(last_moves, np.int32).reshape(-1, 2),
                  playouts_per_state)
    return raw


@jit
def learn_replies(replies, trace, moves, score, komi, to_play, last_moves, per_state):
    """LGRF-1's update (Baier & Drake 2010) of ``replies`` int32 [2, PP] from a batch's playouts, in row order:
    every move of the playout's winner (score float32 [S * L] less komi float32 [S] > 0: Black) becomes the
    reply of its colour to the move before it (the position's last move, int [S, 2], for the first), and a
    move of the loser that is its colour's stored reply to the move before is forgotten; passes neither
    reply nor are replied to, and a drawn playout teaches nothing.  trace int16 [S * L, M] (N * N = pass),
    moves int32 [S * L], to_play int32 [S] (1 Black, -1 White)."""
    points = trace.shape[1] // 3
    size = int(np.sqrt(points) + 0.5)
    for j in range(trace.shape[0]):
        s = j // per_state
        margin = score[j] - komi[s]
        if margin == 0:
            continue
        winner = 1 if margin > 0 else -1
        prev = last_moves[s, 0]
        colour = to_play[s]
        for i in range(min(moves[j], trace.shape[1])):
            move = trace[j, i]
            if 0 <= prev < points and 0 <= move < points:
                row = 0 if colour == 1 else 1
                before = nb.padded_point(prev, size)
                point = nb.padded_point(move, size)
                if colour == winner:
                    replies[row, before] = point
                elif replies[row, before] == point:
                    replies[row, before] = -1
            prev = move
            colour = -colour


def light_policy() -> PolicyArrays:
    return PolicyArrays(LIGHT, np.zeros(ft.TABLE_SIZE), np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32))


def heavy_policy(policy_tables, size: int, ladder_budget: int = 0, two_liberties: bool = False,
                 local: bool = False) -> PolicyArrays:
    """The heavy policy of ``jaxgo.playouts.xla.heavy.PolicyTables`` on an N x N board; ``ladder_budget`` > 0:
    its ladder variant (``jaxgo.playouts.native.heavy``), reading at most that many positions a ladder, with
    ``two_liberties`` its two-liberty defence; ``local``: the local tiers first."""
    dist1, dist2 = nw.distance_tables(policy_tables, size)
    return PolicyArrays(HEAVY, ft.heavy_tables(policy_tables, ladder_budget, two_liberties, local), dist1, dist2)


def rule_policy(rule_tables, ladder_budget: int = 0, local: bool = False) -> PolicyArrays:
    """The rule policy of ``jaxgo.playouts.xla.rules.RuleTables`` (any board size); ``ladder_budget`` > 0: its
    ladder variant (``jaxgo.playouts.native.rules``), reading at most that many positions a ladder; ``local``:
    its local tiers (``rules.choose_local``)."""
    return PolicyArrays(RULES, ft.rule_tables(rule_tables, ladder_budget, local), np.zeros((1, 1), np.float32),
                        np.zeros((1, 1), np.float32))


@jit(nrt=True)
def _first_weights(kind, stones, to_play, ko, last, last2, tables, lines, dist1, dist2, plain_of, out):
    size = int(np.sqrt(stones.shape[0]) + 0.5)
    w = size + 2
    pp = w * w
    st, g = nb.new_board(size)
    nb.set_position(st, g, stones, to_play, ko, 0, last, last2, True)
    base = np.zeros((2, pp), np.float64)
    flags = np.zeros((2, pp), np.int8)
    policy = RULES - 1 if kind == LIGHT else kind - 1
    work = nw.new_work(pp, w)
    nw.weights_by_point(st, g, base, flags, policy, tables, lines, dist1, dist2, plain_of, work, out)
    ladders = ladder.new_ladder_work(pp, int(tables[ft.LADDER]))
    if kind == RULES:
        rule_playouts.ladder_weights(st, g, tables, ladders, out)
    elif kind == HEAVY and tables[ft.LADDER] > 0 and nw.ladder_gammas(st, g, flags, tables, ladders, work[0]):
        for i in range(size * size):
            out[i] = work[0][(i // size + 1) * w + i % size + 1]
    if kind == LIGHT:  # the rule tiers' candidates, each alike (the ko point is already 0)
        for i in range(size * size):
            out[i] = 1.0 if out[i] > 0 else 0.0


def move_probabilities(policy: PolicyArrays, stones, to_play: int, ko: int = -1, last_moves=(-1, -1)) -> np.ndarray:
    """float64 [P]: the policy's probability of each point as the next move of the position (stones int8 [P],
    ``to_play`` 1 / -1, simple-ko point, last two moves); all zero when it must pass.  Light: uniform over
    the legal points that are no own eye.  Not for the local tiers (``LOCAL_POLICIES``), which draw whether
    to look at a tier at all (ValueError)."""
    if policy.tables[ft.LOCAL] > 0:
        raise ValueError("the local rule tiers are looked at with a probability: no closed form of their first "
                         "move; sample playouts instead")
    stones = np.ascontiguousarray(stones, np.int8)
    size = int(round(stones.shape[0] ** 0.5))
    out = np.zeros(stones.shape[0], np.float64)
    tables = policy.tables if policy.kind != LIGHT else ft.rule_tables_for_light()
    _first_weights(policy.kind, stones, int(to_play), int(ko), int(last_moves[0]), int(last_moves[1]), tables,
                   _lines(size), policy.dist1, policy.dist2, plain_index(size), out)
    total = out.sum()
    return out / total if total > 0 else out
