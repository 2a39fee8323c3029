"""GTP ``attack VERTEX [pns|pp] [max_nodes]`` and ``defend VERTEX [pns|pp] [max_nodes]`` (the proof search).

Answers as GNU Go: ``1 MOVE`` (success with that move), ``2 MOVE`` / ``3 MOVE`` (success through a ko that
the side takes first / only if it also wins a ko the opponent takes first, see ``capture.solve_capture_ko``)
or ``0``.  A defence that needs no move answers ``1 PASS``.
Defaults: solver ``pns``, node budget ``DEFAULT_MAX_NODES``, time budget ``MAX_SECONDS``.
"""

from __future__ import annotations

from jaxgo.go.coords import point_to_gtp
from jaxgo.gtp.protocol import GtpError, int_arg, is_integer, vertex_arg

DEFAULT_SOLVER = "pns"
DEFAULT_MAX_NODES = 20000
MAX_NODES = 10_000_000
MAX_SECONDS = 10.0


def solve(session, args: list[str], attack: bool) -> str:
    """GNU Go's answer to ``attack`` (``attack=True``) or ``defend`` of the chain at ``args[0]``; an off-board
    vertex answers GNU Go's ``invalid coordinate``."""
    from jaxgo.go.hostboard import game_board
    from jaxgo.proof.capture import solve_capture_ko

    if not args:
        raise GtpError("vertex required")
    point = vertex_arg(args[0], session.size)
    solver, max_nodes = DEFAULT_SOLVER, DEFAULT_MAX_NODES
    for extra in args[1:]:
        if extra in ("pns", "pp"):
            solver = extra
        elif is_integer(extra):
            max_nodes = int_arg(extra, 1, MAX_NODES, f"max_nodes must be 1..{MAX_NODES}")
        else:
            raise GtpError("syntax error")
    board = game_board(session.game)
    if point >= session.size * session.size or board.stones[point] == 0:
        raise GtpError("vertex must not be empty")
    code, move, _, _, _ = solve_capture_ko(board, point, attack, solver, max_nodes=max_nodes,
                                           max_seconds=MAX_SECONDS)
    if code == 0:
        return "0"
    if move is None:
        return f"{code} PASS"
    return f"{code} {point_to_gtp(move, session.size).upper()}"


def attack(session, args):
    return solve(session, args, True)


def defend(session, args):
    return solve(session, args, False)


COMMANDS = {"attack": attack, "defend": defend}
