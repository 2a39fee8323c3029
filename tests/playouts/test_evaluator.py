"""The Evaluator: padding rows are ignored, and a call sharded over 2 devices (a CPU split into 2 XLA devices,
in a subprocess, since the split must precede JAX start-up) gives results of the same shape and distribution,
in position order."""

import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from jaxgo.go.coords import WHITE
from jaxgo.go.display import game_from_ascii
from jaxgo.playouts.evaluator import device_prefix, interleaved_order, make_evaluator
from jaxgo.playouts.native import features as ft

TIMEOUT = 600

# Two 5x5 positions, White to move in both: Black owns the board in BLACK_AHEAD, White in WHITE_AHEAD.
BLACK_AHEAD = """
. X . X .
X X X X X
. . . . .
. . . . .
. . . . .
"""
WHITE_AHEAD = """
. O . O .
O O O O O
. . . . .
. . . . .
. . . . .
"""


def game_from(board: str):
    """A 5x5 game with the stones of an ASCII board (X Black, O White), White to move."""
    return game_from_ascii(board.strip().splitlines(), to_play=WHITE)


def mixed_states(count: int):
    """[count] states alternating BLACK_AHEAD (even rows) and WHITE_AHEAD (odd rows), as host arrays."""
    black, white = game_from(BLACK_AHEAD).state, game_from(WHITE_AHEAD).state
    pair = jax.tree_util.tree_map(lambda a, b: np.stack([np.asarray(a), np.asarray(b)]), black, white)
    return jax.tree_util.tree_map(lambda x: np.resize(x, (count,) + x.shape[1:]), pair)


def test_interleaved_order_deals_positions_round_robin():
    assert interleaved_order(6, 2).tolist() == [0, 2, 4, 1, 3, 5]
    assert interleaved_order(5, 2).tolist() == [0, 2, 4, 1, 3, 0]  # the last slot is padding
    assert interleaved_order(4, 1).tolist() == [0, 1, 2, 3]


def test_device_prefix_copies_the_first_rows():
    array = jax.numpy.arange(40).reshape(20, 2)
    for rows in (0, 1, 5, 16, 17, 20):
        assert device_prefix(array, rows).tolist() == np.arange(2 * rows).reshape(rows, 2).tolist()


def summarise(policy: str, devices: int, backend: str = "xla") -> dict:
    """Shapes, value ranges, per-position win rates and score moments of 37 active positions (of a padded
    batch of 64) x 32 playouts, and whether other padding rows change any result (same key)."""
    evaluator = make_evaluator(policy, None, devices, backend=backend)
    batch = mixed_states(64)
    other_padding = jax.tree_util.tree_map(lambda x: np.concatenate([x[:37], np.repeat(x[:1], 27, axis=0)]), batch)
    first = evaluator.evaluate(batch, jax.random.PRNGKey(7), 32, komi=0.5, active=37)
    again = evaluator.evaluate(other_padding, jax.random.PRNGKey(7), 32, komi=0.5, active=37)
    return {
        "shape": [list(first.winner.shape), list(first.ownership.shape), list(first.first_colour.shape)],
        "winners": sorted(set(first.winner.ravel().tolist())),
        "owners": sorted(set(first.ownership.ravel().tolist())),
        "black_ahead_black_wins": float((first.winner[0::2] == 1).mean()),
        "white_ahead_black_wins": float((first.winner[1::2] == 1).mean()),
        "mean_score": float(first.score.mean()), "std_score": float(first.score.std()),
        "same_with_other_padding": bool(np.array_equal(first.score, again.score)
                                        and np.array_equal(first.ownership, again.ownership)),
    }


def check_well_formed(result: dict) -> None:
    """[37, 32] results in position order (Black wins where Black is ahead), in range, padding ignored."""
    assert result["shape"] == [[37, 32], [37, 32, 25], [37, 32, 25]]
    assert set(result["winners"]) <= {-1, 0, 1} and set(result["owners"]) <= {-1, 0, 1}
    assert result["black_ahead_black_wins"] > 0.9 and result["white_ahead_black_wins"] < 0.1
    assert result["same_with_other_padding"]


@pytest.mark.parametrize("backend", ["xla", "native"])
def test_padding_rows_are_ignored_and_positions_keep_their_order(backend):
    check_well_formed(summarise("light", 1, backend))


@pytest.mark.parametrize("backend", ["xla", "native"])
def test_safe_rule_playouts_are_well_formed(backend):
    evaluator = make_evaluator("safe_rules", backend=backend)
    assert evaluator.policy == "safe_rules" and float(evaluator.tables.self_atari_factor) < 1e-6
    check_well_formed(summarise("safe_rules", 1, backend))


def test_the_backend_is_native_on_a_cpu_and_results_come_back_alike():
    from jaxgo.playouts.evaluator import resolve_backend

    assert jax.default_backend() == "cpu" and resolve_backend("auto") == "native"
    assert make_evaluator("heavy").backend == "native" and make_evaluator("heavy", backend="xla").backend == "xla"
    assert make_evaluator("heavy") is make_evaluator("heavy", None, 1, 1.0, "native", 0)
    native, xla = summarise("heavy", 1, "native"), summarise("heavy", 1, "xla")
    assert native["shape"] == xla["shape"]
    assert abs(native["mean_score"] - xla["mean_score"]) < 0.2 * xla["std_score"]
    with pytest.raises(ValueError, match="backend"):
        make_evaluator("heavy", backend="tpu")


def test_native_dispatch_returns_before_the_playouts_end():
    evaluator = make_evaluator("light", backend="native")
    pending = evaluator.dispatch(mixed_states(8), jax.random.PRNGKey(0), 2000, komi=0.5)
    assert not pending.future.done()  # 16,000 5x5 playouts take far longer than returning
    batch = pending.collect()
    assert batch.winner.shape == (8, 2000) and pending.future.done()


def test_more_devices_than_visible_is_a_clear_error():
    with pytest.raises(ValueError, match="devices asked for"):
        make_evaluator("light", None, len(jax.devices()) + 1, backend="xla")


TWO_DEVICE_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from jaxgo.util.devices import configure_host_devices
from test_evaluator import summarise
import jax

assert configure_host_devices(2)
print(json.dumps({"devices": len(jax.devices()), **{p: summarise(p, 2) for p in sys.argv[2].split(",")}}))
"""


def run_two_devices(policies: str) -> dict:
    """The ``summarise`` of each policy on a CPU split into 2 devices, from a fresh process."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run([sys.executable, "-c", TWO_DEVICE_SCRIPT, os.path.dirname(__file__), policies], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_sharded_like_one_device(two: dict, policy: str) -> None:
    """Well formed on 2 devices, and the score distribution of 1 device (means within 5 standard errors)."""
    one = summarise(policy, 1)
    check_well_formed(two)
    standard_error = np.hypot(one["std_score"], two["std_score"]) / np.sqrt(37 * 32)
    assert abs(one["mean_score"] - two["mean_score"]) < 5 * standard_error


@pytest.mark.slow
def test_light_playouts_sharded_over_two_cpu_devices():
    out = run_two_devices("light")
    assert out["devices"] == 2
    check_sharded_like_one_device(out["light"], "light")


@pytest.mark.slow
def test_heavy_and_rule_playouts_sharded_over_two_cpu_devices():
    out = run_two_devices("heavy,rules")
    for policy in ("heavy", "rules"):
        check_sharded_like_one_device(out[policy], policy)


def test_playout_temperature_raises_every_gamma_to_one_over_t():
    plain = make_evaluator("heavy", None, 1).tables
    sharp = make_evaluator("heavy", None, 1, 0.5).tables
    flat = make_evaluator("heavy", None, 1, 2.0).tables
    for field in ("pattern", "capture", "self_atari", "atari", "dist_prev", "line"):
        base = np.asarray(getattr(plain, field), np.float64)
        np.testing.assert_allclose(np.asarray(getattr(sharp, field)), base ** 2, rtol=1e-4)
        np.testing.assert_allclose(np.asarray(getattr(flat, field)), np.sqrt(base), rtol=1e-4)
    with pytest.raises(ValueError, match="temperature"):
        make_evaluator("heavy", None, 1, 0.0)


def test_light_kernel_follows_the_backend(monkeypatch):
    """The evaluator plays light playouts with the wide kernel on an accelerator, the bitboard one on a CPU."""
    from jaxgo.playouts import evaluator
    from jaxgo.playouts.xla import light, light_wide

    assert evaluator.light_kernel() is light and evaluator.light_kernel("wide") is light_wide
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert evaluator.light_kernel() is light_wide and evaluator.light_kernel("validate") is light
    with pytest.raises(ValueError, match="light kernel"):
        evaluator.light_kernel("fast")


@pytest.mark.parametrize("backend", ["xla", "native"])
def test_chasing_rule_playouts_are_well_formed(backend):
    evaluator = make_evaluator("safe_atari_rules", backend=backend)
    assert float(evaluator.tables.self_atari_factor) < 1e-6 and float(evaluator.tables.atari_near_previous) == 1.0
    check_well_formed(summarise("safe_atari_rules", 1, backend))


@pytest.mark.parametrize("policy", ["ladder_rules", "ladder_heavy", "ladder2_heavy"])
def test_ladder_playouts_are_well_formed_and_native_only(policy):
    evaluator = make_evaluator(policy, backend="native")
    assert evaluator.native_policy(9).tables[ft.LADDER] == 50  # the ladder budget: reads on
    check_well_formed(summarise(policy, 1, "native"))
    with pytest.raises(ValueError, match=f"'{policy}' reads ladders and is native only"):
        make_evaluator(policy, backend="xla")


def test_reply_playouts_learn_from_batch_to_batch_and_are_native_only():
    evaluator = make_evaluator("lgrf_heavy", backend="native")
    evaluator.reply_tables.clear()
    batch = mixed_states(64)
    other_padding = jax.tree_util.tree_map(lambda x: np.concatenate([x[:37], np.repeat(x[:1], 27, axis=0)]), batch)
    first = evaluator.evaluate(batch, jax.random.PRNGKey(7), 32, komi=0.5, active=37)
    learnt = evaluator.replies(5).copy()
    assert (learnt >= 0).sum() > 10  # the table learnt from the first batch
    evaluator.evaluate(batch, jax.random.PRNGKey(8), 32, komi=0.5, active=37)
    assert not np.array_equal(evaluator.replies(5), learnt)  # and goes on learning
    evaluator.reply_tables.clear()  # from an empty table again: the same results, the padding ignored
    again = evaluator.evaluate(other_padding, jax.random.PRNGKey(7), 32, komi=0.5, active=37)
    np.testing.assert_array_equal(first.score, again.score)
    np.testing.assert_array_equal(evaluator.replies(5), learnt)
    assert first.winner.shape == (37, 32) and first.first_colour.shape == (37, 32, 25)
    assert (first.winner[0::2] == 1).mean() > 0.9 and (first.winner[1::2] == 1).mean() < 0.1
    with pytest.raises(ValueError, match="'lgrf_heavy' keeps last-good-reply tables and is native only"):
        make_evaluator("lgrf_heavy", backend="xla")
