"""GTP ``attack VERTEX [pns|pp] [max_nodes]`` and ``defend VERTEX [pns|pp] [max_nodes]``.

Answers as GNU Go: ``1 MOVE`` (success with that move) or ``0``.  Ko results (codes 2/3) are not detected.
Defaults: solver ``engine.proof_solver`` or "pns", node budget ``engine.proof_max_nodes`` or 20000,
time budget ``engine.proof_max_seconds`` or 10 s.
"""

from __future__ import annotations

import numpy as np

from jaxgo.coords import gtp_to_point, point_to_gtp

from .board import Board
from .capture import solve_capture


def game_board(game) -> Board:
    stones = np.asarray(game.board()).reshape(-1).tolist()
    return Board(game.size, stones, game.to_play)


def _run(engine, args, attack: bool) -> str:
    from jaxgo.gtp import GtpError

    if not args:
        raise GtpError("vertex required")
    point = gtp_to_point(args[0], engine.size)
    solver = getattr(engine, "proof_solver", "pns")
    max_nodes = getattr(engine, "proof_max_nodes", 20000)
    for extra in args[1:]:
        if extra in ("pns", "pp"):
            solver = extra
        elif extra.isdigit():
            max_nodes = int(extra)
    board = game_board(engine.game)
    if point >= engine.size * engine.size or board.stones[point] == 0:
        raise GtpError("vertex must not be empty")
    res, _ = solve_capture(board, point, attack, solver, max_nodes=max_nodes,
                           max_seconds=getattr(engine, "proof_max_seconds", 10.0))
    success = (res.value is True) if attack else (res.value is False)
    if not success:
        return "0"
    if res.move is None:
        return "1 PASS" if not attack else "1"
    return f"1 {point_to_gtp(res.move, engine.size)}"


def attack(engine, args):
    return _run(engine, args, True)


def defend(engine, args):
    return _run(engine, args, False)


COMMANDS = {"attack": attack, "defend": defend}
