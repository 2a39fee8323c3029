"""Differential test: the fast jitted rules engine (``jaxgo.go.rules``) against the flood-fill oracle
(``jaxgo.go.reference.ReferenceBoard``).

Random games are generated on the FAST engine in one jitted, vmapped ``lax.scan`` per (size, suicide) batch.
Each step records, for the position before the move: stones, captures, ko point, side to move, passes, legal
mask, eye masks of both colours, ownership and score, and the full ``State`` (for ``check_consistency``);
then it picks the move and plays it.  Every game is then replayed on the reference board and compared
position by position.

Move choice: uniformly random over the candidate points, passing with a small probability (and when no
candidate is left).  Half of the games use every legal point as candidates ("uniform" games: long fights,
own-eye filling, many captures, ko and suicide); the other half leave out the mover's own eyes ("eye-avoiding"
games: they reach living groups, seki-like shapes and a real end by two passes, so the scoring is exercised).

Batches (1,000 games in all under ``-m slow``; one compile per batch; the default run plays about an eighth of
each, ``QUICK_BATCHES``):

=====  =======  =====  =========
size   suicide  games  max moves
=====  =======  =====  =========
5      no       320    100
5      yes      100    100
7      no       240    150
7      yes       60    150
9      no       220    200
13     no        40    250 (capped: games are cut after this many moves)
19     no        20    250 (capped)
=====  =======  =====  =========

A game that ends by two passes stops there; the remaining scan steps are masked out.

``test_fixed_positions_one_ply`` adds hand-written tactical positions (multi-chain captures, snapback, ko,
suicide, false eyes, seki-like shapes) built with ``rules.from_board``: every move is played on both engines
and every child position compared, with and without suicide.
"""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import functools  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxgo.go import rules  # noqa: E402
from jaxgo.go.coords import BLACK, WHITE, point_to_gtp  # noqa: E402
from jaxgo.go.reference import ReferenceBoard  # noqa: E402

KOMI = 7.5
PASS_PROBABILITY = 0.02
CONSISTENCY_SAMPLES = 40  # states per batch checked with rules.check_consistency

# (size, suicide, games, max_moves, seed): the 1,000 games of ``-m slow``
BATCHES = [
    (5, False, 320, 100, 1),
    (5, True, 100, 100, 2),
    (7, False, 240, 150, 3),
    (7, True, 60, 150, 4),
    (9, False, 220, 200, 5),
    (13, False, 40, 250, 6),
    (19, False, 20, 250, 7),
]
# The default run's twin: every size and rule of BATCHES, about an eighth of the games each (over 10,000
# positions), with other seeds, so that the slow run adds new games rather than repeating these.
QUICK_GAMES = {(5, False): 40, (5, True): 20, (7, False): 30, (7, True): 10, (9, False): 24, (13, False): 6,
               (19, False): 4}
QUICK_BATCHES = [(size, suicide, QUICK_GAMES[size, suicide], moves, seed + 10)
                 for size, suicide, _, moves, seed in BATCHES]


def test_batches_cover_at_least_1000_games():
    assert sum(b[2] for b in BATCHES) >= 1000
    assert {b[0] for b in BATCHES} >= {5, 7, 9, 13, 19}
    assert {b[:2] for b in QUICK_BATCHES} == {b[:2] for b in BATCHES}


# ----------------------------------------------------------------------------------------------------------
# Game generation on the fast engine


@functools.partial(jax.jit, static_argnames=("size", "max_moves", "suicide"))
def _generate(keys, avoid_eyes, *, size: int, max_moves: int, suicide: bool):
    """Play ``keys.shape[0]`` random games; return per-step records (leading axes [T, B]) and final states."""
    points = size * size

    def one_game(key, avoid):
        def step(carry, step_key):
            state, done = carry
            legal = rules.legal_mask(state, suicide=suicide)
            own_eyes = rules.eye_mask(state, state.to_play)
            record = dict(
                state=state,
                legal=legal,
                eye_black=rules.eye_mask(state, jnp.int8(BLACK)),
                eye_white=rules.eye_mask(state, jnp.int8(WHITE)),
                ownership=rules.ownership(state),
                score=rules.area_score(state, KOMI),
                active=~done,
            )
            candidates = legal[:points] & ~(avoid & own_eyes)
            pick_key, pass_key = jax.random.split(step_key)
            noise = jax.random.uniform(pick_key, (points,))
            point = jnp.argmax(jnp.where(candidates, noise, -1.0)).astype(jnp.int32)
            do_pass = ~jnp.any(candidates) | (jax.random.uniform(pass_key) < PASS_PROBABILITY)
            move = jnp.where(do_pass, jnp.int32(points), point)
            record["move"] = jnp.where(done, jnp.int32(-1), move)
            played = rules.play(state, move, suicide=suicide)
            new_state = jax.tree_util.tree_map(lambda old, new: jnp.where(done, old, new), state, played)
            new_done = done | (new_state.passes >= 2)
            return (new_state, new_done), record

        init = (rules.new_state(size), jnp.bool_(False))
        (final, _), records = jax.lax.scan(step, init, jax.random.split(key, max_moves))
        final_record = dict(
            state=final,
            legal=rules.legal_mask(final, suicide=suicide),
            eye_black=rules.eye_mask(final, jnp.int8(BLACK)),
            eye_white=rules.eye_mask(final, jnp.int8(WHITE)),
            ownership=rules.ownership(final),
            score=rules.area_score(final, KOMI),
        )
        return records, final_record

    records, final = jax.vmap(one_game)(keys, avoid_eyes)
    return records, final


def _take(tree, *index):
    return jax.tree_util.tree_map(lambda a: a[index], tree)


# ----------------------------------------------------------------------------------------------------------
# Comparison


def _describe(board: ReferenceBoard, history: list[int], game: int, where: str) -> str:
    moves = " ".join(point_to_gtp(m, board.size) for m in history)
    last = point_to_gtp(history[-1], board.size) if history else "(none)"
    mover = "black" if board.to_play == BLACK else "white"
    return (
        f"\ngame {game} {where}, after {len(history)} moves (last move {last} = index "
        f"{history[-1] if history else None}), {mover} to play, reference ko={board.ko_point}, "
        f"captures={board.captures}\nreference board (* = ko point):\n{board.to_ascii()}\nmoves: {moves}"
    )


def _points_text(mask: np.ndarray, size: int) -> str:
    """GTP names of the True entries of a [P] or [P+1] mask (index P is ``pass``)."""
    return " ".join(point_to_gtp(int(p), size) for p in np.flatnonzero(mask))


def _compare(board: ReferenceBoard, rec: dict, history: list[int], game: int, where: str) -> None:
    """Assert that the fast engine's record of one position matches the reference board."""
    size = board.size
    state = rec["state"]

    def fail(what: str) -> str:
        return f"{what}{_describe(board, history, game, where)}"

    stones = np.asarray(state.stones)
    if not np.array_equal(stones, board.stones):
        fast = ReferenceBoard.from_stones(stones)
        diff = _points_text(stones != board.stones, size)
        raise AssertionError(fail(f"stones differ at {diff}; fast engine board:\n{fast.to_ascii()}"))
    fast_captures = (int(state.captures[0]), int(state.captures[1]))
    ref_captures = (board.captures[BLACK], board.captures[WHITE])
    assert fast_captures == ref_captures, fail(f"captures fast={fast_captures} reference={ref_captures}")
    assert int(state.to_play) == board.to_play, fail(f"to_play fast={int(state.to_play)}")
    assert int(state.passes) == board.passes, fail(f"passes fast={int(state.passes)}")
    assert int(state.ko) == board.ko_point, fail(f"ko point fast={int(state.ko)} reference={board.ko_point}")

    legal = np.asarray(rec["legal"])
    ref_legal = board.legal_mask()
    if not np.array_equal(legal, ref_legal):
        raise AssertionError(
            fail(
                f"legal masks differ: fast-only {_points_text(legal & ~ref_legal, size)}; "
                f"reference-only {_points_text(ref_legal & ~legal, size)}"
            )
        )
    for color, key in ((BLACK, "eye_black"), (WHITE, "eye_white")):
        eyes = np.asarray(rec[key])
        ref_eyes = board.eye_mask(color)
        if not np.array_equal(eyes, ref_eyes):
            raise AssertionError(
                fail(
                    f"eye masks ({'black' if color == BLACK else 'white'}) differ: fast-only "
                    f"{_points_text(eyes & ~ref_eyes, size)}; "
                    f"reference-only {_points_text(ref_eyes & ~eyes, size)}"
                )
            )
    owner = np.asarray(rec["ownership"])
    ref_owner = board.ownership()
    if not np.array_equal(owner, ref_owner):
        fast = ReferenceBoard.from_stones(owner)
        raise AssertionError(
            fail(
                f"ownership differs at {_points_text(owner != ref_owner, size)}; fast ownership:\n"
                f"{fast.to_ascii()}\nreference ownership:\n{ReferenceBoard.from_stones(ref_owner).to_ascii()}"
            )
        )
    score = float(rec["score"])
    ref_score = float(np.sum(ref_owner, dtype=np.int64)) - board.komi  # = board.area_score(), without recounting
    assert score == pytest.approx(ref_score), fail(f"score fast={score} reference={ref_score}")


def _batch_id(batch: tuple) -> str:
    return f"{batch[0]}x{batch[0]}{'-suicide' if batch[1] else ''}-{batch[2]}"


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "size,suicide,games,max_moves,seed",
    QUICK_BATCHES + [pytest.param(*b, marks=pytest.mark.slow) for b in BATCHES],
    ids=[_batch_id(b) for b in QUICK_BATCHES + BATCHES],
)
def test_random_games_match_reference(size, suicide, games, max_moves, seed):
    keys = jax.random.split(jax.random.PRNGKey(seed), games)
    avoid_eyes = jnp.arange(games) % 2 == 1
    records, finals = jax.device_get(_generate(keys, avoid_eyes, size=size, max_moves=max_moves, suicide=suicide))
    moves = np.asarray(records["move"])  # [B, T]
    active = np.asarray(records["active"])
    points = size * size

    rng = np.random.default_rng(seed)
    total_steps = int(active.sum())
    sample = set(rng.choice(total_steps, size=min(CONSISTENCY_SAMPLES, total_steps), replace=False).tolist())

    stats = dict(captures=0, ko=0, suicides=0, ended=0, capped=0, passes=0)
    step_index = 0
    for game in range(games):
        board = ReferenceBoard(size, komi=KOMI, suicide=suicide)
        history: list[int] = []
        for t in range(max_moves):
            if not active[game, t]:
                break
            rec = _take(records, game, t)
            _compare(board, rec, history, game, "before move")
            if step_index in sample:
                try:
                    rules.check_consistency(rec["state"])
                except AssertionError as error:
                    context = _describe(board, history, game, "")
                    raise AssertionError(f"check_consistency: {error}{context}") from error
                # The fast textbook legal mask of the reference equals its try-every-move definition.
                assert np.array_equal(board.legal_mask(), board.legal_mask_slow())
            step_index += 1
            move = int(moves[game, t])
            assert 0 <= move <= points
            reason = board.illegal_reason(move)
            assert reason is None, (
                f"fast engine chose a move the reference calls illegal: {point_to_gtp(move, size)} ({reason})"
                + _describe(board, history, game, "before move")
            )
            before = dict(board.captures)
            board.play(move)
            history.append(move)
            stats["passes"] += move == points
            stats["captures"] += board.captures[-board.to_play] > before[-board.to_play]
            stats["suicides"] += board.captures[board.to_play] > before[board.to_play]
            stats["ko"] += board.ko_point >= 0
        final = _take(finals, game)
        _compare(board, final, history, game, "at the end")
        assert float(final["score"]) == pytest.approx(board.area_score())
        if board.is_over():
            stats["ended"] += 1
        else:
            stats["capped"] += 1

    # The games must actually exercise the rules.
    print(f"\n{size}x{size} suicide={suicide}: {games} games, {total_steps} moves, {stats}")
    assert stats["captures"] > games
    if size <= 9:  # the capped 13x13 / 19x19 games stop too early for ko fights and double passes
        assert stats["ko"] > 0
        assert stats["ended"] > 0
    if suicide:
        assert stats["suicides"] > 0


# ----------------------------------------------------------------------------------------------------------
# Hand-written positions, every move one ply deep

FIXED_POSITIONS = [
    # (name, board, side to move)
    ("four chains captured at C4", ". X O X .\nX O . O X\n. X O X .\n. . X . .\n. . . . .", BLACK),
    ("four chains, white to move", ". X O X .\nX O . O X\n. X O X .\n. . X . .\n. . . . .", WHITE),
    ("two chains on the edge", ". . . . .\n. . . . .\n. . . . .\nO O O O .\nX X . X O", WHITE),
    ("snapback throw-in", ". . . . .\n. . . . .\nO O O . .\nX X O . .\n. . X . .", WHITE),
    ("snapback recapture", ". . . . .\n. . . . .\nO O O . .\nX X O . .\nX . X . .", WHITE),
    ("ko", ". . . . .\n. X O . .\nX O . O .\n. X O . .\n. . . . .", BLACK),
    ("corner ko", "X . X . .\nO X . . .\n. . . . .\n. . . . .\n. . . . .", WHITE),
    ("two stones captured, no ko", "O O . O .\nX X O . .\n. . . . .\n. . . . .\n. . . . .", BLACK),
    ("corner suicide", ". X . . .\nX . . . .\n. . . . .\n. . . . .\n. . . . .", WHITE),
    ("multi-stone suicide", "O . X . .\nX X . . .\n. . . . .\n. . . . .\n. . . . .", WHITE),
    ("false eyes", ". X O . .\nX . X O .\n. X . X .\nO . X O .\n. X O . X", BLACK),
    ("seki-like", ". X . O .\nX X . O O\nO X X O .\n. O X O O\nO . X . O", BLACK),
    ("seki-like, white", ". X . O .\nX X . O O\nO X X O .\n. O X O O\nO . X . O", WHITE),
    ("nearly full", "X X X X .\nX O O X X\nX O . O X\nX X O O X\n. X X X X", WHITE),
    ("big capture", "O O O O O\nO X X X O\nO X . X O\nO X X X O\nO O O O .", WHITE),
]


@functools.partial(jax.jit, static_argnames=("suicide",))
def _one_ply(state, *, suicide: bool):
    """Records for ``state`` and for the result of every move (illegal ones included; the caller skips them)."""
    points = state.stones.shape[0]

    def record(s):
        return dict(
            state=s,
            legal=rules.legal_mask(s, suicide=suicide),
            eye_black=rules.eye_mask(s, jnp.int8(BLACK)),
            eye_white=rules.eye_mask(s, jnp.int8(WHITE)),
            ownership=rules.ownership(s),
            score=rules.area_score(s, KOMI),
        )

    children = jax.vmap(lambda move: rules.play(state, move, suicide=suicide))(jnp.arange(points + 1))
    return record(state), jax.vmap(record)(children)


@pytest.mark.parametrize("suicide", [False, True], ids=["no-suicide", "suicide"])
@pytest.mark.parametrize("name,text,to_play", FIXED_POSITIONS, ids=[p[0] for p in FIXED_POSITIONS])
def test_fixed_positions_one_ply(name, text, to_play, suicide):
    board = ReferenceBoard.from_ascii(text, to_play=to_play, komi=KOMI, suicide=suicide)
    state = rules.from_board(board.stones, to_play=to_play)
    rules.check_consistency(state)
    root, children = jax.device_get(_one_ply(state, suicide=suicide))
    _compare(board, root, [], 0, f"{name!r} (suicide={suicide}) root")
    for move in np.flatnonzero(board.legal_mask()):
        child = board.copy()
        child.play(int(move))
        rec = _take(children, int(move))
        _compare(child, rec, [int(move)], 0, f"{name!r} (suicide={suicide}) one ply")
        try:
            rules.check_consistency(rec["state"])
        except AssertionError as error:
            vertex = point_to_gtp(int(move), board.size)
            raise AssertionError(f"check_consistency after {vertex} in {name!r}: {error}") from error
