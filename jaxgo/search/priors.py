"""Search priors from the move model: K(s, a) = P(heavy policy plays a in s), for progressive bias.

Progressive bias (Chaslot et al. 2007; Lew's thesis, section 3.3) adds ``c2 * K(s, a) / (n(s+a) + 1)`` to
a node's score; the usual K is the probability of the move under the heavy-playout policy.  Here
K(s, a) = gamma_a / sum_b gamma_b over the moves the tree searches in s (legal, own eyes excluded, and pass),
with gamma_a the Bradley-Terry team strength of ``jaxgo.features.move_features`` under the given gammas (the
shipped ones by default) -- pass included with its own gamma, as in the move model.

The move model of K is ``SearchConfig.prior_model``: the playouts' gammas (``gammas``, None), or a model with
large patterns (``"large"``, the shipped one: 42.5% of professional moves ranked first against 32.2%, and the 4-4
and 3-4 points first on an empty board); by default (``"auto"``) the large one from 13x13 on.  A large model's
strength of a move is the product of its base features' gammas (that file's own, ``Gammas.base_log_gamma``) and
the gamma of its largest frequent pattern (``jaxgo.features.large_levels``, compiled, about 0.1 ms per 19x19
position).

With ``SearchConfig.prior_tactics`` t > 0 the tree's K sees the tactical features more sharply than the move model
learnt them (Pachi's capture, atari-escape and self-atari priors, ``uct/prior.c``): the gammas of capturing a chain
in atari and of extending a chain out of atari are multiplied by e^t, that of a self-atari divided by e^t
(``tactical_log_gamma``); the playouts keep their gammas.

``jaxgo.search.tree_search`` calls ``root_prior`` and ``children_prior`` where nodes are expanded; the same K also
serves as virtual RAVE experience (``prior_pattern``, ``reference.virtual_rave``).  With ``bias_c2 == 0`` and
``prior_pattern == 0`` they return the uniform prior without a device call; ``gamma_prior`` gives K whatever
the configuration (the ``policy`` the analysis server reports).
"""

from __future__ import annotations

import functools
import threading

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.features import gammas as gamma_files
from jaxgo.features import large_levels
from jaxgo.features import moves as mf
from jaxgo.go import rules
from jaxgo.playouts.evaluator import load_log_gammas, resolve_backend
from jaxgo.search import compiled_prior, positions
from jaxgo.search.config import board_default


def uniform(legal) -> np.ndarray:
    """float32 [..., A]: 1 / |legal| on the legal moves."""
    legal = np.asarray(legal, np.float32)
    return legal / np.maximum(legal.sum(axis=-1, keepdims=True), 1.0)


@functools.lru_cache(maxsize=8)
def log_gammas(path: str | None = None) -> np.ndarray:
    """float32 [K]: log-gammas from a ``jaxgo gammas train`` file, or the shipped ones (path None), cached."""
    return load_log_gammas(path)


_model_lock = threading.Lock()


def move_model(name: str | None) -> gamma_files.Gammas:
    """The gamma file of a prior model name, loaded once per process (a second thread asking meanwhile waits for
    the first): ``"large"`` the shipped large-pattern model, ``"base"`` or None the shipped base model, anything
    else a path (a base or a large model)."""
    with _model_lock:
        return _load_model(name)


@functools.lru_cache(maxsize=8)
def _load_model(name: str | None) -> gamma_files.Gammas:
    if name is None or name == "base":
        return gamma_files.load_default()
    return gamma_files.load_named(name)


def preload(prior_model: str | None = "auto") -> None:
    """Load the large-pattern model that ``prior_model`` uses on large boards and build its level table (about 3 s,
    once per process), so that the first 13x13 or 19x19 search or policy does not wait for it: a server runs this
    in a background thread at start-up.  Nothing to do for a model without large patterns."""
    _, model = model_gammas(None, prior_model, LARGE_FROM_SIZE)
    if model is not None:
        large_levels.level_table(model.large)


def large_factors(states: rules.State, searched, model: gamma_files.Gammas) -> np.ndarray:
    """float64 [S, A]: the gamma of each searched point's largest frequent pattern under the large ``model``
    (1 where it has none, for pass and where not searched)."""
    stones = np.asarray(states.stones)
    levels = large_levels.candidate_levels(stones, np.asarray(states.to_play, np.int32), searched, model.large)
    return np.exp(model.group(gamma_files.LARGE_GROUP).astype(np.float64))[levels]


@jax.jit
def _log_strengths(states: rules.State, prev, prev2, log_gamma, pattern_ids):
    def one(state, p1, p2):
        levels, legal = mf.move_features(state, p1, p2, pattern_ids)
        strength = jnp.sum(log_gamma[levels + jnp.asarray(mf.group_offsets())], axis=-1)
        return jnp.where(legal, strength, -jnp.inf)

    return jax.vmap(one)(states, prev, prev2)


def move_log_strengths(states: rules.State, prev, prev2, log_gamma):
    """float32 [S, P+1]: log gamma of every candidate (pass last) of each state; -inf where illegal.

    states batched [S, ...]; prev, prev2 int [S] (P = pass, -1 = none); log_gamma float [K]."""
    return _log_strengths(states, jnp.asarray(prev, jnp.int32), jnp.asarray(prev2, jnp.int32),
                          jnp.asarray(log_gamma, jnp.float32), jnp.asarray(mf.canonical_pattern_table()[0]))


def prior_probabilities(states: rules.State, searched, prev, prev2, log_gamma, backend: str = "xla",
                        large_model: gamma_files.Gammas | None = None) -> np.ndarray:
    """float32 [S, A]: K(s, a), the move model's probabilities normalised over ``searched`` bool [S, A] (the
    moves the tree considers); states batched [S, ...], prev / prev2 int [S].  ``backend``: the gammas from the
    XLA feature code (``move_log_strengths``) or the native board (``positions.move_gammas``, the same
    values, no XLA call); auto as ``resolve_backend``.  With ``large_model`` (a ``Gammas`` with large
    patterns; ``log_gamma`` then its base part) each move's gamma is multiplied by its large pattern's."""
    searched = np.asarray(searched, bool)
    if large_model is not None:
        host = jax.tree_util.tree_map(np.asarray, states)
        base = prior_probabilities(host, searched, prev, prev2, log_gamma, backend).astype(np.float64)
        weights = base * large_factors(host, searched, large_model)
        total = weights.sum(axis=-1, keepdims=True)
        return np.where(total > 0, weights / np.maximum(total, 1e-300), base).astype(np.float32)
    if resolve_backend(backend) == "native":
        last = np.stack([np.asarray(prev, np.int32), np.asarray(prev2, np.int32)], axis=-1)
        weights = np.where(searched, positions.move_gammas(states, last, log_gamma), 0.0)
    else:
        log_strength = np.asarray(move_log_strengths(states, prev, prev2, jnp.asarray(log_gamma)), np.float64)
        log_strength = np.where(searched, log_strength, -np.inf)
        top = np.max(log_strength, axis=-1, keepdims=True)
        weights = np.where(searched, np.exp(log_strength - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = weights.sum(axis=-1, keepdims=True)
    # A searched move the model calls illegal (superko-free simple-ko view differs) keeps a uniform share.
    fallback = uniform(searched)
    return np.where(total > 0, weights / np.maximum(total, 1e-300), fallback).astype(np.float32)


def game_last_moves(game) -> tuple:
    """(last move, the move before) of the game (P = pass, -1 = none): the one source of the root's recent
    moves for the heavy playouts' distance features and the progressive-bias priors."""
    recent = [move for _, move in game.moves[-2:]][::-1] + [-1, -1]
    return recent[0], recent[1]


def root_prior(config, game, searched, last=None, backend: str | None = None) -> np.ndarray:
    """float32 [A]: K(root, a) for the game's position (uniform unless bias or virtual priors are on); ``last`` =
    (last move, the move before) (P = pass, -1 = none), by default the game's last two moves; ``backend`` as in
    ``prior_probabilities`` (None: the config's)."""
    if not config.uses_gammas:
        return uniform(searched)
    return gamma_prior(game, searched, config.gammas, last, backend or config.backend, config.prior_model,
                       tactics_of(config, game.size))


def tactics_of(config, size: int) -> float:
    """The config's ``prior_tactics`` t on an N x N board (its board-size default when left at None)."""
    tactics = config.prior_tactics
    return board_default("prior_tactics", size) if tactics is None else float(tactics)


TACTICAL_GROUPS = {"capture": 1.0, "extension": 1.0, "self_atari": -1.0}  # sign of t in each group's log-gamma
_TACTICAL: dict = {}  # (id of a log-gamma array, t) -> (that array, its tactical version)


def tactical_log_gamma(log_gamma: np.ndarray, tactics: float) -> np.ndarray:
    """float32 [K]: ``log_gamma`` with t = ``tactics`` added to the present levels of the capture and extension
    (escape from atari) groups and taken from the self-atari level (``TACTICAL_GROUPS``); the same array for t = 0.
    One array per (input array, t), so that ``positions.move_gammas`` finds its tables by identity."""
    if not tactics:
        return log_gamma
    key = (id(log_gamma), float(tactics))
    hit = _TACTICAL.get(key)
    if hit is not None and hit[0] is log_gamma:
        return hit[1]
    out = np.array(log_gamma, np.float32)
    sizes, offsets = mf.group_sizes(), mf.group_offsets()
    for name, sign in TACTICAL_GROUPS.items():
        index = mf.GROUPS.index(name)
        start = int(offsets[index])
        out[start + 1:start + int(sizes[index])] += np.float32(sign * tactics)  # level 0 (absent) stays
    if len(_TACTICAL) >= 32:
        _TACTICAL.clear()
    _TACTICAL[key] = (log_gamma, out)
    return out


LARGE_FROM_SIZE = 13  # "auto": the large-pattern model on boards this large and larger (it learnt from 19x19)


def model_gammas(gammas: str | None, prior_model: str | None, size: int, tactics: float = 0.0):
    """(log gammas float32 [K] of the base features, the large model or None) of the priors on an N x N board:
    the playouts' ``gammas`` unless a ``prior_model`` is named (``move_model``); ``"auto"``: ``"large"`` from
    ``LARGE_FROM_SIZE`` on, else the gammas; ``tactics``: ``tactical_log_gamma``'s t."""
    if prior_model == "auto":
        prior_model = "large" if size >= LARGE_FROM_SIZE else None
    if prior_model is None:
        return tactical_log_gamma(log_gammas(gammas), tactics), None
    model = move_model(prior_model)
    return tactical_log_gamma(_base_log_gamma(prior_model), tactics), (model if model.large is not None else None)


@functools.lru_cache(maxsize=8)
def _base_log_gamma(prior_model: str) -> np.ndarray:
    """float32 [K]: the base features' log-gammas of a named model, one array per model (``move_gammas`` finds its
    tables by the array's identity)."""
    return np.asarray(move_model(prior_model).base_log_gamma, np.float32)


def gamma_prior(game, searched, gammas: str | None = None, last=None, backend: str = "auto",
                prior_model: str | None = "auto", tactics: float = 0.0) -> np.ndarray:
    """float32 [A]: the move model's probabilities over ``searched`` bool [A] in the game's position, under the
    gamma file ``gammas`` (None: shipped) or the ``prior_model`` when one is named (``model_gammas``); ``last`` as
    in ``root_prior``; ``backend`` as in ``prior_probabilities``; ``tactics`` as in ``tactical_log_gamma``."""
    prev, prev2 = game_last_moves(game) if last is None else last
    log_gamma, large_model = model_gammas(gammas, prior_model, game.size, tactics)
    compiled = game.size ** 2 + 1 <= compiled_prior.PAIRWISE_BLOCK
    if large_model is None and compiled and resolve_backend(backend) == "native":
        return compiled_prior.position_prior(game.state, searched, (prev, prev2), log_gamma)  # the same, compiled
    state = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], game.state)
    return prior_probabilities(state, np.asarray(searched)[None], [prev], [prev2], log_gamma, backend,
                               large_model)[0]


def children_prior(config, child_states, rows, searched, actions, parent_actions,
                   backend: str | None = None) -> np.ndarray:
    """float32 [R, A]: K for new tree nodes: rows int [R] of the batched ``child_states`` (device batch of
    fixed size), their searched moves bool [R, A], the actions that led to them [R] and the last moves of their
    parents' positions [R] (for a child of the root: the game's last move; -1 = none); ``backend`` as in
    ``prior_probabilities`` (None: the config's)."""
    if not config.uses_gammas:
        return uniform(searched)
    rows = np.asarray(rows)
    backend = resolve_backend(backend or config.backend)
    size = rules.board_size(np.shape(child_states.stones)[-1])
    log_gamma, large_model = model_gammas(config.gammas, config.prior_model, size, tactics_of(config, size))
    if backend == "native" or large_model is not None:  # only the rows asked for
        whole = len(rows) == np.shape(child_states.stones)[0] and np.array_equal(rows, np.arange(len(rows)))
        subset = child_states if whole else jax.tree_util.tree_map(lambda x: np.asarray(x)[rows], child_states)
        return prior_probabilities(subset, searched, actions, parent_actions, log_gamma, backend, large_model)
    count = np.shape(child_states.stones)[0]
    prev = np.full(count, -1, np.int32)
    prev2 = np.full(count, -1, np.int32)
    prev[rows] = actions
    prev2[rows] = parent_actions
    mask = np.zeros((count, np.shape(searched)[-1]), bool)
    mask[rows] = searched
    probs = prior_probabilities(child_states, mask, prev, prev2, log_gamma)
    return probs[rows]
