"""Light playouts for wide devices (GPUs): every lane makes one move per iteration, in step with the others.

Policy: the light policy of ``jaxgo.playouts.xla.light`` -- uniform over the legal moves that do not fill the
mover's own eye (playout eye rule), pass only when no such move exists, simple ko, no suicide, at most
``3 * N * N`` moves (passes included), Tromp-Taylor area with komi -- and the same ``PlayoutResult``.

Why another kernel.  ``light`` draws a candidate, then checks it ("sample, then validate", Libego's scheme):
cheap on a CPU, but on a GPU every iteration of its loop waits for the slowest lane's flood fills (a while loop
over the whole batch inside each move) and a refuted candidate costs a whole iteration.  Here no loop runs
inside a move: every point's legality is known before the draw, from per-chain pseudo-liberty statistics kept
up to date move by move (``jaxgo.go.rules``: count, sum and sum of squares of the (stone, empty neighbour)
adjacencies; a chain is in atari when they all name one point), so

- legal(p) = empty, not the ko point, and an empty neighbour, or an own neighbour chain not in atari, or an
  opponent neighbour chain in atari (captured by p); eyes as ``rules.eye_mask``;
- the move is the k-th candidate for k = floor(u * count) (a cumulative sum over the points): the same uniform
  distribution over the same set as "sample, then validate";
- playing it: a few gathers around the point, dense relabelling of the merged own chains and of the captured
  ones, scatters of at most 9 rows for the statistics of the merged, captured and neighbouring chains, and one
  scatter-add for the liberties captures give back (``_play``).

The batch axis comes first (``[lanes, P]``): the per-lane gathers and scatters stay inside one lane's row.
Memory traffic sets the pace on a GPU, so the lanes are kept small: chain ids int16, the three statistics packed
in two int32 words (``pack``), the draw as two short cumulative sums (``kth_point``).
A lane that finishes hands in its final stones and records and takes the next pending playout every
``refill_every`` iterations (``_playouts``); ownership and score are computed once for all playouts at the end.
Randomness is one xorshift32 stream per playout (``light.next_random``), so results depend only on the key,
not on the lanes, and are the same on every device (integer arithmetic only).
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.go import rules
from jaxgo.go.coords import BLACK, EMPTY, WHITE
from jaxgo.playouts.xla import bitboard as bb
from jaxgo.playouts.xla import light

U32 = jnp.uint32
PlayoutResult = light.PlayoutResult
OFF = rules.OFF_BOARD
_ORTHOGONAL = ((-1, 0), (1, 0), (0, -1), (0, 1))  # the order of ``rules.neighbour_table``
_DIAGONAL = ((-1, -1), (-1, 1), (1, -1), (1, 1))


@chex.dataclass(frozen=True)
class _Lanes:
    """Loop state for L lanes (boards), batch axis FIRST; P = N * N."""

    stones: chex.Array  # int8 [L, P]: BLACK, WHITE, EMPTY
    chain: chex.Array  # int16 [L, P]: representative point of each stone's chain, P on empty points
    libs: chex.Array  # int32 [L, P, 2]: by chain id, pseudo-liberty count + (index sum << 11); squared-index sum
    ko: chex.Array  # int32 [L]: simple-ko point, -1 if none
    to_play: chex.Array  # int8 [L]
    passes: chex.Array  # int32 [L]
    ply: chex.Array  # int32 [L]: moves made in this playout (passes included)
    rng: chex.Array  # uint32 [L]: xorshift32 state
    first_colour: chex.Array  # int8 [L, P]
    first_ply: chex.Array  # int16 [L, P]
    moves: chex.Array  # int16 [L, max_moves] when recorded, else [L, 0]


SUM_SHIFT = 11  # count < 2**11 and index sum < 2**20 on boards up to 19x19 (<= 4 * 361 adjacencies)
MAX_SIZE = 19


def pack(count, total, squares):
    """int32 [..., 2]: liberty statistics as the lanes keep them.  Adding or subtracting packed values adds or
    subtracts each field, as no field ever leaves its range (the count and sum of a chain never go negative)."""
    return jnp.stack([count + (total << SUM_SHIFT), squares], axis=-1)


def in_atari(libs):
    """bool [...]: ``rules.in_atari`` of packed statistics int32 [..., 2]."""
    return rules.in_atari(libs[..., 0] & ((1 << SUM_SHIFT) - 1), libs[..., 0] >> SUM_SHIFT, libs[..., 1])


def _shift(grid, offset, fill):
    """[L, N, N] -> [L, N, N]: entry (r, c) takes the value at (r + dr, c + dc), ``fill`` off the board."""
    size = grid.shape[-1]
    dr, dc = offset
    padded = jnp.pad(grid, ((0, 0), (1, 1), (1, 1)), constant_values=fill)
    return padded[:, 1 + dr: 1 + dr + size, 1 + dc: 1 + dc + size]


@functools.lru_cache(maxsize=None)
def _edge(size: int) -> np.ndarray:
    """bool [N, N]: first-line points."""
    edge = np.zeros((size, size), bool)
    edge[0, :] = edge[-1, :] = edge[:, 0] = edge[:, -1] = True
    return edge


def candidates(lanes: _Lanes, size: int):
    """bool [L, P]: the light policy's moves (legal under simple ko, not an own eye by the playout rule), and
    bool [L, P]: whether each point's chain is in atari (False on empty points)."""
    count, points = lanes.stones.shape
    atari_by_id = in_atari(lanes.libs)  # [L, P]
    chain = jnp.minimum(lanes.chain.astype(jnp.int32), points - 1)
    atari = jnp.take_along_axis(atari_by_id, chain, axis=1) & (lanes.stones != EMPTY)
    grid = lanes.stones.reshape(count, size, size)
    atari_grid = atari.reshape(count, size, size)
    own = lanes.to_play.astype(jnp.int8)[:, None, None]
    has_liberty = joins_safe = captures = jnp.zeros_like(grid, bool)
    surrounded = jnp.ones_like(grid, bool)
    for offset in _ORTHOGONAL:
        colour = _shift(grid, offset, OFF)
        weak = _shift(atari_grid, offset, False)
        has_liberty |= colour == EMPTY
        joins_safe |= (colour == own) & ~weak
        captures |= (colour == -own) & weak
        surrounded &= (colour == own) | (colour == OFF)
    enemy_diagonals = sum((_shift(grid, offset, EMPTY) == -own).astype(jnp.int32) for offset in _DIAGONAL)
    eye = surrounded & (enemy_diagonals <= jnp.where(jnp.asarray(_edge(size)), 0, 1))
    empty = grid == EMPTY
    legal = empty & (has_liberty | joins_safe | captures)
    not_ko = jnp.arange(points)[None, :] != lanes.ko[:, None]
    return (legal & ~eye).reshape(count, points) & not_ko, atari


def _neighbour_gain(removed, size: int):
    """int32 [L, P, 2]: per point, the packed count, index sum and squared-index sum of its neighbours in
    ``removed`` (bool [L, P]) -- the pseudo-liberties a stone there gets back."""
    count = removed.shape[0]
    index = jnp.arange(size * size, dtype=jnp.int32).reshape(1, size, size)
    grid = removed.reshape(count, size, size)
    at = jnp.where(grid, index, 0)
    number = sum(_shift(grid, offset, False).astype(jnp.int32) for offset in _ORTHOGONAL)
    total = sum(_shift(at, offset, 0) for offset in _ORTHOGONAL)
    squares = sum(_shift(at * at, offset, 0) for offset in _ORTHOGONAL)
    return pack(number, total, squares).reshape(count, size * size, 2)


def _play(lanes: _Lanes, point, placed, atari, size: int):
    """Put a stone of ``to_play`` on ``point`` (int32 [L]) of the lanes where ``placed`` (bool [L]); the move
    must be legal.  ``atari``: bool [L, P] from ``candidates``.  Returns (stones, chain, libs, ko) of the lanes
    (the others unchanged)."""
    count, points = lanes.stones.shape
    rows = jnp.arange(count)[:, None]
    nbrs = jnp.asarray(rules.neighbour_table(size))[point]  # [L, 4], P = off the board
    own = lanes.to_play.astype(jnp.int8)

    def around(values, fill):
        """[L, 4]: ``values`` [L, P] at the neighbours, ``fill`` off the board (no padded copy of the board)."""
        found = jnp.take_along_axis(values, jnp.minimum(nbrs, points - 1), axis=1)
        return jnp.where(nbrs < points, found, jnp.asarray(fill, values.dtype))

    nb_colour = around(lanes.stones, OFF)
    nb_chain = around(lanes.chain, points).astype(jnp.int32)
    nb_atari = around(atari, False)
    is_own = nb_colour == own[:, None]
    is_stone = (nb_colour == BLACK) | (nb_colour == WHITE)
    earlier = (nb_chain[:, :, None] == nb_chain[:, None, :]) & jnp.tril(jnp.ones((4, 4), bool), -1)
    first_own = is_own & ~jnp.any(earlier & is_own[:, None, :], axis=2)
    own_ids = jnp.where(first_own & placed[:, None], nb_chain, -1)  # [L, 4]: distinct own chains to merge
    dead = (nb_colour == -own[:, None]) & nb_atari & placed[:, None]
    dead_ids = jnp.where(dead, nb_chain, -1)  # [L, 4]: opponent chains captured (repeats allowed)

    # 1. The point stops being a pseudo-liberty of every adjacent chain (once per adjacency).
    p = point[:, None]
    step = pack(jnp.ones_like(p), p, p * p)  # [L, 1, 2]
    drop = jnp.where((is_stone & placed[:, None])[..., None], -step, 0)  # [L, 4, 2]
    libs = lanes.libs.at[rows, jnp.where(is_stone, nb_chain, points)].add(drop, mode="drop")

    # 2. The merged chain's statistics: its parts' (after step 1) plus the new stone's empty neighbours.
    own_libs = jnp.take_along_axis(libs, jnp.clip(own_ids, 0, points - 1)[..., None], axis=1)  # [L, 4, 2]
    empty_nb = nb_colour == EMPTY
    empty_index = jnp.where(empty_nb, nbrs, 0)
    merged = (jnp.sum(jnp.where((own_ids >= 0)[..., None], own_libs, 0), axis=1)
              + pack(jnp.sum(empty_nb, axis=1, dtype=jnp.int32), jnp.sum(empty_index, axis=1),
                     jnp.sum(empty_index * empty_index, axis=1)))

    # 3. Stones and chain ids: captured chains removed, own neighbours relabelled to ``point``.
    ids = jnp.arange(points, dtype=jnp.int32)[None, :]
    chain = lanes.chain.astype(jnp.int32)
    captured = (lanes.stones == -own[:, None]) & jnp.any(chain[:, :, None] == dead_ids[:, None, :], axis=2)
    joins = (lanes.stones == own[:, None]) & jnp.any(chain[:, :, None] == own_ids[:, None, :], axis=2)
    here = (ids == p) & placed[:, None]
    stones = jnp.where(here, own[:, None], jnp.where(captured, jnp.int8(EMPTY), lanes.stones))
    chain = jnp.where(here | joins, p, jnp.where(captured, points, chain))

    # 4. Slots of merged and captured chains cleared, the merged chain's written at ``point``; own chains next
    #    to captured stones get those points back as pseudo-liberties.
    slots = jnp.concatenate([own_ids, dead_ids, jnp.where(placed, point, -1)[:, None]], axis=1)  # [L, 9]
    values = jnp.concatenate([jnp.zeros((count, 8, 2), libs.dtype), merged[:, None, :]], axis=1)
    libs = libs.at[rows, jnp.where(slots >= 0, slots, points)].set(values, mode="drop")  # repeats: equal values
    gain = _neighbour_gain(captured, size)
    gainer = (stones == own[:, None]) & (gain[..., 0] > 0)
    libs = libs.at[rows, jnp.where(gainer, chain, points)].add(gain, mode="drop")
    chain = chain.astype(lanes.chain.dtype)

    # 5. Simple ko: a lone stone without empty neighbours that captured exactly one stone.
    single = (jnp.sum(captured, axis=1) == 1) & ~jnp.any(is_own, axis=1) & ~jnp.any(nb_colour == EMPTY, axis=1)
    ko = jnp.where(placed, jnp.where(single, jnp.max(dead_ids, axis=1), -1), lanes.ko)
    return stones, chain, libs, ko


def kth_point(allowed, rows_end, k, size: int):
    """int32 [L]: the index of the k-th (0-based, k int32 [L] below the count) True point of ``allowed`` bool
    [L, P] in row-major order (``rows_end`` int32 [L, N]: cumulative counts of True points by row): the row
    from ``rows_end``, then the column within that row (two short cumulative sums instead of one over the P
    points)."""
    grid = allowed.reshape(allowed.shape[0], size, size)
    row = jnp.sum(rows_end <= k[:, None], axis=1, dtype=jnp.int32)
    row = jnp.minimum(row, size - 1)
    before = jnp.where(row > 0, jnp.take_along_axis(rows_end, jnp.maximum(row - 1, 0)[:, None], axis=1)[:, 0], 0)
    line = jnp.take_along_axis(grid, row[:, None, None], axis=1)[:, 0]  # [L, N]
    col = jnp.sum(jnp.cumsum(line, axis=1, dtype=jnp.int32) <= (k - before)[:, None], axis=1, dtype=jnp.int32)
    return row * size + jnp.minimum(col, size - 1)


def _step(lanes: _Lanes, running, size: int, record: bool) -> _Lanes:
    """One move (or a forced pass) on every lane where ``running`` (bool [L])."""
    points = size * size
    allowed, atari = candidates(lanes, size)
    rows_end = jnp.cumsum(jnp.sum(allowed.reshape(-1, size, size), axis=2, dtype=jnp.int32), axis=1)  # [L, N]
    count = rows_end[:, -1]
    rng, bits = light.next_random(lanes.rng)
    k = (((bits >> U32(16)) * count.astype(U32)) >> U32(16)).astype(jnp.int32)
    point = kth_point(allowed, rows_end, k, size)
    must_pass = count == 0
    placed = running & ~must_pass
    point = jnp.where(must_pass, 0, point)
    stones, chain, libs, ko = _play(lanes, point, placed, atari, size)
    move = jnp.where(must_pass, points, point)

    rows = jnp.arange(point.shape[0])
    slot = jnp.minimum(lanes.ply, lanes.moves.shape[1] - 1)
    first_colour, first_ply, moves = light.record_first_plays(lanes, (rows, point), (rows, slot), move, placed,
                                                              running, record)
    passed = running & must_pass
    return lanes.replace(
        stones=stones, chain=chain, libs=libs,
        ko=jnp.where(passed, -1, ko),
        to_play=jnp.where(running, -lanes.to_play, lanes.to_play),
        passes=jnp.where(running, jnp.where(must_pass, lanes.passes + 1, 0), lanes.passes),
        ply=lanes.ply + running.astype(jnp.int32),
        rng=jnp.where(running, rng, lanes.rng),
        first_colour=first_colour, first_ply=first_ply, moves=moves,
    )


def _no_plays(count: int, points: int, max_moves: int, record: bool) -> dict:
    """The record fields of ``count`` playouts that have not moved yet: first_colour int8 [count, P] (0),
    first_ply int16 [count, P] (-1), moves int16 [count, M] (-1; M = 0 unless ``record``)."""
    return {"first_colour": jnp.zeros((count, points), jnp.int8),
            "first_ply": jnp.full((count, points), -1, jnp.int16),
            "moves": jnp.full((count, max_moves if record else 0), -1, jnp.int16)}


def _lanes_from(states: rules.State, rng, max_moves: int, record: bool) -> _Lanes:
    """Batched rules.State [L, ...] and seeds [L] -> loop state at the start of those playouts."""
    count, points = states.stones.shape
    return _Lanes(
        stones=states.stones.astype(jnp.int8),
        chain=states.chain.astype(jnp.int16),
        libs=pack(states.lib_count, states.lib_sum, states.lib_sumsq).astype(jnp.int32),
        ko=states.ko.astype(jnp.int32),
        to_play=states.to_play.astype(jnp.int8),
        passes=states.passes.astype(jnp.int32),
        ply=jnp.zeros(count, jnp.int32),
        rng=rng,
        **_no_plays(count, points, max_moves, record),
    )


@chex.dataclass(frozen=True)
class _Finished:
    """What finished playouts hand in, T rows (scored after the loop)."""

    stones: chex.Array  # int8 [T, P]
    num_moves: chex.Array  # int32 [T]
    first_colour: chex.Array  # int8 [T, P]
    first_ply: chex.Array  # int16 [T, P]
    moves: chex.Array  # int16 [T, max_moves] or [T, 0]


def _playouts(states: rules.State, seeds, komi, per_state: int, max_moves: int, record: bool, lanes: int,
              active, refill_every: int) -> PlayoutResult:
    """T = S * ``per_state`` playouts (playout j from position j // per_state, seed ``seeds[j]``) on ``lanes``
    persistent lanes; only the first ``active`` (traced int32) are played, the other rows keep empty values.

    Every ``refill_every`` iterations up to ``collect`` finished lanes write their final stones and records to
    their row and take the next pending playouts."""
    total = seeds.shape[0]
    points = states.stones.shape[1]
    size = rules.board_size(points)
    lanes = min(lanes, total)
    collect = max(8, min(lanes, lanes * refill_every // 64))  # ~2x the 9x9 finishing rate (1 in ~110 moves)

    def running(b):
        return (b.passes < 2) & (b.ply < max_moves)

    def start(job):
        """Loop state at the start of playouts ``job`` (int32 [F], >= 0)."""
        at = jax.tree_util.tree_map(lambda x: x[job // per_state], states)
        return _lanes_from(at, seeds[job], max_moves, record)

    def body(carry):
        boards, job, next_job, out = carry
        for _ in range(refill_every):
            boards = _step(boards, running(boards) & (job >= 0), size, record)
        finished = (job >= 0) & ~running(boards)
        lane = jnp.nonzero(finished, size=collect, fill_value=lanes)[0]
        valid = lane < lanes
        lane = jnp.minimum(lane, lanes - 1)
        dest = jnp.where(valid, job[lane], total)  # row ``total`` is dropped
        out = out.replace(
            stones=out.stones.at[dest].set(boards.stones[lane], mode="drop"),
            num_moves=out.num_moves.at[dest].set(boards.ply[lane], mode="drop"),
            first_colour=out.first_colour.at[dest].set(boards.first_colour[lane], mode="drop"),
            first_ply=out.first_ply.at[dest].set(boards.first_ply[lane], mode="drop"),
            moves=out.moves.at[dest].set(boards.moves[lane], mode="drop"),
        )
        rank = jnp.cumsum(valid) - 1
        new_job = jnp.where(valid & (next_job + rank < active), next_job + rank, -1)
        target = jnp.where(new_job >= 0, lane, lanes)  # lanes without a new job are left alone
        fresh = start(jnp.maximum(new_job, 0))
        boards = jax.tree_util.tree_map(lambda old, new: old.at[target].set(new, mode="drop"), boards, fresh)
        job = job.at[jnp.where(valid, lane, lanes)].set(new_job, mode="drop")
        return boards, job, next_job + jnp.sum(valid, dtype=jnp.int32), out

    first = light.first_jobs(lanes, active)
    boards = start(jnp.arange(lanes, dtype=jnp.int32))
    out = _Finished(
        stones=jnp.zeros((total, points), jnp.int8),
        num_moves=jnp.zeros(total, jnp.int32),
        **_no_plays(total, points, max_moves, record),
    )
    out = jax.lax.while_loop(lambda c: jnp.any(c[1] >= 0), body, (boards, first, jnp.int32(lanes), out))[3]
    grid = out.stones.reshape(total, size, size)
    score, ownership = light.score_and_owner(bb.from_dense(grid == BLACK), bb.from_dense(grid == WHITE), komi, size)
    played = jnp.arange(total) < active
    score = jnp.where(played, score, 0.0)
    return PlayoutResult(score=score, winner=jnp.sign(score).astype(jnp.int8), num_moves=out.num_moves,
                         ownership=jnp.where(played[:, None], ownership, 0), first_colour=out.first_colour,
                         first_ply=out.first_ply, moves=out.moves)


ACCELERATOR_LANES = {81: 65536, 361: 32768}  # by points: boards up to 200 points take the 9x9 value


def default_lanes(num_points: int) -> int:
    """Lanes advanced together by default: ``ACCELERATOR_LANES`` on an accelerator, a few hundred on a CPU
    (where ``jaxgo.playouts.native`` is the fast path and this kernel runs for tests).  On one H100
    (benchmarks/RESULTS.md, "GPU"; 1,048,576 9x9 / 262,144 19x19 playouts a call) 9x9 ran 1.42 M playouts/s at
    65,536 lanes, 1.27 M at 262,144, 0.93 M at 1,048,576; 19x19 84 k at 32,768, 83 k at 65,536, 74 k at
    131,072: more lanes cost about their share per iteration, and the last wave waits for its longest
    playout."""
    if jax.default_backend() != "cpu":
        return ACCELERATOR_LANES[81] if num_points <= 200 else ACCELERATOR_LANES[361]
    return 256


@functools.partial(jax.jit, static_argnames=("num_per_state", "max_moves", "record_moves", "lanes", "refill_every"))
def run(states: rules.State, key, komi=7.5, *, num_per_state: int = 1, max_moves: int | None = None,
        record_moves: bool = False, lanes: int | None = None, active_states=None,
        refill_every: int = 2) -> PlayoutResult:
    """Light playouts from a batch of positions in one device call; the arguments and the result are those of
    ``light.run`` (``refill_every``: iterations between two hand-ins of finished lanes)."""
    if states.stones.ndim == 1:
        states = jax.tree_util.tree_map(lambda x: x[None], states)
    count, points = states.stones.shape
    if rules.board_size(points) > MAX_SIZE:
        raise ValueError(f"light_wide plays boards up to {MAX_SIZE}x{MAX_SIZE} (packed liberty statistics)")
    limit = 3 * points if max_moves is None else max_moves
    total = count * num_per_state
    seeds = jax.random.bits(key, (total,), jnp.uint32) | U32(1)
    return _playouts(states, seeds, jnp.float32(komi), num_per_state, limit, record_moves,
                     lanes or default_lanes(points), light.active_jobs(total, num_per_state, active_states),
                     refill_every)


def run_from_empty(size: int, batch: int, key, komi=7.5, **kwargs) -> PlayoutResult:
    """``batch`` light playouts from the empty N x N board (Black first)."""
    return run(rules.new_state(size), key, komi, num_per_state=batch, **kwargs)
