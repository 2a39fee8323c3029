"""Priors from the large-pattern move model (``SearchConfig.prior_model``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.features import large
from jaxgo.go import coords, rules
from jaxgo.go import game as games
from jaxgo.search import priors
from jaxgo.search.config import SearchConfig

FOUR_FOUR = ("D4", "D16", "Q4", "Q16")


def top_moves(prior, size, count):
    return [coords.point_to_gtp(int(i), size) for i in np.argsort(-prior, kind="stable")[:count]]


def test_large_model_opens_on_the_corner_points():
    game = games.new_game(19)
    searched = np.asarray(rules.searchable_mask(game.state))
    auto = priors.gamma_prior(game, searched)  # "auto": the large model on 19x19
    base = priors.gamma_prior(game, searched, prior_model=None)
    assert set(top_moves(auto, 19, 4)) == set(FOUR_FOUR)
    assert not set(top_moves(base, 19, 20)) & set(FOUR_FOUR)  # the 3x3 model is flat along the third line
    assert auto.sum() == pytest.approx(1.0, abs=1e-5) and base.sum() == pytest.approx(1.0, abs=1e-5)


def test_auto_keeps_the_gammas_on_small_boards():
    game = games.new_game(9)
    for move in ("E5", "C3", "G7"):
        game.play(game.to_play, coords.gtp_to_point(move, 9))
    searched = np.asarray(rules.searchable_mask(game.state))
    np.testing.assert_array_equal(priors.gamma_prior(game, searched),
                                  priors.gamma_prior(game, searched, prior_model=None))


def test_large_priors_equal_the_xla_move_model():
    """K = exp(base strength + large gamma) normalised, with the base strength and the level from the XLA code."""
    model = priors.move_model("large")
    tables = tuple(jnp.asarray(x) for x in model.large.tables())
    large_log = model.group("large")
    rng = np.random.default_rng(3)
    game = games.new_game(19)
    for _ in range(30):
        legal = np.flatnonzero(np.asarray(rules.searchable_mask(game.state))[:-1])
        game.play(game.to_play, int(rng.choice(legal)))
    searched = np.asarray(rules.searchable_mask(game.state))
    prev, prev2 = priors.game_last_moves(game)
    mine = priors.gamma_prior(game, searched, prior_model="large")
    batched = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], game.state)
    strength = np.asarray(priors.move_log_strengths(batched, [prev], [prev2], model.base_log_gamma)[0], np.float64)
    level = np.asarray(jax.jit(large.candidate_levels)(game.state, jnp.asarray(searched), tables))  # one compile
    strength = np.where(searched, strength + large_log[level], -np.inf)
    expected = np.exp(strength - strength.max())
    np.testing.assert_allclose(mine, expected / expected.sum(), rtol=2e-4, atol=1e-7)


def test_prior_model_setting():
    assert SearchConfig().prior_model == "auto"
    config, ignored = SearchConfig().with_overrides({"prior_model": "large"})
    assert config.prior_model == "large" and not ignored
    assert SearchConfig().with_overrides({"prior_model": None})[0].prior_model is None
    with pytest.raises(ValueError, match="prior_model"):
        SearchConfig(prior_model="/no/such/file.npz")
    assert "large-pattern" in SearchConfig(prior_model="large").describe()


def test_preload_builds_the_large_model_once():
    priors.preload(None)  # the base model: nothing to load
    priors.preload("auto")
    model = priors.move_model("large")
    assert "_level_table" in model.large.__dict__  # the level table is built, the first query does not wait
    from jaxgo.server.cli import preload_priors

    thread = preload_priors("large")
    thread.join(60)
    assert not thread.is_alive() and priors.move_model("large") is model
