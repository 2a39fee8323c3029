"""``jaxgo.search.positions``: the host board's children and searchable moves, compiled by rows and columns, give
what the former point-by-point code gave (each point's padded index by division), array for array."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go import rules
from jaxgo.go.reference import random_positions
from jaxgo.playouts.native import board as nb
from jaxgo.search import positions


def former_searchable(st, g) -> np.ndarray:
    """bool [P + 1]: ``positions._searchable_row`` as it was, in Python."""
    size, w, c = int(g[nb.SIZE_N]), int(g[nb.WIDTH]), int(g[nb.TO_PLAY])
    out = np.zeros(size * size + 1, bool)
    for i in range(size * size):
        p = (i // size + 1) * w + i % size + 1
        out[i] = st[nb.COLOUR, p] == nb.EMPTY and nb.is_legal(st, g, p, c, False) and not nb.is_eye(st, g, p, c)
    out[-1] = True
    return out


def former_child(stones, to_play, ko, passes, captures, hashes, move_count, move, zobrist) -> dict:
    """One row of ``positions.children_into`` as it was (board set-up, move, export point by point), in Python
    around the compiled board: the child's ``rules.State`` fields and its searchable moves."""
    points = len(stones)
    size = rules.board_size(points)
    w = size + 2
    st, g = nb.new_board(size)
    nb.set_stones(st, g, stones, to_play, ko, passes, False)
    mover = 0 if to_play > 0 else 1
    h = hashes.copy()
    caught = captures.copy()
    if move >= points:
        nb.play(st, g, nb.PASS, False)
    else:
        nb.play(st, g, nb.padded_point(move, size), False)
        h ^= zobrist[move, mover]
        for j in range(points):
            p = (j // size + 1) * w + j % size + 1
            if stones[j] != 0 and st[nb.COLOUR, p] == nb.EMPTY:
                h ^= zobrist[j, 1 - mover]
                caught[mover] += 1
    out = {name: np.zeros(points, np.int32) for name in ("chain", "lib_count", "lib_sum", "lib_sumsq")}
    out["stones"] = np.zeros(points, np.int8)
    for i in range(points):
        p = (i // size + 1) * w + i % size + 1
        col = st[nb.COLOUR, p]
        if col == nb.EMPTY:
            out["chain"][i] = points
            continue
        out["stones"][i] = 1 if col == nb.BLACK else -1
        rep = st[nb.CHAIN, p]
        r = (rep // w - 1) * size + rep % w - 1
        out["chain"][i] = r
        for q in (p - w, p + w, p - 1, p + 1):
            if st[nb.COLOUR, q] == nb.EMPTY:
                j = (q // w - 1) * size + q % w - 1
                out["lib_count"][r] += 1
                out["lib_sum"][r] += j
                out["lib_sumsq"][r] += j * j
    k = g[nb.KO]
    out.update(ko=-1 if k < 0 else (k // w - 1) * size + k % w - 1, to_play=1 if g[nb.TO_PLAY] == nb.BLACK else -1,
               passes=g[nb.PASSES], captures=caught, hash=h, move_count=move_count + 1,
               searchable=former_searchable(st, g))
    return out


@pytest.mark.parametrize("size", [5, 9, 19])
def test_children_and_searchable_moves_as_the_former_code_made_them(size):
    """Every searchable move (pass included) of random positions with captures and kos: the children of
    ``children_into`` and their searchable moves, and ``searchable_into`` of the parents, equal the former
    code's."""
    boards, _ = random_positions(size, 12 if size < 19 else 4, seed=size + 200)
    rng = np.random.default_rng(size)
    zobrist = rules.zobrist_table(size)
    points = size * size
    parents = {"stones": [], "to_play": [], "ko": [], "passes": [], "captures": [], "hash": [], "move_count": []}
    moves, shown = [], []  # each row's move and its parent as ASCII
    for board in boards:
        stones = np.asarray(board.stones, np.int8)
        st, g = nb.new_board(size)
        nb.set_stones(st, g, stones, int(board.to_play), int(board.ko_point), 0, False)
        legal = former_searchable(st, g)
        searchable = np.zeros((1, points + 1), bool)
        positions.searchable_into(stones[None], np.array([board.to_play], np.int32),
                                  np.array([board.ko_point], np.int32), searchable)
        np.testing.assert_array_equal(searchable[0], legal, err_msg=board.to_ascii())
        for move in np.flatnonzero(legal):
            parents["stones"].append(stones)
            parents["to_play"].append(int(board.to_play))
            parents["ko"].append(int(board.ko_point))
            parents["passes"].append(int(rng.integers(0, 2)))
            parents["captures"].append(rng.integers(0, 30, 2))
            parents["hash"].append(rng.integers(0, 2 ** 32, 2, dtype=np.uint32))
            parents["move_count"].append(int(rng.integers(0, 100)))
            moves.append(move)
            shown.append(board.to_ascii())
    count = len(moves)
    args = [np.asarray(parents["stones"], np.int8)] + [
        np.asarray(parents[name], np.int32) for name in ("to_play", "ko", "passes", "captures")] + [
        np.asarray(parents["hash"], np.uint32), np.asarray(parents["move_count"], np.int32)]
    out = {name: np.zeros((count, points), dtype) for name, dtype in (
        ("stones", np.int8), ("chain", np.int32), ("lib_count", np.int32), ("lib_sum", np.int32),
        ("lib_sumsq", np.int32))}
    out.update(ko=np.zeros(count, np.int32), to_play=np.zeros(count, np.int8), passes=np.zeros(count, np.int32),
               captures=np.zeros((count, 2), np.int32), hash=np.zeros((count, 2), np.uint32),
               move_count=np.zeros(count, np.int32), searchable=np.zeros((count, points + 1), bool))
    names = ("stones", "chain", "lib_count", "lib_sum", "lib_sumsq", "ko", "to_play", "passes", "captures", "hash",
             "move_count")
    positions.children_into(*args, np.asarray(moves, np.int32), zobrist, *[out[name] for name in names],
                            out["searchable"], True)
    captures = 0
    for i in range(count):
        expected = former_child(*[a[i] for a in args], moves[i], zobrist)
        for name, value in expected.items():
            np.testing.assert_array_equal(out[name][i], value, err_msg=f"{name}, move {moves[i]} in\n{shown[i]}")
        captures += int(out["captures"][i].sum() > args[4][i].sum())
    assert count > 100 and captures > 3


@pytest.mark.parametrize("size", [5, 9, 19])
def test_root_moves_are_the_searchable_moves_and_the_childrens_hashes(size):
    """``root_moves`` of random positions with captures and kos, in one compiled call: the searchable moves of
    ``searchable_batch`` and, for every searchable point, the hash of the child ``children_batch`` makes."""
    import jax

    from jaxgo.go.game import new_game
    from jaxgo.search.tree import stack_state

    boards, _ = random_positions(size, 12 if size < 19 else 4, seed=size + 300)
    rng = np.random.default_rng(size)
    empty = jax.tree_util.tree_map(np.asarray, new_game(size=size).state)
    captures = 0
    for board in boards:
        # (the fields both read: the chains and liberties are rebuilt from the stones)
        state = empty.replace(stones=np.asarray(board.stones, np.int8), to_play=np.int8(board.to_play),
                              ko=np.int32(board.ko_point), hash=rng.integers(0, 2 ** 32, 2, dtype=np.uint32))
        searchable, words = positions.root_moves(state)
        expected = positions.searchable_batch(stack_state(state, 1))[0]
        np.testing.assert_array_equal(searchable, expected, err_msg=board.to_ascii())
        moves = np.flatnonzero(expected[:-1]).astype(np.int32)
        children, _ = positions.children_batch(stack_state(state, len(moves)), moves, searchable=False)
        np.testing.assert_array_equal(words[moves], children.hash, err_msg=board.to_ascii())
        assert not words[np.flatnonzero(~expected[:-1])].any()
        captures += int((children.captures.sum(axis=1) > 0).sum())
    assert captures > 3 or size == 19  # (a few random 19x19 positions rarely leave a chain in atari)
