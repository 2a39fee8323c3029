"""Dynamic komi for handicap games: the search plays as if White had extra komi that fades over the game.

In a handicap game the playouts of a Monte-Carlo search are almost all won by Black at first (nine stones are
worth about 60 points), so the root's win rates sit near 1 for Black or near 0 for White and stop telling good
moves from bad: White plays as if the game were lost, Black as if it were won whatever it does.  Pachi and the
KGS engines shift the komi the playouts are scored with (Pachi's ``uct/dynkomi.c``, "linear"): with h handicap
stones, at move m of the game the playouts count White as winning when it loses by less than

    extra(h, m) = v * h * max(0, 1 - m / M)        (v: ``dynamic_komi`` points per stone, M: the fade's length)

so that the search's values start near 1/2 and the handicap is "paid back" gradually.  M is
``dynamic_komi_moves``, or when 0 about 200 moves on 19x19 scaled to the board's points (45 on 9x9).  An even game
has h = 0 and is searched exactly as without dynamic komi; ``dynamic_komi`` = 0 turns it off.  Both sides' searches
use the same shift (it is White's komi), as in Pachi: the side giving the stones plays for a winnable target, the
side taking them keeps playing for a lead instead of drifting.

The handicap of a game is counted from its set-up (``handicap_stones``): two or more Black stones and no White
ones placed before the first move, with White to play first (what ``fixed_handicap``, ``place_free_handicap`` and
``set_free_handicap`` leave); any other set-up (an SGF's AB/AW position, a test board) is an even game here.
"""

from __future__ import annotations

import numpy as np

from jaxgo.go.coords import BLACK, WHITE

FADE_MOVES_19 = 200  # moves over which the extra komi fades to 0 on 19x19 (scaled by the board's points)


def handicap_stones(game) -> int:
    """The number of handicap stones of a game (a ``jaxgo.go.game.Game``): the Black stones of its set-up when
    there are at least two, no White ones and White moved (or is to move) first; else 0 (an even game)."""
    if all(was_move for _, was_move in game.steps()):
        return 0
    start, _ = game.start_position()
    stones = np.asarray(start.stones)
    black, white = int(np.sum(stones == BLACK)), int(np.sum(stones == WHITE))
    return black if black >= 2 and white == 0 and int(start.to_play) == WHITE else 0


def fade_moves(config, size: int) -> float:
    """M: the moves over which the extra komi fades (``dynamic_komi_moves``, or 200 on 19x19 scaled to the
    board's points when 0)."""
    return float(config.dynamic_komi_moves or FADE_MOVES_19 * size * size / 361)


def extra_komi(config, game) -> float:
    """The extra komi (points added to White's komi) of a search of the game's position: ``dynamic_komi`` per
    handicap stone, fading linearly to 0 over ``fade_moves`` moves of the game; 0 in an even game."""
    stones = handicap_stones(game) if config.dynamic_komi else 0
    if not stones:
        return 0.0
    left = max(0.0, 1.0 - len(game.moves) / fade_moves(config, game.size))
    return float(config.dynamic_komi) * stones * left


def shifted_results(winner, score, extra: float) -> tuple[np.ndarray, np.ndarray]:
    """(winner int [...], score float [...]) of playouts re-scored with ``extra`` more komi for White: score float
    [...] is Black - White - komi; winner 1 Black, -1 White, 0 a draw.  ``extra`` 0 returns them unchanged."""
    if not extra:
        return np.asarray(winner), np.asarray(score)
    shifted = np.asarray(score, np.float64) - extra
    return np.sign(shifted).astype(np.int32), shifted
