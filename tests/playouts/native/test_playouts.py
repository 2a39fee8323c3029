"""Native playouts against the reference board and the XLA kernels.

Every move of native playouts from random positions is replayed on the reference board (legal, no own-eye
fill, pass only when forced; the same captures, final area, ownership and first-play colours); the weights
kept incrementally equal the weights recomputed from scratch after every move; the first-move probabilities
equal the XLA kernels' on random positions, and sampled first moves follow them (chi-square); results are
the same in distribution as the XLA kernels' from fixed positions and do not depend on the thread count."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxgo.go import rules
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.evaluator import load_log_gammas
from jaxgo.playouts.native import checks, runner
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.xla import heavy as hp
from jaxgo.playouts.xla import light, light_wide
from jaxgo.playouts.xla import rules as rule_policy

POLICIES = ("light", "heavy", "rules", "safe_rules", "safe_atari_rules")
# the replay's positions (the other policies: the length of their name)
SEED_OFFSETS = {"ladder_rules": 1, "ladder_heavy": 2, "ladder2_heavy": 3}


def policy_arrays(policy: str, size: int, log_gamma=None):
    if policy == "light":
        return runner.light_policy()
    if policy == "heavy":
        tables = hp.policy_tables(load_log_gammas() if log_gamma is None else log_gamma)
        return runner.heavy_policy(tables, size)
    if policy in runner.LADDER_POLICIES:
        base, budget, two_liberties = runner.LADDER_POLICIES[policy]
        if base == "heavy":
            return runner.heavy_policy(hp.policy_tables(load_log_gammas()), size, budget, two_liberties)
        return runner.rule_policy(rule_policy.tables_of_policy(base), budget)
    return runner.rule_policy(rule_policy.tables_of_policy(policy))


def play(policy, boards, last, per_state: int, seed: int = 0, threads: int = 2, record: bool = True):
    stones = np.stack([b.stones for b in boards])
    return runner.play_batch(policy, stones, [b.to_play for b in boards], [b.ko_point for b in boards],
                             [b.passes for b in boards], last, per_state, seed, threads, record_moves=record)


def first_move_pvalue(counts: np.ndarray, probs: np.ndarray, total: int) -> float:
    """Chi-square p-value of first-move ``counts`` int [P] of ``total`` playouts against the probabilities ``probs``
    float [P]; the points expected fewer than 5 times are pooled into one cell (chi-square needs 5 or more)."""
    keep = probs * total >= 5
    observed = np.append(counts[keep], counts[~keep].sum())
    expected = np.append(probs[keep], probs[~keep].sum()) * total
    observed, expected = observed[expected > 0], expected[expected > 0]
    return stats.chisquare(observed, expected).pvalue


def replay(start: ReferenceBoard, raw, row: int) -> int:
    """Replay playout ``row`` of ``raw`` from ``start`` on the reference board; returns its moves."""
    board = start.copy()
    points = board.num_points
    moves = raw.trace[row][raw.trace[row] >= 0]
    first = np.zeros(points, np.int8)
    for ply, move in enumerate(moves):
        candidates = board.legal_mask()[:-1] & ~board.eye_mask(board.to_play)
        where = f"row {row}, ply {ply}, move {move}\n"  # the board is drawn only for a failure's message
        if move == points:
            assert not candidates.any(), f"passed with candidates left: {where}{board.to_ascii()}"
        else:
            assert candidates[move], f"illegal or eye-filling move: {where}{board.to_ascii()}"
            if first[move] == 0:
                first[move] = board.to_play
        board.play(int(move))
    assert board.is_over() or len(moves) == 3 * points, f"row {row} stopped early"
    assert raw.moves[row] == len(moves)
    assert raw.score[row] == pytest.approx(board.area_score() + board.komi)
    np.testing.assert_array_equal(raw.ownership[row], board.ownership())
    np.testing.assert_array_equal(raw.first_colour[row], first)
    return len(moves)


def replay_cases():
    """(policy, size, count): every policy on 9x9, 13x13 and 19x19; the default run keeps 9x9 and the light and
    heavy policies' 19x19, the rest is `slow` (each board size compiles its own kernels)."""
    for policy in POLICIES + tuple(runner.LADDER_POLICIES):
        for size, count in [(9, 12), (13, 4), (19, 2)]:
            slow = size == 13 or (size == 19 and policy not in ("light", "heavy"))
            yield pytest.param(policy, size, count, marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("policy, size, count", list(replay_cases()))
def test_playouts_replay_on_the_reference_board(policy, size, count):
    boards, last = random_positions(size, count, seed=size + SEED_OFFSETS.get(policy, len(policy)))
    raw = play(policy_arrays(policy, size), boards, last, per_state=2, seed=3)
    replayed = sum(replay(boards[row // 2], raw, row) for row in range(2 * count))
    assert replayed > 400  # positions checked per size and policy (thousands over the whole test)


@pytest.mark.parametrize("policy", ["heavy", "rules", "safe_rules", "safe_atari_rules"])
@pytest.mark.parametrize("size, games", [(9, 6), pytest.param(13, 2, marks=pytest.mark.slow)])
def test_incremental_weights_equal_weights_from_scratch(policy, size, games):
    arrays = policy_arrays(policy, size)
    kind = ft.HEAVY if policy == "heavy" else ft.RULES
    boards, _ = random_positions(size, 3, seed=size)
    for board in [ReferenceBoard(size)] + boards:  # the empty board and random positions with kos and captures
        moves, bad = checks.checked_weighted_games(board.stones, board.to_play, board.ko_point, 11, games, kind,
                                                   arrays.tables, ft.line_levels(size), arrays.dist1, arrays.dist2,
                                                   runner.plain_index(size))
        assert moves > games * 10 and bad == 0


def xla_states(boards):
    states = [rules.from_board(b.stones, b.to_play).replace(ko=jnp.int32(b.ko_point)) for b in boards]
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)


@pytest.mark.parametrize("policy", ["heavy", "synthetic", "rules", "safe_rules", "safe_atari_rules"])
@pytest.mark.parametrize("size", [9, pytest.param(13, marks=pytest.mark.slow)])
def test_first_move_probabilities_equal_the_xla_kernels(policy, size):
    boards, last = random_positions(size, 30, seed=3 * size)
    log_gamma = hp.synthetic_log_gammas(1) if policy == "synthetic" else None
    arrays = policy_arrays("heavy" if policy == "synthetic" else policy, size, log_gamma)
    tables = (hp.policy_tables(load_log_gammas() if log_gamma is None else log_gamma) if "rules" not in policy
              else rule_policy.tables_of_policy(policy))
    expected = np.asarray(hp.move_probabilities(xla_states(boards), tables, jnp.asarray(last)))
    for i, board in enumerate(boards):
        got = runner.move_probabilities(arrays, board.stones, board.to_play, board.ko_point, last[i])
        np.testing.assert_allclose(got, expected[i], atol=2e-6, err_msg=board.to_ascii())


def test_light_first_moves_are_uniform_over_legal_non_eye_points():
    boards, last = random_positions(9, 20, seed=5)
    for board in boards:
        got = runner.move_probabilities(runner.light_policy(), board.stones, board.to_play, board.ko_point)
        allowed = board.legal_mask()[:-1] & ~board.eye_mask(board.to_play)
        expected = allowed / max(1, allowed.sum())
        np.testing.assert_allclose(got, expected)


MIDDLE_GAME = """
. . . . . . . . .
. . X O . . . . .
. X . X O . O . .
. . X O . O X . .
. . . X O X X . .
. . X . O O X . .
. . . . X O . . .
. . . . . . . . .
. . . . . . . . .
"""


@pytest.mark.parametrize("policy", ["heavy", "safe_rules", "safe_atari_rules"])
def test_sampled_first_moves_follow_the_probabilities(policy):
    board = ReferenceBoard.from_ascii(MIDDLE_GAME)
    last = np.array([[4 * 9 + 4, 3 * 9 + 6]], np.int32)
    arrays = policy_arrays(policy, 9)
    probs = runner.move_probabilities(arrays, board.stones, board.to_play, -1, last[0])
    raw = play(arrays, [board], last, per_state=6000, seed=1)
    counts = np.bincount(raw.trace[:, 0], minlength=82)[:81]
    assert counts[probs == 0].sum() == 0
    assert first_move_pvalue(counts, probs, len(raw.trace)) > 1e-4


@pytest.mark.parametrize("policy", ["light", "heavy", "rules", "light_wide"]
                         + [pytest.param(p, marks=pytest.mark.slow) for p in ("safe_rules", "safe_atari_rules")])
def test_results_agree_with_the_xla_kernels_in_distribution(policy):
    """light_wide: the native light playouts against the XLA light kernel for wide devices.  The two safe rule
    policies run with ``-m slow``: by default their first moves' probabilities are checked against the XLA
    kernel's (``test_first_move_probabilities_equal_the_xla_kernels``), not whole playouts."""
    board = ReferenceBoard.from_ascii(MIDDLE_GAME)
    last = np.array([[4 * 9 + 4, 3 * 9 + 6]], np.int32)
    count = 1024
    native_policy = "light" if policy == "light_wide" else policy
    raw = play(policy_arrays(native_policy, 9), [board], last, per_state=count, seed=2, record=False)
    state = rules.from_board(board.stones, board.to_play)
    key = jax.random.PRNGKey(9)
    if policy in ("light", "light_wide"):
        xla = (light if policy == "light" else light_wide).run(state, key, 0.0, num_per_state=count)
    else:
        tables = (hp.policy_tables(load_log_gammas()) if policy == "heavy"
                  else rule_policy.tables_of_policy(policy))
        xla = hp.run(state, key, 0.0, gammas=tables, num_per_state=count, last_moves=jnp.asarray(last))
    for native_values, xla_values in ((raw.score > 0, np.asarray(xla.score) > 0), (raw.score, np.asarray(xla.score)),
                                      (raw.moves, np.asarray(xla.num_moves))):
        native_values, xla_values = np.asarray(native_values, float), np.asarray(xla_values, float)
        spread = np.sqrt(native_values.var() / count + xla_values.var() / count)
        assert abs(native_values.mean() - xla_values.mean()) < 4.5 * spread + 1e-9


SLOW_LADDERS = [pytest.param(policy, marks=pytest.mark.slow) for policy in ("ladder_rules", "ladder2_heavy")]


@pytest.mark.parametrize("policy", ["light", "heavy", "ladder_heavy", *SLOW_LADDERS])
def test_results_do_not_depend_on_the_thread_count(policy):
    boards, last = random_positions(9, 3, seed=1)
    arrays = policy_arrays(policy, 9)
    one = play(arrays, boards, last, per_state=8, seed=5, threads=1)
    two = play(arrays, boards, last, per_state=8, seed=5, threads=2)
    np.testing.assert_array_equal(one.trace, two.trace)
    np.testing.assert_array_equal(one.score, two.score)
    other = play(arrays, boards, last, per_state=8, seed=6, threads=2)
    assert not np.array_equal(one.trace, other.trace)
