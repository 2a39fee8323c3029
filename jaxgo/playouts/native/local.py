"""The local tiers of the playouts (``local_rules``, ``local_heavy``): what the side to move answers next to
the opponent's last move before anything else, as MoGo's and Pachi's playouts look there first.

1. ataris (``local_ataris``): the capture of the last move's chain when it is in atari, and for each own
   chain next to it in atari its defence: the captures of its neighbours in atari (only those
   COUNTER_CAPTURE_PERCENT of the time when there are any), else the extension at its liberty when the new
   chain keeps two liberties or captures, is no lone stone's ko and, without a counter-capture, does not run
   into a ladder (``ladder.escape_fails``, ``tables[LADDER]`` positions a read).  Captures that are snapbacks
   (``is_snapback``) are left out.  Looked at LOCAL_PERCENT of the time, always when an own chain of three
   or more stones is in atari there.
2. two-liberty fights (``two_liberty_moves``, LOCAL_PERCENT of the time): ataris on the last move's chain when
   it has two liberties, and for each own chain next to it left with two, the plays on its liberties (no
   hopeless extension) and the captures and ataris of its neighbours; a chain that ``is_miai_safe`` is left
   alone, and no play is a self-atari.

``local_moves`` gives the first tier's candidates (uniform among them is the policies' choice); the rest of
the move is the policy's own (``rules.choose_local``, ``heavy.weighted_playout``).  The rates are the ones
Pachi's playouts use on 9x9 (``playout/moggy.c``); the code is jaxgo's own.
"""

from __future__ import annotations

from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import ladder
from jaxgo.playouts.native.random import next_u64, uniform_below

jit = nb.jit

LOCAL_PERCENT = 90  # how often the local tiers are looked at (the rate of MoGo's and Pachi's playouts on 9x9)
COUNTER_CAPTURE_PERCENT = 40  # how often a chain in atari that can capture a neighbour does only that


@jit
def _percent(rng, percent):
    """(whether a uniform draw in 0..99 is below ``percent``, rng)."""
    rng, bits = next_u64(rng)
    return uniform_below(bits, 100) < percent, rng


@jit
def is_snapback(st, g, chain, c):
    """Whether colour c capturing the opponent ``chain`` (one liberty) loses the capturing stone at once: a
    lone stone whose liberty has no empty neighbour and is no eye of its colour, where the capture takes no
    other chain and joins no own chain of two or more liberties."""
    if st[nb.SIZE, chain] != 1:
        return False
    lib = st[nb.LSUM, chain]
    w = g[nb.WIDTH]
    o = 3 - c
    eye = True
    for k in range(4):
        col = st[nb.COLOUR, lib + nb.neighbour_offset(k, w)]
        if col == nb.EMPTY:
            return False
        if col == c:
            eye = False
    if eye:
        return False
    for k in range(4):
        q = lib + nb.neighbour_offset(k, w)
        col = st[nb.COLOUR, q]
        ch = st[nb.CHAIN, q]
        if col == o and ch != chain and st[nb.LIBS, ch] == 1:
            return False
        if col == c and st[nb.LIBS, ch] > 1:
            return False
    return True


@jit
def _capture(st, g, chain, found, n):
    """Add the liberty of the opponent ``chain`` in atari unless it is the ko point or a snapback."""
    lib = st[nb.LSUM, chain]
    if lib != g[nb.KO] and not is_snapback(st, g, chain, g[nb.TO_PLAY]):
        n = unique(found, n, lib)
    return n


@jit
def _counter_moves(st, g, chain, found, n, tables, lines, ataris):
    """Add, for the side to move's ``chain``, the liberty of each opponent chain next to it in atari (not a
    snapback) and, with ``ataris``, ``_atari_moves`` on each with two liberties; the new count."""
    w = g[nb.WIDTH]
    o = 3 - g[nb.TO_PLAY]
    s = chain
    while True:
        for k in range(4):
            q = s + nb.neighbour_offset(k, w)
            if st[nb.COLOUR, q] == o:
                ch = st[nb.CHAIN, q]
                libs = st[nb.LIBS, ch]
                if libs == 1:
                    n = _capture(st, g, ch, found, n)
                elif libs == 2 and ataris:
                    n = _atari_moves(st, g, ch, found, n, tables, lines)
        s = st[nb.NEXT, s]
        if s == chain:
            return n


@jit
def _defend(st, g, chain, found, n, rng, tables, lines, ladders):
    """(n, rng): add the side to move's answers for its own ``chain`` in atari: the captures of neighbours in
    atari (only those, COUNTER_CAPTURE_PERCENT of the time, when there are any), else the extension at its
    liberty where the new chain keeps two liberties (or captures), is no lone stone's ko and, without a
    counter-capture, does not run into a ladder."""
    before = n
    w = g[nb.WIDTH]
    c = g[nb.TO_PLAY]
    n = _counter_moves(st, g, chain, found, n, tables, lines, False)
    counter = n > before
    if counter:
        only, rng = _percent(rng, COUNTER_CAPTURE_PERCENT)
        if only:
            return n, rng
    lib = st[nb.LSUM, chain]
    if lib == g[nb.KO] or ft.point_info(st, g, lib, c, ft.RULES, tables, lines)[0] < ft.TIER_SAVE:
        return n, rng
    if st[nb.SIZE, chain] == 1 and _surrounded_by(st, lib, c, w):
        return n, rng  # a lone stone in a ko shape: not saved
    budget = int(tables[ft.LADDER])
    if not counter and budget > 0 and ladder.escape_fails(ladders, st, g, lib, budget, budget):
        return n, rng
    return unique(found, n, lib), rng


@jit
def _surrounded_by(st, p, c, w):
    """Whether every on-board neighbour of p is colour c."""
    for k in range(4):
        col = st[nb.COLOUR, p + nb.neighbour_offset(k, w)]
        if col != c and col != nb.OFF:
            return False
    return True


@jit
def _empty_count(st, p, w):
    return ((st[nb.COLOUR, p - w] == nb.EMPTY) + (st[nb.COLOUR, p + w] == nb.EMPTY)
            + (st[nb.COLOUR, p - 1] == nb.EMPTY) + (st[nb.COLOUR, p + 1] == nb.EMPTY))


@jit
def _connects(st, p, chain, colour, w):
    """Whether p touches a chain of ``colour`` other than ``chain`` with two or more liberties."""
    for k in range(4):
        q = p + nb.neighbour_offset(k, w)
        if st[nb.COLOUR, q] == colour:
            ch = st[nb.CHAIN, q]
            if ch != chain and st[nb.LIBS, ch] > 1:
                return True
    return False


@jit
def is_miai_safe(st, g, chain):
    """Whether a two-liberty chain cannot be harmed by an atari: one liberty joins it to another chain of its
    colour with two or more liberties and the other liberty does too or has an empty neighbour of its own."""
    w = g[nb.WIDTH]
    colour = st[nb.COLOUR, chain]
    a, b = nb.liberties_of(st, chain)
    join_a = _connects(st, a, chain, colour, w)
    join_b = _connects(st, b, chain, colour, w)
    open_a = _empty_count(st, a, w) - (1 if _is_next_to(a, b, w) else 0) > 0
    open_b = _empty_count(st, b, w) - (1 if _is_next_to(a, b, w) else 0) > 0
    return (join_a and (join_b or open_b)) or (join_b and open_a)


@jit
def _is_next_to(a, b, w):
    d = a - b
    return d == 1 or d == -1 or d == w or d == -w


@jit
def _atari_moves(st, g, chain, found, n, tables, lines):
    """Add the side to move's plays on the liberties of the two-liberty ``chain`` (of either colour): legal, no
    own eye, no self-atari, and for its owner no hopeless extension (one own stone next to it and one liberty
    more, or two next to the other liberty); the new count."""
    c = g[nb.TO_PLAY]
    w = g[nb.WIDTH]
    owner = st[nb.COLOUR, chain]
    a, b = nb.liberties_of(st, chain)
    for i in range(2):
        lib = a if i == 0 else b
        other = b if i == 0 else a
        if lib == g[nb.KO] or ft.point_info(st, g, lib, c, ft.RULES, tables, lines)[0] <= 0:
            continue
        left, captures = ft.liberties_left(st, g, lib, c)
        if left < 2 and not captures:
            continue
        if owner == c and _own_neighbours(st, lib, c, w) == 1:
            empty = _empty_count(st, lib, w)
            if empty == 1 or (empty == 2 and _is_next_to(lib, other, w)):
                continue
        n = unique(found, n, lib)
    return n


@jit
def _own_neighbours(st, p, c, w):
    return ((st[nb.COLOUR, p - w] == c) + (st[nb.COLOUR, p + w] == c) + (st[nb.COLOUR, p - 1] == c)
            + (st[nb.COLOUR, p + 1] == c))


@jit
def local_ataris(st, g, prev, found, rng, tables, lines, ladders):
    """(n, rng): the local atari tier after the opponent's move ``prev``: the capture of its chain when it is in
    atari, and the defence (``_defend``) of each own chain next to it in atari; n = 0 when the tier is not
    looked at this time (LOCAL_PERCENT, always with an own chain of three or more stones in atari there)."""
    c = g[nb.TO_PLAY]
    w = g[nb.WIDTH]
    n = 0
    force = False
    chain = st[nb.CHAIN, prev]
    if st[nb.LIBS, chain] == 1:
        n = _capture(st, g, chain, found, n)
    for k in range(4):
        q = prev + nb.neighbour_offset(k, w)
        if st[nb.COLOUR, q] == c:
            ch = st[nb.CHAIN, q]
            if st[nb.LIBS, ch] == 1:
                if st[nb.SIZE, ch] >= 3:
                    force = True
                n, rng = _defend(st, g, ch, found, n, rng, tables, lines, ladders)
    if n > 0 and not force:
        look, rng = _percent(rng, LOCAL_PERCENT)
        if not look:
            n = 0
    return n, rng


@jit
def two_liberty_moves(st, g, prev, found, tables, lines):
    """The two-liberty tier after the opponent's move ``prev``: ataris on its chain when it has two liberties,
    and for each own chain next to it left with two, the plays on its liberties and the captures and ataris of
    its neighbours; chains that ``is_miai_safe`` are left alone."""
    c = g[nb.TO_PLAY]
    w = g[nb.WIDTH]
    n = 0
    chain = st[nb.CHAIN, prev]
    if st[nb.LIBS, chain] == 2 and not is_miai_safe(st, g, chain):
        n = _atari_moves(st, g, chain, found, n, tables, lines)
    seen = -1
    for k in range(4):
        q = prev + nb.neighbour_offset(k, w)
        if st[nb.COLOUR, q] == c:
            ch = st[nb.CHAIN, q]
            if ch != seen and st[nb.LIBS, ch] == 2 and not is_miai_safe(st, g, ch):
                seen = ch
                n = _atari_moves(st, g, ch, found, n, tables, lines)
                n = _counter_moves(st, g, ch, found, n, tables, lines, True)
    return n


@jit
def local_moves(st, g, found, rng, tables, lines, ladders):
    """(n, rng): the candidates of the first local tier that has any, in ``found[:n]`` (int32, at least 4 * PP
    long), after the opponent's last move; n = 0 when the last move is no opponent stone or no tier is taken."""
    prev = g[nb.LAST]
    if prev < 0 or st[nb.COLOUR, prev] != 3 - g[nb.TO_PLAY]:
        return 0, rng
    n, rng = local_ataris(st, g, prev, found, rng, tables, lines, ladders)
    if n > 0:
        return n, rng
    look, rng = _percent(rng, LOCAL_PERCENT)
    if not look:
        return 0, rng
    return two_liberty_moves(st, g, prev, found, tables, lines), rng


@jit
def unique(candidates, n, p):
    """Add p to ``candidates[:n]`` unless it is there; the new count."""
    for i in range(n):
        if candidates[i] == p:
            return n
    candidates[n] = p
    return n + 1
