"""Light playouts, many per device call.

Policy: uniform over the legal moves that do not fill the mover's own eye (playout eye rule, see
``bitboard.eyes``); pass only when no such move exists.  Simple ko only, suicide never.  A playout ends after
two consecutive passes or after ``max_moves`` moves (default ``3 * N * N``, counting passes), and is then
scored by Tromp-Taylor area with komi.

Implementation: row bitboards with the batch axis innermost (``jaxgo.playouts.xla.bitboard``) and one while loop over a
fixed set of lanes (boards); a lane whose playout ends hands in its result and starts the next pending
playout.  Move choice is "sample, then validate" as in Libego: a uniform candidate among empty, non-ko,
non-eye points not yet refuted; if it turns out to be suicide it is marked refuted and the lane spends that
iteration without moving (the refuted set is cleared after every move).  Captures are found by flood fill
only for neighbouring chains with no liberty visible next to the contact stone, so most moves need no flood
at all.  Randomness per playout is a xorshift32 stream seeded from the caller's PRNG key, so results are
deterministic given the key, independent of the number of lanes, and the same on CPU and GPU.

Outputs per playout: final score and winner, move count, final area ownership per point, and per point the
colour that played there first and the ply (0-based, counted from the playout's start) at which it did (what
AMAF and RAVE need).
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp

from jaxgo.go import rules
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.playouts.xla import bitboard as bb

U32 = jnp.uint32


@chex.dataclass(frozen=True)
class PlayoutResult:
    """Batch of finished playouts; B playouts on an N x N board (P = N * N)."""

    score: chex.Array  # float32 [B]: black area - white area - komi
    winner: chex.Array  # int8 [B]: BLACK 1, WHITE -1, 0 for a draw
    num_moves: chex.Array  # int32 [B]: moves played in the playout, passes included
    ownership: chex.Array  # int8 [B, P]: area owner per point at the end (1, -1, 0)
    first_colour: chex.Array  # int8 [B, P]: colour that first played at the point in the playout, 0 if none
    first_ply: chex.Array  # int16 [B, P]: ply of that first play, -1 if none
    moves: chex.Array  # int16 [B, max_moves] when recorded (pass = P, -1 after the end), else [B, 0]


@chex.dataclass(frozen=True)
class _Boards:
    """Loop state for B lanes (boards), batch axis LAST (see ``jaxgo.playouts.xla.bitboard``)."""

    black: chex.Array  # uint32 [N, B]
    white: chex.Array  # uint32 [N, B]
    ko: chex.Array  # uint32 [N, B]: point forbidden by simple ko (empty set if none)
    refuted: chex.Array  # uint32 [N, B]: candidates found to be suicide since the last move
    to_play: chex.Array  # int32 [B]
    passes: chex.Array  # int32 [B]
    ply: chex.Array  # int32 [B]: moves made in this playout
    steps: chex.Array  # int32 [B]: loop iterations spent (moves plus refutations)
    rng: chex.Array  # uint32 [B]: xorshift32 state
    first_colour: chex.Array  # int8 [P, B]
    first_ply: chex.Array  # int16 [P, B]
    moves: chex.Array  # int16 [max_moves, B] or [0, B]


def next_random(x):
    """xorshift32 step; returns (new state, a well-mixed 32-bit output)."""
    x = x ^ (x << U32(13))
    x = x ^ (x >> U32(17))
    x = x ^ (x << U32(5))
    return x, x * U32(0x9E3779B1)


def _capture_and_check(own, opp, stone, size: int):
    """Resolve ``stone`` (one point per board, or none) added to ``own``; all sets uint32 [N, B].

    Returns (captured opponent points [N, B], legal [B], ko_shape [B]) where ko_shape means the stone is alone,
    captured exactly one stone and is left with exactly one liberty.

    Only opponent stones next to the new stone that have no empty neighbour of their own can belong to a
    captured chain ("suspects"); their chains (union U) are flooded, and the parts of U that touch an empty
    point are flooded again as the living ones -- U minus those is captured.  The mover's own chain is flooded
    only when the stone has no liberty of its own.  Each flood is a single plane, so most steps cost a few
    word operations per board.
    """
    empty_after = bb.row_mask(size) & ~(own | opp | stone)
    stone_neighbours = bb.neighbours(stone, size)
    stone_has_liberty = ~bb.is_empty_set(stone_neighbours & empty_after)
    touches_empty = bb.neighbours(empty_after, size)
    suspects = stone_neighbours & opp & ~touches_empty
    own_seed = jnp.where(stone_has_liberty[None], U32(0), stone)
    grown = bb.flood(jnp.stack([suspects, own_seed], axis=1), jnp.stack([opp, own | stone], axis=1), size)
    suspect_chains, own_chain = grown[:, 0], grown[:, 1]
    alive = bb.flood(suspect_chains & touches_empty, suspect_chains, size)
    captured = suspect_chains & ~alive
    freed = empty_after | captured
    captured_any = ~bb.is_empty_set(captured)
    own_has_liberty = ~bb.is_empty_set(bb.neighbours(own_chain, size) & freed)
    legal = stone_has_liberty | captured_any | own_has_liberty
    alone = bb.is_empty_set(stone_neighbours & own)
    ko_shape = alone & (bb.popcount(stone_neighbours & freed) == 1) & (bb.popcount(captured) == 1)
    return captured, legal, ko_shape


def _step(boards: _Boards, running, size: int, record: bool) -> _Boards:
    """One iteration for every board; boards with ``running`` False [B] are left unchanged."""
    points = size * size
    is_black = boards.to_play == BLACK
    own = jnp.where(is_black, boards.black, boards.white)
    opp = jnp.where(is_black, boards.white, boards.black)
    empty = bb.row_mask(size) & ~(own | opp)
    candidates = empty & ~boards.ko & ~boards.refuted & ~bb.eyes(own, opp, size)
    count = bb.popcount(candidates)
    rng, bits = next_random(boards.rng)
    k = ((bits >> U32(16)) * count.astype(U32)) >> U32(16)
    row, col = bb.select_point(candidates, k.astype(jnp.int32))
    must_pass = count == 0
    stone = jnp.where(must_pass, U32(0), bb.point_mask(row, col, size))
    captured, legal, ko_shape = _capture_and_check(own, opp, stone, size)
    placed = legal & ~must_pass & running
    moved = (must_pass | legal) & running
    point = jnp.where(must_pass, points, row * size + col)

    new_own = jnp.where(placed, own | stone, own)
    new_opp = jnp.where(placed, opp & ~captured, opp)
    first_colour, first_ply, moves = record_move(boards, point, placed, moved, points, record)
    return boards.replace(
        black=jnp.where(is_black, new_own, new_opp),
        white=jnp.where(is_black, new_opp, new_own),
        ko=jnp.where(moved, jnp.where(ko_shape & placed, captured, U32(0)), boards.ko),
        refuted=jnp.where(moved, U32(0), jnp.where(running, boards.refuted | stone, boards.refuted)),
        to_play=jnp.where(moved, -boards.to_play, boards.to_play),
        passes=jnp.where(moved, jnp.where(must_pass, boards.passes + 1, 0), boards.passes),
        ply=boards.ply + moved.astype(jnp.int32),
        steps=boards.steps + running.astype(jnp.int32),
        rng=jnp.where(running, rng, boards.rng),
        first_colour=first_colour,
        first_ply=first_ply,
        moves=moves,
    )


def _area(black, white, size: int):
    """(black area, white area) [N, B]: stones plus empty regions that reach only that colour."""
    empty = bb.row_mask(size) & ~(black | white)
    seeds = jnp.stack([bb.neighbours(black, size) & empty, bb.neighbours(white, size) & empty], axis=1)
    reach = bb.flood(seeds, jnp.broadcast_to(empty[:, None], seeds.shape), size)
    return black | (reach[:, 0] & ~reach[:, 1]), white | (reach[:, 1] & ~reach[:, 0])


def _from_states(states: rules.State, rng, max_moves: int, record: bool) -> _Boards:
    """Batched rules.State [B, ...] -> loop state [N, B]."""
    batch, points = states.stones.shape
    size = rules.board_size(points)
    grid = states.stones.reshape(batch, size, size)
    ko_point = jnp.arange(points)[None, :] == states.ko[:, None]
    return _Boards(
        black=bb.from_dense(grid == BLACK),
        white=bb.from_dense(grid == WHITE),
        ko=bb.from_dense(ko_point.reshape(batch, size, size)),
        refuted=jnp.zeros((size, batch), U32),
        to_play=states.to_play.astype(jnp.int32),
        passes=states.passes.astype(jnp.int32),
        ply=jnp.zeros(batch, jnp.int32),
        steps=jnp.zeros(batch, jnp.int32),
        rng=rng,
        first_colour=jnp.zeros((points, batch), jnp.int8),
        first_ply=jnp.full((points, batch), -1, jnp.int16),
        moves=jnp.full((max_moves if record else 0, batch), -1, jnp.int16),
    )


def score_and_owner(black, white, komi, size: int):
    """Area score [F] and ownership int8 [F, P] of finished boards given as [N, F] bitboards."""
    black_area, white_area = _area(black, white, size)
    score = (bb.popcount(black_area) - bb.popcount(white_area)).astype(jnp.float32) - komi
    owner = bb.to_dense(black_area, size).astype(jnp.int8) - bb.to_dense(white_area, size).astype(jnp.int8)
    return score, owner.reshape(owner.shape[0], size * size)


def _playouts(states: rules.State, rng, komi, max_moves: int, record: bool, lanes: int, active) -> PlayoutResult:
    """T playouts (one per entry of ``states`` [T, ...], seeds ``rng`` [T]) on ``lanes`` persistent boards; only
    the first ``active`` (int32 scalar, traced) are played, the rest of the output keeps its empty values.

    A lane that finishes hands its result to the output (at most ``collect`` lanes per iteration; the rest wait
    one iteration) and starts the next pending playout, so a batch no longer waits for its slowest game except
    at the very end.  Each playout uses only its own start position and random stream, so the results do not
    depend on ``lanes``.
    """
    total, points = states.stones.shape
    size = rules.board_size(points)
    lanes = min(lanes, total)
    collect = max(8, lanes // 16)
    step_limit = 2 * max_moves + points
    jobs = _from_states(states, rng, max_moves, record=False)  # start positions of every playout, [N, T]

    def running(b):
        return (b.passes < 2) & (b.ply < max_moves) & (b.steps < step_limit)

    def load(boards, lane, job):
        """Reset lanes ``lane`` [F] to the start of playouts ``job`` [F] (job < 0: leave the lane alone)."""
        src = jnp.maximum(job, 0)
        target = jnp.where(job >= 0, lane, lanes)  # out of range: dropped, so repeated lanes never collide

        def put(table, fresh):
            return table.at[..., target].set(fresh, mode="drop")

        return boards.replace(
            black=put(boards.black, jobs.black[:, src]),
            white=put(boards.white, jobs.white[:, src]),
            ko=put(boards.ko, jobs.ko[:, src]),
            refuted=put(boards.refuted, jnp.zeros_like(jobs.ko[:, src])),
            to_play=put(boards.to_play, jobs.to_play[src]),
            passes=put(boards.passes, jobs.passes[src]),
            ply=put(boards.ply, jnp.zeros_like(src)),
            steps=put(boards.steps, jnp.zeros_like(src)),
            rng=put(boards.rng, jobs.rng[src]),
            first_colour=put(boards.first_colour, jnp.zeros((points, src.shape[0]), jnp.int8)),
            first_ply=put(boards.first_ply, jnp.full((points, src.shape[0]), -1, jnp.int16)),
            moves=put(boards.moves, jnp.full((boards.moves.shape[0], src.shape[0]), -1, jnp.int16)),
        )

    def body(carry):
        boards, job, next_job, out = carry
        boards = _step(boards, running(boards) & (job >= 0), size, record)
        finished = (job >= 0) & ~running(boards)
        return retire_and_refill(boards, job, next_job, out, finished, load, collect, komi, size, active)

    first = first_jobs(lanes, active)
    boards = jax.tree_util.tree_map(lambda x: x[..., :lanes], _from_states(
        jax.tree_util.tree_map(lambda x: x[:lanes], states), rng[:lanes], max_moves, record))
    out = empty_result(total, points, max_moves if record else 0)
    carry = (boards, first, jnp.int32(lanes), out)
    out = jax.lax.while_loop(lambda c: jnp.any(c[1] >= 0), body, carry)[3]
    return out.replace(winner=jnp.sign(out.score).astype(jnp.int8))


ACCELERATOR_LANES = {81: 262144, 361: 131072}  # by points: boards up to 200 points take the 9x9 value


def default_lanes(num_points: int) -> int:
    """Boards advanced together by default (``run`` clips it to the playouts of the call).

    On a CPU about 80k points per iteration keeps the working set in cache (measured best: 512-1024 lanes on
    9x9, 256 on 19x19).  On an accelerator every iteration of the loop costs milliseconds of kernel launches
    whatever its width, so as many boards as memory allows advance together: ``ACCELERATOR_LANES`` (on an H200,
    benchmarks/RESULTS.md "GPU": 9x9 light playouts 231k/s at 65,536 lanes, 483k/s at 262,144, 381k/s at
    1,048,576; 19x19 11.6k/s at 32,768, 19.8k/s at 131,072)."""
    if jax.default_backend() != "cpu":
        return ACCELERATOR_LANES[81] if num_points <= 200 else ACCELERATOR_LANES[361]
    return 1024 if num_points <= 100 else (512 if num_points <= 200 else 256)


@functools.partial(jax.jit, static_argnames=("num_per_state", "max_moves", "record_moves", "lanes"))
def run(states: rules.State, key, komi=7.5, *, num_per_state: int = 1, max_moves: int | None = None,
        record_moves: bool = False, lanes: int | None = None, active_states=None) -> PlayoutResult:
    """Run light playouts from a batch of positions in one device call.

    states: a ``rules.State`` batched on a leading axis [S, ...] (or a single unbatched state, broadcast).
    key: a ``jax.random`` key.  komi: float scalar.
    lanes: boards advanced together (default ``default_lanes(P)``); more playouts than lanes are run as lanes
    free up, which the results do not depend on.
    active_states: play out only the first ``active_states`` positions (a traced int, so one compiled shape
    serves every count; default all S): callers pad a batch to a fixed size without paying for the padding.
    Returns a PlayoutResult over S * num_per_state playouts, position-major (playout j of state i at
    ``i * num_per_state + j``); rows of inactive positions hold score 0 and empty records.
    """
    if states.stones.ndim == 1:
        states = jax.tree_util.tree_map(lambda x: x[None], states)
    points = states.stones.shape[-1]
    limit = 3 * points if max_moves is None else max_moves
    if num_per_state > 1:
        states = jax.tree_util.tree_map(lambda x: jnp.repeat(x, num_per_state, axis=0), states)
    batch = states.stones.shape[0]
    seeds = jax.random.bits(key, (batch,), jnp.uint32) | U32(1)
    return _playouts(states, seeds, jnp.float32(komi), limit, record_moves, lanes or default_lanes(points),
                     active_jobs(batch, num_per_state, active_states))


def run_from_empty(size: int, batch: int, key, komi=7.5, **kwargs) -> PlayoutResult:
    """``batch`` light playouts from the empty N x N board (Black first)."""
    return run(rules.new_state(size), key, komi, num_per_state=batch, **kwargs)


def empty_result(total: int, points: int, moves: int) -> PlayoutResult:
    """A PlayoutResult of ``total`` rows to be filled by ``retire_and_refill`` (``moves`` = move-list length)."""
    return PlayoutResult(
        score=jnp.zeros(total, jnp.float32),
        winner=jnp.zeros(total, jnp.int8),
        num_moves=jnp.zeros(total, jnp.int32),
        ownership=jnp.zeros((total, points), jnp.int8),
        first_colour=jnp.zeros((total, points), jnp.int8),
        first_ply=jnp.full((total, points), -1, jnp.int16),
        moves=jnp.full((total, moves), -1, jnp.int16),
    )


def active_jobs(total: int, num_per_state: int, active_states):
    """int32 scalar: playouts to run of ``total``: all, or those of the first ``active_states`` positions."""
    if active_states is None:
        return jnp.int32(total)
    return jnp.minimum(jnp.asarray(active_states, jnp.int32) * num_per_state, total)


def first_jobs(lanes: int, active) -> chex.Array:
    """int32 [lanes]: the playout each lane starts with (-1: idle, when fewer than ``lanes`` are active)."""
    first = jnp.arange(lanes, dtype=jnp.int32)
    return jnp.where(first < active, first, -1)


def retire_and_refill(boards, job, next_job, out, finished, load, collect: int, komi, size: int, active):
    """One refill round of persistent lanes (shared by light and heavy playouts).

    Up to ``collect`` finished lanes (bool [lanes]) write their score, move count, ownership, first-play and
    move records into ``out`` at their job's row, then ``load(boards, lane, new_job)`` gives each the next pending
    playout (job -1 when none of the first ``active`` is left). ``boards`` needs ``black``/``white`` [N, lanes]
    bitboards and ``ply``, ``first_colour``, ``first_ply``, ``moves`` with the lane axis last. Returns (boards, job,
    next_job, out).
    """
    lanes = job.shape[0]
    total = out.score.shape[0]
    lane = jnp.nonzero(finished, size=collect, fill_value=lanes)[0]
    valid = lane < lanes
    lane = jnp.minimum(lane, lanes - 1)
    score, owner = score_and_owner(boards.black[:, lane], boards.white[:, lane], komi, size)
    dest = jnp.where(valid, job[lane], total)  # index `total` is dropped
    out = out.replace(
        score=out.score.at[dest].set(score, mode="drop"),
        num_moves=out.num_moves.at[dest].set(boards.ply[lane], mode="drop"),
        ownership=out.ownership.at[dest].set(owner, mode="drop"),
        first_colour=out.first_colour.at[dest].set(boards.first_colour[:, lane].T, mode="drop"),
        first_ply=out.first_ply.at[dest].set(boards.first_ply[:, lane].T, mode="drop"),
        moves=out.moves.at[dest].set(boards.moves[:, lane].T, mode="drop"),
    )
    rank = jnp.cumsum(valid) - 1
    new_job = jnp.where(valid & (next_job + rank < active), next_job + rank, -1)
    boards = load(boards, lane, new_job)
    job = job.at[jnp.where(valid, lane, lanes)].set(new_job, mode="drop")
    return boards, job, next_job + jnp.sum(valid, dtype=jnp.int32), out


def record_move(boards, point, placed, moved, points: int, record: bool):
    """(first_colour, first_ply, moves) after this step (shared by light and heavy playouts).

    ``point`` int [lanes] is the move (``points`` = pass), ``placed`` bool [lanes] lanes that put a stone down,
    ``moved`` lanes whose move (pass included) goes into the move list when ``record``.  O(lanes) scatters: a
    dense [P, lanes] update per step costs far more.
    """
    lanes = jnp.arange(point.shape[0])
    slot = jnp.minimum(boards.ply, boards.moves.shape[0] - 1)
    return record_first_plays(boards, (jnp.minimum(point, points - 1), lanes), (slot, lanes), point, placed, moved,
                              record)


def record_first_plays(boards, at, slot_at, point, placed, moved, record: bool):
    """(first_colour, first_ply, moves) of ``boards`` (fields first_colour, first_ply, moves, to_play, ply) after
    a step, in either layout: ``at`` indexes each lane's point in the first-play tables, ``slot_at`` its slot in
    the move list (``(point, lane)`` and ``(slot, lane)`` for [P, lanes] tables, ``(lane, point)`` and ``(lane,
    slot)`` for [lanes, P]); ``placed``, ``moved`` and ``record`` as in ``record_move``."""
    fresh = placed & (boards.first_colour[at] == 0)
    first_colour = boards.first_colour.at[at].set(
        jnp.where(fresh, boards.to_play.astype(jnp.int8), boards.first_colour[at]))
    first_ply = boards.first_ply.at[at].set(jnp.where(fresh, boards.ply.astype(jnp.int16), boards.first_ply[at]))
    moves = boards.moves
    if record:
        moves = moves.at[slot_at].set(jnp.where(moved, point.astype(jnp.int16), moves[slot_at]))
    return first_colour, first_ply, moves
