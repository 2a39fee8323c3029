import numpy as np

from jaxgo.go.hostboard import Board
from jaxgo.proof import patterns as P

POSITION = """
.........
..X......
..XO.....
...OX....
..O.X....
.........
....O....
.........
.........
"""


def _transform(board: Board, point: int, k: int):
    """Apply symmetry k (rotations by 90 degrees, then a transpose for k >= 4) to the board and a point."""
    n = board.size
    grid = np.array(board.stones).reshape(n, n)
    mark = np.zeros((n, n), dtype=int)
    mark.flat[point] = 1
    for _ in range(k % 4):
        grid, mark = np.rot90(grid), np.rot90(mark)
    if k >= 4:
        grid, mark = grid.T, mark.T
    return Board(n, grid.reshape(-1).tolist(), board.to_play), int(np.argmax(mark.reshape(-1)))


def test_templates_nested_and_symmetric():
    sizes = [len(P.template(i)) for i in range(P.N_TEMPLATES)]
    assert sizes == sorted(sizes) and sizes[0] == 1 and len(set(sizes)) == P.N_TEMPLATES
    for i in range(P.N_TEMPLATES):
        t = set(P.template(i))
        assert t >= set(P.template(i - 1)) if i else t == {(0, 0)}
        for s in P.SYMMETRIES:
            assert {s(*o) for o in t} == t


def test_keys_invariant_under_8_symmetries():
    b = Board.from_ascii(POSITION, to_play=1)
    goal = 2 * 9 + 3          # white string D7/D6
    moves = [1 * 9 + 3, 4 * 9 + 3, 0, 8 * 9 + 8, 5 * 9 + 5]
    ref = P.board_stack_keys(b, moves, attacker=1, goal=goal)
    assert ref.shape == (len(moves), 8)
    for k in range(8):
        tb, tgoal = _transform(b, goal, k)
        tmoves = [_transform(b, m, k)[1] for m in moves]
        got = P.board_stack_keys(tb, tmoves, attacker=1, goal=tgoal)
        assert (got == ref).all(), k


def test_keys_distinguish_colour_reversal_mover_and_goal():
    b = Board.from_ascii(POSITION, to_play=1)
    goal, move = 2 * 9 + 3, 1 * 9 + 3
    ref = P.board_stack_keys(b, [move], attacker=1, goal=goal)[0]
    swapped = Board(9, [-v for v in b.stones], to_play=1)
    rev = P.board_stack_keys(swapped, [move], attacker=1, goal=2 * 9 + 2)[0]
    # T0 (the empty point) is the same; the larger templates see the reversed colours
    assert rev[0] == ref[0] and (rev[3:] != ref[3:]).all()
    # an attacker stone and a (non-goal) defender stone next to the move give different keys
    lone = Board.from_ascii(".....\n.....\n..X..\n.....\n....O", to_play=1)
    mirror = Board.from_ascii(".....\n.....\n..O..\n.....\n....X", to_play=1)
    k1 = P.board_stack_keys(lone, [7], attacker=1, goal=24)[0]
    k2 = P.board_stack_keys(mirror, [7], attacker=1, goal=24)[0]
    assert k1[0] == k2[0] and k1[1] != k2[1]
    other_mover = P.board_stack_keys(Board(9, b.stones, to_play=-1), [move], attacker=1, goal=goal)[0]
    assert all(other_mover != ref)
    # a goal stone is a state of its own: declaring another string the goal changes the keys that see it
    other_goal = P.board_stack_keys(b, [move], attacker=-1, goal=1 * 9 + 2)[0]
    assert all(other_goal[1:] != ref[1:])


def test_off_board_state_and_pass_key():
    b = Board.from_ascii(POSITION, to_play=1)
    corner = P.board_stack_keys(b, [0], 1, 2 * 9 + 3)[0]
    centre = P.board_stack_keys(b, [5 * 9 + 7], 1, 2 * 9 + 3)[0]   # empty 3x3 around it, like the corner's T0
    assert corner[0] == centre[0] and corner[2] != centre[2]
    keys = P.board_stack_keys(b, [81], 1, 2 * 9 + 3)
    assert (keys[0] == P.PASS_KEYS[0]).all()
