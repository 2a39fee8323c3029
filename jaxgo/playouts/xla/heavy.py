"""Heavy playouts: every move sampled with probability proportional to its Bradley-Terry gamma.

Policy (Coulom 2007; Lew's thesis, section 3.4.1): a candidate move ``a`` (an empty point that is legal and
does not fill the mover's own eye by the playout eye rule) has strength

    gamma_a = gamma_pattern[3x3 pattern of a] * gamma_capture * gamma_extension * gamma_self_atari
              * gamma_atari * gamma_dist_prev * gamma_dist_prev2 * gamma_line

with the groups and levels of ``jaxgo.features.moves`` (the same definitions the gammas are trained on), and
the playout picks ``a`` with probability gamma_a / sum_b gamma_b.  Everything else is as in the light playouts
(``jaxgo.playouts.xla.light``): pass only when no candidate is left, simple ko, no suicide, at most ``3 * N * N`` moves,
Tromp-Taylor area scoring with komi, the same ``PlayoutResult``.

Modules: ``jaxgo.playouts.tables`` (the gammas as the loop reads them), ``board`` (loop state, playing a move,
start positions), ``features`` (tactical sets, pattern codes, weights, the draw) and this one (the step
and the lane loop, the public API).

Implementation.  The boards are row bitboards with the batch axis innermost (``jaxgo.playouts.xla.bitboard``) plus, kept
up to date move by move, the *liberty class* of every chain: ``lib1`` / ``lib2`` hold the stones of chains
with exactly one / exactly two liberties, and ``libsum`` (dense int16 [N, N, B]) the sum of the liberty
indices of a one- or two-liberty chain.  Every tactical feature of every point follows from the 4 neighbours'
classes without playing the move, as word operations on the bitboards (``features._tactics``):

- capture: next to an opponent ``lib1`` stone (its only liberty is the point); level 2 when that chain is the
  chain of the previous move (``last_chain``), level 3 when it touches an own ``lib1`` chain (a flood within
  the opponent's ``lib1`` stones; the capture saves the own chain);
- atari: next to an opponent ``lib2`` stone (and no capture), level 2 while a ko point exists;
- the liberties the new stone's chain keeps (captures aside) are the empty neighbours, plus the *other*
  liberty ``libsum - point`` of each own two-liberty neighbour, plus at least two from any own neighbour with
  three or more: counted exactly as 0, 1 or >= 2.  That gives legality (0 and no capture = suicide),
  self-atari (exactly 1, no capture) and escape from atari (next to an own ``lib1`` stone, and >= 2 or a
  capture).  Only "exactly 1" needs the dense ``libsum`` comparison (``features``);
- the 3x3 pattern code is the 8 neighbours' colours plus the ``lib1`` bit of the 4 orthogonal ones, looked up
  in a gamma table over all 2**20 raw codes (canonicalisation folded in).

Sampling: row sums, a cumulative sum over the N rows, then over the N points of the chosen row.  Playing the
move reads the (at most 4) neighbouring chains off a dense chain-id array (``ids``, one comparison per point;
no flood fill): opponent chains left without liberties are captured, the others and the merged own chain get
their new class from their liberty count.  Own chains next to captured stones gain liberties
(``board``): two-liberty ones leave ``lib2`` (a bitboard flood), one-liberty ones gain the captured
points next to them (``libsum`` + the point when they touch one, none left otherwise); only several one-liberty
chains sharing two or more captured points are re-counted one chain at a time.  Lanes that finish take the
next pending playout, as in ``jaxgo.playouts.xla.light``; randomness is one xorshift32 stream per playout, so results
depend only on the key.

XLA CPU notes (measured, see docs/heavy.md): a cheap producer used by a fused consumer is recomputed for
every consumer element -- a bitboard word once per point of its row, a per-board sum once per point of the
board -- and such a fusion with a gather in it is not vectorised.  So per-board counts are real reductions
(``board.count_points``, ``nonempty``: their results are buffers), bitboard sets and row sums read point
by point are computed into buffers first (``board.materialize``; ``optimization_barrier`` is expanded
away before fusion on CPU), and short sums that stay inside one fusion are unrolled into elementwise adds
(``features``, ``board.pack``).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxgo.go import rules
from jaxgo.playouts.tables import PolicyTables, load_default_tables, policy_tables, synthetic_log_gammas
from jaxgo.playouts.xla import board, features, light
from jaxgo.playouts.xla import rules as rule_policy

__all__ = ["PlayoutResult", "PolicyTables", "default_lanes", "load_default_tables", "move_probabilities",
           "point_features", "policy_tables", "run", "run_from_empty", "synthetic_log_gammas"]

U32 = jnp.uint32
PlayoutResult = light.PlayoutResult


def _step(boards: board.Boards, running, tables: PolicyTables, size: int, record: bool, rows=None) -> board.Boards:
    """One move (or a forced pass) on every running board."""
    points = size * size
    weights = features.weights(boards, tables, size, rows)
    rng, bits = light.next_random(boards.rng)
    u = (bits >> U32(8)).astype(jnp.float32) * jnp.float32(1.0 / (1 << 24))
    row, col, any_candidate = features.pick(weights, u)
    must_pass = ~any_candidate
    placed = running & ~must_pass
    boards, merged = board.play(boards, row * size + col, placed, size)
    point = jnp.where(must_pass, points, row * size + col)

    first_colour, first_ply, moves = light.record_move(boards, point, placed, running, points, record)
    return boards.replace(
        ko=jnp.where((running & must_pass)[None], U32(0), boards.ko),
        last_chain=jnp.where(running[None], merged, boards.last_chain),
        prev=jnp.where(running, point, boards.prev),
        prev2=jnp.where(running, boards.prev, boards.prev2),
        to_play=jnp.where(running, -boards.to_play, boards.to_play),
        passes=jnp.where(running, jnp.where(must_pass, boards.passes + 1, 0), boards.passes),
        ply=boards.ply + running.astype(jnp.int32),
        rng=jnp.where(running, rng, boards.rng),
        first_colour=first_colour,
        first_ply=first_ply,
        moves=moves,
    )



# ----------------------------------------------------------------------------------------------------------
# The playout loop


def _playouts(states, rng, prev, prev2, komi, tables, max_moves: int, record: bool, lanes: int,
              active) -> PlayoutResult:
    """T playouts (one per entry of ``states`` [T, ...]) on ``lanes`` persistent boards; as
    ``jaxgo.playouts.xla.light._playouts`` (a finished lane hands in its result and takes the next pending playout)."""
    total, points = states.stones.shape
    size = rules.board_size(points)
    lanes = min(lanes, total)
    collect = max(8, lanes // 16)
    # Start positions that are compile-time constants (``run_from_empty``) would otherwise be constant-folded:
    # XLA evaluates the liberty-count segment sum (a scatter-add s32[T, P+1]) at compile time, > 1 s with a
    # warning, for work a real search pays at run time anyway (~10 us a board).
    states = jax.lax.optimization_barrier(states)
    jobs = board.from_states(states, rng, prev, prev2, max_moves, record=False)
    rows = None if isinstance(tables, rule_policy.RuleTables) else features.distance_rows(tables, size)

    def running(b):
        return (b.passes < 2) & (b.ply < max_moves)

    def load(boards, lane, job):
        src = jnp.maximum(job, 0)
        target = jnp.where(job >= 0, lane, lanes)

        def put(table, fresh):
            return table.at[..., target].set(fresh, mode="drop")

        fresh = jax.tree_util.tree_map(lambda x: x[..., src], jobs)
        count = src.shape[0]
        return boards.replace(
            **{name: put(getattr(boards, name), getattr(fresh, name))
               for name in ("black", "white", "ko", "ids", "lib1", "lib2", "libsum", "last_chain", "prev", "prev2",
                            "to_play", "passes", "rng")},
            ply=put(boards.ply, jnp.zeros_like(src)),
            first_colour=put(boards.first_colour, jnp.zeros((points, count), jnp.int8)),
            first_ply=put(boards.first_ply, jnp.full((points, count), -1, jnp.int16)),
            moves=put(boards.moves, jnp.full((boards.moves.shape[0], count), -1, jnp.int16)),
        )

    def body(carry):
        boards, job, next_job, out = carry
        boards = _step(boards, running(boards) & (job >= 0), tables, size, record, rows)
        finished = (job >= 0) & ~running(boards)
        return light.retire_and_refill(boards, job, next_job, out, finished, load, collect, komi, size, active)

    first = light.first_jobs(lanes, active)
    boards = board.from_states(jax.tree_util.tree_map(lambda x: x[:lanes], states), rng[:lanes], prev[:lanes],
                          prev2[:lanes], max_moves, record)
    out = light.empty_result(total, points, max_moves if record else 0)
    out = jax.lax.while_loop(lambda c: jnp.any(c[1] >= 0), body, (boards, first, jnp.int32(lanes), out))[3]
    return out.replace(winner=jnp.sign(out.score).astype(jnp.int8))


def default_lanes(num_points: int) -> int:
    """Boards advanced together by default.  A heavy lane carries ~3x the light one's working set (dense chain
    ids, liberty sums, weights), so on a CPU 9x9 runs best with fewer lanes than the light playouts: 256
    (measured on the shared 2-core CPU, one device, CPU time: 4,096 playouts/s at 256 lanes, 3,697 at 512,
    2,946 at 1,024); 19x19 is flat between 64 and 256 lanes and keeps ``light.default_lanes``, as do
    accelerators (as many lanes as memory allows)."""
    if num_points <= 100 and jax.default_backend() == "cpu":
        return 256
    return light.default_lanes(num_points)


def _batched(states: rules.State, num_per_state: int, last_moves):
    if states.stones.ndim == 1:
        states = jax.tree_util.tree_map(lambda x: x[None], states)
    count = states.stones.shape[0]
    if last_moves is None:
        last_moves = jnp.full((count, 2), -1, jnp.int32)
    last_moves = jnp.asarray(last_moves, jnp.int32).reshape(count, 2)
    if num_per_state > 1:
        states = jax.tree_util.tree_map(lambda x: jnp.repeat(x, num_per_state, axis=0), states)
        last_moves = jnp.repeat(last_moves, num_per_state, axis=0)
    return states, last_moves


@functools.partial(jax.jit, static_argnames=("num_per_state", "max_moves", "record_moves", "lanes"))
def run(states: rules.State, key, komi=7.5, *, gammas: PolicyTables, num_per_state: int = 1,
        max_moves: int | None = None, record_moves: bool = False, lanes: int | None = None,
        last_moves=None, active_states=None) -> PlayoutResult:
    """Run heavy playouts from a batch of positions in one device call.

    states: ``rules.State`` batched [S, ...] (or one unbatched state); key: a ``jax.random`` key; komi: float.
    gammas: ``PolicyTables`` (``policy_tables(log_gamma)``, ``load_default_tables()``), or
    ``rule_policy.rule_tables()`` for the MoGo-style rule policy.
    last_moves: optional int [S, 2], the previous move and the one before it of each position (P = pass, -1 =
    none) for the distance features of the first playout move; default none.
    active_states: play out only the first ``active_states`` positions (traced), as ``light.run``.
    Returns a ``PlayoutResult`` over S * num_per_state playouts, position-major, as ``light.run``.
    """
    states, last = _batched(states, num_per_state, last_moves)
    points = states.stones.shape[-1]
    limit = 3 * points if max_moves is None else max_moves
    batch = states.stones.shape[0]
    seeds = jax.random.bits(key, (batch,), jnp.uint32) | U32(1)
    return _playouts(states, seeds, last[:, 0], last[:, 1], jnp.float32(komi), gammas, limit, record_moves,
                     lanes or default_lanes(points), light.active_jobs(batch, num_per_state, active_states))


def run_from_empty(size: int, batch: int, key, komi=7.5, *, gammas: PolicyTables, **kwargs) -> PlayoutResult:
    """``batch`` heavy playouts from the empty N x N board (Black first)."""
    return run(rules.new_state(size), key, komi, gammas=gammas, num_per_state=batch, **kwargs)


@jax.jit
def point_features(states: rules.State, last_moves=None):
    """The playout's own view of every point, for tests and diagnostics: states batched [S, ...], last_moves
    int [S, 2] or None.  Returns a dict of int32 [S, P]: ``code`` (raw 3x3 code), the four tactical levels,
    ``dist_prev``, ``dist_prev2``, and bool [S, P] ``legal`` and ``eye``."""
    states, last = _batched(states, 1, last_moves)
    count, points = states.stones.shape
    boards = board.from_states(states, jnp.ones(count, U32), last[:, 0], last[:, 1], 1, False)
    size = rules.board_size(points)
    code, tactical, dist1, dist2, legal, eye = features.point_levels(boards, size)
    out = {"code": code, **tactical, "dist_prev": dist1, "dist_prev2": dist2, "legal": legal, "eye": eye}
    return {name: jnp.moveaxis(value, -1, 0).reshape(count, points) for name, value in out.items()}


@jax.jit
def move_probabilities(states: rules.State, gammas: PolicyTables, last_moves=None):
    """float32 [S, P]: the playout policy's probability of each point as the next move (all zero when the
    playout must pass)."""
    states, last = _batched(states, 1, last_moves)
    count, points = states.stones.shape
    boards = board.from_states(states, jnp.ones(count, U32), last[:, 0], last[:, 1], 1, False)
    weights = features.weights(boards, gammas, rules.board_size(points))
    total = jnp.sum(weights, axis=(0, 1))
    probs = weights / jnp.maximum(total, 1e-30)[None, None]
    return jnp.moveaxis(probs, -1, 0).reshape(count, points)
