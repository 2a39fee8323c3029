"""GTP ``attack VERTEX [pns|pp] [max_nodes]`` and ``defend VERTEX [pns|pp] [max_nodes]``.

Answers as GNU Go: ``1 MOVE`` (success with that move), ``2 MOVE`` / ``3 MOVE`` (success through a ko that
the side takes first / only if it also wins a ko the opponent takes first, see ``capture.solve_capture_ko``)
or ``0``.  A defence that needs no move answers ``1 PASS``.
Defaults: solver ``engine.proof_solver`` or "pns", node budget ``engine.proof_max_nodes`` or 20000,
time budget ``engine.proof_max_seconds`` or 10 s.
"""

from __future__ import annotations

import numpy as np

from jaxgo.go.coords import gtp_to_point, point_to_gtp

from jaxgo.proof.board import Board
from jaxgo.proof.capture import solve_capture_ko


def game_board(game) -> Board:
    """Host ``Board`` of a ``jaxgo.go.game.Game`` (stones, side to move, simple-ko point)."""
    stones = np.asarray(game.board()).reshape(-1).tolist()
    ko = int(getattr(game.state, "ko", -1))
    return Board(game.size, stones, game.to_play, ko if 0 <= ko < game.size * game.size else -1)


def _run(engine, args, attack: bool) -> str:
    from jaxgo.gtp.engine import GtpError

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
    code, move, _, _, _ = solve_capture_ko(board, point, attack, solver, max_nodes=max_nodes,
                                           max_seconds=getattr(engine, "proof_max_seconds", 10.0))
    if code == 0:
        return "0"
    if move is None:
        return f"{code} PASS"
    return f"{code} {point_to_gtp(move, engine.size).upper()}"


def attack(engine, args):
    return _run(engine, args, True)


def defend(engine, args):
    return _run(engine, args, False)


COMMANDS = {"attack": attack, "defend": defend}
