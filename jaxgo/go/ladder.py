"""Ladders on the host board: does a ladder capture a string, and which atari escapes run into one?

``ladder_move`` reads a ladder the simple way (the proof search's capture goal uses it for g(n), seeds 000/001):
the attacker keeps the string in atari; the defender extends at its liberty or captures an adjacent attacker
string in atari; the ladder works if every defender reply leads to a working ladder again.  The reader is
bounded (``budget`` positions): a ladder it cannot finish counts as not working.

``failed_escapes`` lists the atari escapes of the side to move that a ladder still captures.  Heavy playouts do
not read ladders, so such an escape can look as good in them as one that gets away; the tree search leaves these
moves out of its root when ``SearchConfig.ladder_prune`` is on.
"""

from __future__ import annotations

from jaxgo.go.hostboard import Board


def defender_options(b: Board, goal: int) -> list[int]:
    """Defender's replies to an atari on the goal: extend at the liberty, or capture an adjacent attacker
    string in atari."""
    pts, libs = b.chain(goal)
    opts = set(libs)
    for rep in b.neighbour_chains(pts, -b.stones[goal]):
        _, attacker_libs = b.chain(rep)
        if len(attacker_libs) == 1:
            opts |= attacker_libs
    return sorted(opts)


def ladder_move(board: Board, goal: int, depth: int = 80, budget: int = 100):
    """Attacker to move: a move that captures the goal string by ladder, else None.

    Ladder = the attacker keeps the goal in atari; the defender may extend or capture any adjacent attacker
    string in atari; the ladder works if every defender reply leads to a working ladder again.  A goal
    with one liberty returns that liberty; a goal with more than two liberties returns None.  At most
    ``budget`` positions are generated (then None: unknown, left to the search).
    """
    counter = [budget]
    return _ladder_attack(board, goal, depth, counter)


def ladder_atari_works(board: Board, goal: int, atari: int, depth: int = 80, budget: int = 100) -> bool:
    """Attacker to move, the goal string with two liberties: does the ladder that starts with the atari at the
    liberty ``atari`` capture it?  ``ladder_move`` with only that first atari tried (the same budget)."""
    _, libs = board.chain(goal)
    if len(libs) != 2 or atari not in libs or depth <= 0:
        return False
    b1 = board.play(atari)
    if budget < 1 or b1 is None:
        return False
    counter = [budget - 1]
    return b1.stones[goal] == 0 or _ladder_defended_fails(b1, goal, depth - 1, counter)


def _ladder_attack(board: Board, goal: int, depth: int, counter):
    if board.stones[goal] == 0:
        return None
    _, libs = board.chain(goal)
    if len(libs) == 1:
        return next(iter(libs))
    if len(libs) != 2 or depth <= 0:
        return None
    for atari in sorted(libs):
        counter[0] -= 1
        if counter[0] < 0:
            return None
        b1 = board.play(atari)
        if b1 is None:
            continue
        if b1.stones[goal] == 0 or _ladder_defended_fails(b1, goal, depth - 1, counter):
            return atari
    return None


def _ladder_defended_fails(b: Board, goal: int, depth: int, counter) -> bool:
    """Defender to move with the goal in atari: do all defender replies fail?"""
    _, libs = b.chain(goal)
    if len(libs) != 1:
        return False
    for mv in defender_options(b, goal):
        counter[0] -= 1
        if counter[0] < 0:
            return False
        b2 = b.play(mv)
        if b2 is None:
            continue
        if b2.stones[goal] == 0:
            continue
        _, l2 = b2.chain(goal)
        if len(l2) >= 3:
            return False
        if _ladder_attack(b2, goal, depth, counter) is None:
            return False
    return True


def ladder_captures(board: Board, goal: int, depth: int = 80) -> bool:
    """Attacker to move: does a ladder (or an immediate capture) work?"""
    return ladder_move(board, goal, depth) is not None


def failed_escapes(board: Board, max_stones: int | None = None) -> list[int]:
    """Points (sorted) where the side to move would extend one of its strings in atari and still lose it: the
    move captures no stone and leaves the string with one liberty, or with two and a working ladder for the
    opponent.  ``max_stones``: only strings of at most this many stones before the move (None: all)."""
    colour = board.to_play
    opponents = opponent_stones(board, colour)
    seen, failed = set(), set()
    for point, stone in enumerate(board.stones):
        if stone != colour or point in seen:
            continue
        stones, libs = board.chain(point)
        seen |= stones
        if len(libs) != 1 or (max_stones is not None and len(stones) > max_stones):
            continue
        liberty = next(iter(libs))
        after = board.play(liberty)
        if after is None or opponent_stones(after, colour) < opponents:
            continue
        _, new_libs = after.chain(liberty)
        if len(new_libs) == 1 or (len(new_libs) == 2 and ladder_captures(after, liberty)):
            failed.add(liberty)
    return sorted(failed)


def opponent_stones(board: Board, colour: int) -> int:
    """Stones of the opponent of ``colour`` on the board."""
    return sum(stone == -colour for stone in board.stones)
