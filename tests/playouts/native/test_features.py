"""``features.point_info`` (one colour's base weight and flags of a point) and ``heavy.weights_by_point`` (the side
to move's base weights alone): bit for bit what the two-colour ``point_infos`` / ``fill_base`` give."""

from __future__ import annotations

import numpy as np

from jaxgo.go.reference import random_positions
from jaxgo.playouts.evaluator import load_log_gammas
from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import heavy as nw
from jaxgo.playouts.native import runner
from jaxgo.playouts.xla import heavy as hp

TABLES = hp.policy_tables(load_log_gammas())


def _boards(size: int, count: int, seed: int):
    """(st, g) native boards (exact liberties) of random positions, with their last two moves."""
    boards, last = random_positions(size, count, seed)
    for board, (prev, prev2) in zip(boards, last.tolist()):
        st, g = nb.new_board(size)
        nb.set_position(st, g, np.asarray(board.stones, np.int8), int(board.to_play), int(board.ko_point), 0,
                        int(prev), int(prev2), True)
        yield st, g


def test_point_info_is_point_infos_for_one_colour():
    for size in (5, 9, 19):
        lines = ft.line_levels(size)
        arrays = runner.heavy_policy(TABLES, size)
        w = size + 2
        for st, g in _boards(size, 12, size):
            for policy in (ft.HEAVY, ft.RULES):
                for r in range(1, size + 1):
                    for p in range(r * w + 1, r * w + 1 + size):
                        if st[nb.COLOUR, p] != nb.EMPTY:
                            continue
                        both = ft.point_infos(st, g, p, policy, arrays.tables, lines)
                        assert ft.point_info(st, g, p, nb.BLACK, policy, arrays.tables, lines) == both[:2]
                        assert ft.point_info(st, g, p, nb.WHITE, policy, arrays.tables, lines) == both[2:]


def test_weights_by_point_of_the_side_to_move_equal_the_two_colour_fill():
    for size in (5, 9, 19):
        lines = ft.line_levels(size)
        arrays = runner.heavy_policy(TABLES, size)
        w = size + 2
        pp = w * w
        for st, g in _boards(size, 12, 100 + size):
            for policy in (ft.HEAVY, ft.RULES):
                base, flags = np.zeros((2, pp)), np.zeros((2, pp), np.int8)
                work = nw.new_work(pp, w)
                out = np.zeros(size * size)
                total = nw.weights_by_point(st, g, base, flags, policy, arrays.tables, lines, arrays.dist1,
                                            arrays.dist2, runner.plain_index(size), work, out)
                former_base, former_flags = np.zeros((2, pp)), np.zeros((2, pp), np.int8)
                former_work = nw.new_work(pp, w)
                nw.fill_base(st, g, former_base, former_flags, policy, arrays.tables, lines)
                former_total = nw.move_weights(st, g, former_base, former_flags, policy, arrays.tables, arrays.dist1,
                                               arrays.dist2, runner.plain_index(size), former_work[0],
                                               former_work[1])
                c = int(g[nb.TO_PLAY])
                assert total == former_total
                np.testing.assert_array_equal(work[0], former_work[0])
                np.testing.assert_array_equal(base[c - 1], former_base[c - 1])
                np.testing.assert_array_equal(flags[c - 1], former_flags[c - 1])
                assert not base[2 - c].any() and not flags[2 - c].any()
                np.testing.assert_array_equal(out, [former_work[0][(i // size + 1) * w + i % size + 1]
                                                    for i in range(size * size)])
