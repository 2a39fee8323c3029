"""Ladder reading on the native board, for the playouts: the reader of ``jaxgo.go.ladder`` in compiled code.

The attacker keeps the goal chain in atari; the defender extends at its liberty or captures an adjacent attacker
chain in atari; the ladder works if every defender reply leads to a working ladder again, and fails as soon as
the goal reaches three liberties.  Moves are tried in point order (padded order is plain order), and at most
``budget`` positions are generated: a ladder the reader cannot finish counts as not working.  So the answers and
the budget's bookkeeping are those of ``jaxgo.go.ladder.ladder_move`` / ``ladder_atari_works`` /
``failed_escapes`` move for move (``tests/playouts/native/test_ladder.py``).

The positions of the read are a stack of board copies (``new_ladder_work``), level k + 1 the position after one
more move than level k; nothing is allocated per read.  ``budget`` + 3 levels suffice for any read of that
budget (every level past the first costs the budget one position).
"""

from __future__ import annotations

import numpy as np

from jaxgo.playouts.native import board as nb

jit = nb.jit


@jit(nrt=True)
def new_ladder_work(pp, budget):
    """Working space of reads of at most ``budget`` positions on boards of PP padded points: (boards int32
    [budget + 3, FIELDS, PP], board globals int32 [budget + 3, G_FIELDS], defender options int32
    [budget + 3, PP], the budget left int32 [1], each level's option count and next option int32
    [budget + 3, 2])."""
    levels = max(budget, 0) + 3
    return (np.zeros((levels, nb.FIELDS, pp), np.int32), np.zeros((levels, nb.G_FIELDS), np.int32),
            np.zeros((levels, pp), np.int32), np.zeros(1, np.int32), np.zeros((levels, 2), np.int32))


@jit
def _copy_level(boards, globals_, src, dst):
    """Level ``dst`` := level ``src`` (every field: the playing code reads them all)."""
    for f in range(boards.shape[1]):
        for p in range(boards.shape[2]):
            boards[dst, f, p] = boards[src, f, p]
    for i in range(globals_.shape[1]):
        globals_[dst, i] = globals_[src, i]


@jit
def _load(work, st, g):
    """Level 0 := the board ``st, g``."""
    boards, globals_ = work[0], work[1]
    for f in range(boards.shape[1]):
        for p in range(boards.shape[2]):
            boards[0, f, p] = st[f, p]
    for i in range(globals_.shape[1]):
        globals_[0, i] = g[i]


@jit
def _empty_neighbours(st, p, w, skip):
    """The empty neighbours of p other than ``skip``."""
    n = 0
    for k in range(4):
        q = p + nb.neighbour_offset(k, w)
        n += st[nb.COLOUR, q] == nb.EMPTY and q != skip
    return n


@jit
def _defender_options(st, g, chain, out):
    """Fill ``out`` with the defender's replies to an atari on ``chain`` (its liberty, and the liberty of each
    adjacent attacker chain in atari), sorted, each once; returns their number."""
    w = g[nb.WIDTH]
    attacker = 3 - st[nb.COLOUR, chain]
    out[0] = st[nb.LSUM, chain]
    n = 1
    s = chain
    while True:
        for k in range(4):
            q = s + nb.neighbour_offset(k, w)
            if st[nb.COLOUR, q] == attacker:
                other = st[nb.CHAIN, q]
                if st[nb.LIBS, other] == 1:
                    n = _insert_sorted(out, n, st[nb.LSUM, other])
        s = st[nb.NEXT, s]
        if s == chain:
            break
    return n


@jit
def _insert_sorted(out, n, p):
    """Insert p into the sorted ``out[:n]`` unless it is there; returns the new length."""
    i = n
    while i > 0 and out[i - 1] > p:
        i -= 1
    if i > 0 and out[i - 1] == p:
        return n
    for j in range(n, i, -1):
        out[j] = out[j - 1]
    out[i] = p
    return n + 1


OPEN = -5  # a frame of the read that still has options to try (no result yet)


@jit
def _open(work, level, goal, depth, only):
    """Open the frame of ``level``: attacker to move on even levels (``ladder_move``'s attack, ``only`` >= 0:
    try that atari alone), defender to move on odd ones.  Returns ``OPEN`` or the frame's result at once (attack:
    the capturing move or -1; defence: 1 when every reply fails, else 0)."""
    boards, globals_, options, _, frames = work
    st = boards[level]
    chain = st[nb.CHAIN, goal]
    if level % 2 == 1:
        if st[nb.LIBS, chain] != 1:
            return 0
        frames[level, 0] = _defender_options(st, globals_[level], chain, options[level])
        frames[level, 1] = 0
        return OPEN
    if st[nb.COLOUR, goal] == nb.EMPTY:
        return -1
    libs = st[nb.LIBS, chain]
    if libs == 1:
        return st[nb.LSUM, chain]
    if libs != 2 or depth <= 0:
        return -1
    a, b = nb.liberties_of(st, chain)
    n = 0
    if only < 0 or a == only:
        options[level, n] = a
        n += 1
    if only < 0 or b == only:
        options[level, n] = b
        n += 1
    frames[level, 0] = n
    frames[level, 1] = 0
    return OPEN


@jit
def _advance(work, level, goal):
    """Try the next option of the open frame of ``level``: (result, False) when the frame is decided, (``OPEN``,
    True) when the option's position is on ``level + 1`` and must be read first."""
    boards, globals_, options, left, frames = work
    st = boards[level]
    g = globals_[level]
    attack = level % 2 == 0
    while frames[level, 1] < frames[level, 0]:
        move = options[level, frames[level, 1]]
        frames[level, 1] += 1
        left[0] -= 1
        if left[0] < 0 or level + 2 >= boards.shape[0]:
            return (-1 if attack else 0), False
        if not nb.is_legal(st, g, move, g[nb.TO_PLAY], True):
            continue
        _copy_level(boards, globals_, level, level + 1)
        after = boards[level + 1]
        nb.play(after, globals_[level + 1], move, True)
        if after[nb.COLOUR, goal] == nb.EMPTY:
            if attack:
                return move, False
            continue
        if not attack and after[nb.LIBS, after[nb.CHAIN, goal]] >= 3:
            return 0, False
        return OPEN, True
    return (-1 if attack else 1), False


@jit
def _read(work, goal, depth, only):
    """The read of ``ladder_move`` from level 0 (attacker to move), depth first without recursion: each level
    keeps its options and the next one to try (``work[4]``); a decided frame hands its result to the one below.
    Returns the capturing move or -1."""
    options, frames = work[2], work[4]
    level = 0
    value = _open(work, 0, goal, depth, only)
    while True:
        if value != OPEN:
            if level == 0:
                return value
            level -= 1
            if level % 2 == 0:  # an attack frame: its atari works when every defence failed
                if value == 1:
                    value = options[level, frames[level, 1] - 1]
                    continue
            elif value < 0:  # a defence frame: a reply the attacker cannot ladder saves the goal
                value = 0
                continue
        value, pushed = _advance(work, level, goal)
        if pushed:
            level += 1
            value = _open(work, level, goal, depth - level // 2, -1)


@jit
def ladder_attack(work, st, g, goal, depth, budget):
    """The side to move (the attacker) of ``st, g``: a point that captures the chain at ``goal`` by ladder, or
    -1 (``jaxgo.go.ladder.ladder_move``: a goal with one liberty gives that liberty, one with three or more -1;
    at most ``budget`` positions read, ``depth`` ataris deep).  ``st, g`` are not changed."""
    _load(work, st, g)
    work[3][0] = budget
    return _read(work, goal, depth, -1)


@jit
def atari_works(work, st, g, goal, atari, depth, budget):
    """Whether the side to move captures the two-liberty chain at ``goal`` by ladder starting with the atari at
    its liberty ``atari`` (``jaxgo.go.ladder.ladder_atari_works``)."""
    chain = st[nb.CHAIN, goal]
    a, b = nb.liberties_of(st, chain)
    if st[nb.LIBS, chain] == 2 and _empty_neighbours(st, b if atari == a else a, g[nb.WIDTH], atari) >= 3:
        return False  # the extension at the other liberty has three: no need to read
    _load(work, st, g)
    work[3][0] = budget
    return _read(work, goal, depth, atari) >= 0


@jit
def escape_fails(work, st, g, p, depth, budget):
    """Whether the side to move, extending at the legal point ``p``, captures nothing and leaves the new chain
    one liberty, or two and a ladder that works for the opponent (a point of ``jaxgo.go.ladder.failed_escapes``
    when p is the liberty of an own chain in atari)."""
    return _escape(work, st, g, p, depth, budget, True)


@jit
def ladder_threatened(work, st, g, goal, depth, budget):
    """Whether the opponent of the side to move, were it to move (no ko), would capture the two-liberty chain
    at ``goal`` by ladder (``jaxgo.go.ladder.ladder_move`` on the board with the other side to move)."""
    chain = st[nb.CHAIN, goal]
    a, b = nb.liberties_of(st, chain)
    w = g[nb.WIDTH]
    if st[nb.LIBS, chain] == 2 and _empty_neighbours(st, a, w, b) >= 3 and _empty_neighbours(st, b, w, a) >= 3:
        return False  # either atari is answered by an extension to three liberties
    _load(work, st, g)
    work[1][0][nb.TO_PLAY] = 3 - g[nb.TO_PLAY]
    work[1][0][nb.KO] = -1
    work[3][0] = budget
    return _read(work, goal, depth, -1) >= 0


@jit
def extension_saves(work, st, g, p, goal, depth, budget):
    """Whether the side to move, playing the legal point ``p``, leaves its chain at ``goal`` out of a ladder's
    reach: the move captures, or the chain has three liberties or more, or two and no working ladder."""
    libs = _liberties_after(work, st, g, p, goal)
    if libs != 2:
        return libs < 0 or libs > 2
    work[3][0] = budget
    return _read(work, goal, depth, -1) < 0


@jit
def _liberties_after(work, st, g, p, at):
    """On the scratch board (``work``'s first level, loaded from ``st``, ``g``) after the side to move plays ``p``:
    -1 when the move captured, else the liberties of the chain at ``at``."""
    _load(work, st, g)
    nb.play(work[0][0], work[1][0], p, True)
    if work[1][0][nb.CAPTURED] > 0:
        return -1
    after = work[0][0]
    return after[nb.LIBS, after[nb.CHAIN, at]]


@jit
def escape_laddered(work, st, g, p, depth, budget):
    """``escape_fails`` without the self-ataris: the new chain keeps two liberties and a ladder captures it."""
    return _escape(work, st, g, p, depth, budget, False)


@jit
def _escape(work, st, g, p, depth, budget, one_liberty_fails):
    if _empty_neighbours(st, p, g[nb.WIDTH], -1) >= 3:
        return False  # three liberties at least
    libs = _liberties_after(work, st, g, p, p)
    if libs < 0:
        return False
    if libs == 1:
        return one_liberty_fails
    if libs != 2:
        return False
    work[3][0] = budget
    return _read(work, p, depth, -1) >= 0
