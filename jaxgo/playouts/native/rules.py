"""Rule playouts (MoGo's tiers, ``jaxgo.playouts.xla.rules``) drawn tier by tier, without weights.

The rule policy's weights (capture 1e24, save 1e16, shape next to the last move 1e8, anything 1, a joined
self-atari times 1e-12 in the safe variant) make it pick uniformly within the first tier that has a candidate.
So instead of keeping every point's weight (``jaxgo.playouts.native.heavy``), each move looks at the tiers
in order:

1. capture: the liberty of an opponent chain in atari (the chains in atari are kept in a set, updated for the
   chains a move touches);
2. save: the liberty of an own chain in atari where the new chain keeps two liberties or captures;
3. shape: the 8 neighbours of the last move that match a MoGo pattern (the chase variant: or put an opponent
   chain in atari without capturing);
4. anything: "sample, then validate" over the empty list as the light playouts do, a point's tier and
   self-atari read by ``features.point_infos``;
then, in the safe variant, the joined self-ataris set aside on the way: those of the shape tier first.
Uniform within a tier; the same distribution as the weights, with far less work per move.

The ladder variant (``tables[LADDER]`` > 0, policy ``ladder_rules``: safe_rules that read ladders with
``jaxgo.playouts.native.ladder``, at most ``tables[LADDER]`` positions a read) changes two tiers: the capture
tier also holds each atari on the last move's chain (two liberties) that captures it by ladder, and the save
tier leaves out the escapes a ladder still captures; those are played only when nothing else is left, with the
joined self-ataris that are no shape move (``ladder_weights`` gives the same tiers as weights).
"""

from __future__ import annotations

import numpy as np

from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import ladder
from jaxgo.playouts.native.random import next_u64, uniform_below

jit = nb.jit


@jit(nrt=True)
def new_atari_set(pp):
    """(members int32 [PP], position of each member or -1 int32 [PP], count in [0]) of chains in atari."""
    return np.zeros(pp, np.int32), np.full(pp, -1, np.int32), np.zeros(1, np.int32)


@jit
def _add(atari, chain):
    members, where, count = atari
    if where[chain] < 0:
        where[chain] = count[0]
        members[count[0]] = chain
        count[0] += 1


@jit
def _remove(atari, chain):
    members, where, count = atari
    i = where[chain]
    if i >= 0:
        last = members[count[0] - 1]
        members[i] = last
        where[last] = i
        where[chain] = -1
        count[0] -= 1


@jit
def fill_atari_set(st, g, atari):
    """The set of every chain in atari on the board (exact liberties), from scratch."""
    members, where, count = atari
    for i in range(count[0]):
        where[members[i]] = -1
    count[0] = 0
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    for r in range(1, size + 1):
        for p in range(r * w + 1, r * w + 1 + size):
            col = st[nb.COLOUR, p]
            if (col == nb.BLACK or col == nb.WHITE) and st[nb.CHAIN, p] == p and st[nb.LIBS, p] == 1:
                _add(atari, p)


@jit
def play_and_track(st, g, q, atari, touched):
    """Play q (a legal point or ``PASS``) on the exact board and keep the set of chains in atari: the chains
    next to q and next to the stones it captures are the ones whose liberties change; touched: int32 [PP]
    scratch."""
    if q == nb.PASS:
        nb.play(st, g, q, True)
        return
    w = g[nb.WIDTH]
    c = g[nb.TO_PLAY]
    n = 0
    for k in range(4):
        r = q + nb.neighbour_offset(k, w)
        col = st[nb.COLOUR, r]
        if col == nb.BLACK or col == nb.WHITE:
            ch = st[nb.CHAIN, r]
            touched[n] = ch
            n += 1
            if col != c and st[nb.LIBS, ch] == 1:  # about to be captured: its neighbours gain liberties
                s = ch
                while True:
                    for j in range(4):
                        t = s + nb.neighbour_offset(j, w)
                        if st[nb.COLOUR, t] == c:
                            touched[n] = st[nb.CHAIN, t]
                            n += 1
                    s = st[nb.NEXT, s]
                    if s == ch:
                        break
    nb.play(st, g, q, True)
    for i in range(n):
        _remove(atari, touched[i])
    touched[n] = q
    for i in range(n + 1):
        stone = touched[i]
        col = st[nb.COLOUR, stone]
        if col == nb.BLACK or col == nb.WHITE:
            chain = st[nb.CHAIN, stone]
            if st[nb.LIBS, chain] == 1:
                _add(atari, chain)


@jit
def _pick(candidates, n, rng):
    rng, bits = next_u64(rng)
    return candidates[uniform_below(bits, n)], rng


@jit
def _unique(candidates, n, p):
    for i in range(n):
        if candidates[i] == p:
            return n
    candidates[n] = p
    return n + 1


@jit
def ladder_ataris(st, g, budget, ladders, out, n):
    """Add to ``out[:n]`` (each once) the ataris on the last move's chain, when it has two liberties, that
    capture it by ladder (the side to move attacks); returns the new count."""
    prev = g[nb.LAST]
    if prev < 0 or st[nb.COLOUR, prev] != 3 - g[nb.TO_PLAY]:
        return n
    chain = st[nb.CHAIN, prev]
    if st[nb.LIBS, chain] != 2:
        return n
    a, b = nb.liberties_of(st, chain)
    for k in range(2):
        lib = a if k == 0 else b
        if ladder.atari_works(ladders, st, g, prev, lib, budget, budget):
            n = _unique(out, n, lib)
    return n


@jit
def choose_tiered(st, g, atari, tables, lines, rng, scratch, ladders):
    """(move, rng): the rule policy's move for the side to move, or ``PASS`` when it has none.  scratch:
    int32 [4, PP] (candidate lists); ladders: ``ladder.new_ladder_work`` (the ladder variant's reads)."""
    if tables[ft.LOCAL] > 0:
        return choose_local(st, g, atari, tables, lines, rng, scratch, ladders)
    c = g[nb.TO_PLAY]
    ko = g[nb.KO]
    budget = int(tables[ft.LADDER])
    found = scratch[0]
    n = _captures(st, g, atari, found, 0)
    if budget > 0:
        n = ladder_ataris(st, g, budget, ladders, found, n)
    if n > 0:
        return _pick(found, n, rng)
    members, _, count = atari
    laddered = scratch[3]
    n_laddered = 0
    for i in range(count[0]):  # 2. saves
        chain = members[i]
        if st[nb.COLOUR, chain] == c:
            lib = st[nb.LSUM, chain]
            if lib != ko and ft.point_info(st, g, lib, c, ft.RULES, tables, lines)[0] == ft.TIER_SAVE:
                if budget > 0 and ladder.escape_fails(ladders, st, g, lib, budget, budget):
                    n_laddered = _unique(laddered, n_laddered, lib)
                else:
                    n = _unique(found, n, lib)
    if n > 0:
        return _pick(found, n, rng)
    n, n_sa = _shape_moves(st, g, tables, lines, scratch)
    if n > 0:
        return _pick(found, n, rng)
    return _any_move(st, g, tables, lines, rng, scratch, n_sa, n_laddered)


@jit
def _captures(st, g, atari, found, n):
    """Add to ``found[:n]`` the liberty of every opponent chain in atari (the ko point aside); the new count."""
    c = g[nb.TO_PLAY]
    ko = g[nb.KO]
    members, _, count = atari
    for i in range(count[0]):
        chain = members[i]
        if st[nb.COLOUR, chain] != c:
            lib = st[nb.LSUM, chain]
            if lib != ko:
                n = _unique(found, n, lib)
    return n


@jit
def _shape_moves(st, g, tables, lines, scratch):
    """(n, n_sa): the shape tier's moves next to the last move in ``scratch[0][:n]`` and its joined self-ataris
    (safe variant) in ``scratch[1][:n_sa]``."""
    c = g[nb.TO_PLAY]
    ko = g[nb.KO]
    w = g[nb.WIDTH]
    safe = tables[ft.SA_FACTOR] < 1.0
    found = scratch[0]
    shape_sa = scratch[1]
    n = 0
    n_sa = 0
    prev = g[nb.LAST]
    chase = tables[ft.ATARI_NEAR] > 0
    if prev >= 0 and st[nb.COLOUR, prev] != nb.EMPTY:  # shapes (chase: and ataris) next to the last move
        for k in range(8):
            p = prev + (nb.neighbour_offset(k, w) if k < 4 else nb.diagonal_offset(k - 4, w))
            if st[nb.COLOUR, p] != nb.EMPTY or p == ko:
                continue
            shaped = tables[ft.SHAPE + ft.cells_code(st, p, c, w)] != 0
            if not shaped and not chase:
                continue
            weight, flags = ft.point_info(st, g, p, c, ft.RULES, tables, lines)
            if weight > 0 and flags & ft.PLAIN and (shaped or flags & ft.ATARI_FLAG):
                if safe and flags & ft.JOINED_SA:
                    shape_sa[n_sa] = p
                    n_sa += 1
                else:
                    found[n] = p
                    n += 1
    return n, n_sa


@jit
def _any_move(st, g, tables, lines, rng, scratch, n_sa, n_laddered):
    """(move, rng): the last tier, "sample, then validate" over the empty list; joined self-ataris (safe
    variant) and the escapes into a ladder in ``scratch[3][:n_laddered]`` set aside, then played from the
    shape tier's self-ataris ``scratch[1][:n_sa]`` first; ``PASS`` when nothing is left."""
    c = g[nb.TO_PLAY]
    ko = g[nb.KO]
    w = g[nb.WIDTH]
    safe = tables[ft.SA_FACTOR] < 1.0
    laddered = scratch[3]
    empties = st[nb.EMPTIES]
    colour = st[nb.COLOUR]
    deferred = scratch[2]
    n_deferred = 0
    m = g[nb.N_EMPTY]
    while m > 0:
        rng, bits = next_u64(rng)
        k = uniform_below(bits, m)
        p = empties[k]
        if n_laddered > 0 and _unique(laddered, n_laddered, p) == n_laddered:  # an escape into a ladder: last
            deferred[n_deferred] = p
            n_deferred += 1
        elif p != ko:
            empty = ((colour[p - w] == nb.EMPTY) + (colour[p + w] == nb.EMPTY) + (colour[p - 1] == nb.EMPTY)
                     + (colour[p + 1] == nb.EMPTY))
            own = (colour[p - w] == c) or (colour[p + w] == c) or (colour[p - 1] == c) or (colour[p + 1] == c)
            # an empty neighbour: legal and no eye; two, or one and no own stone next to it: no joined self-atari
            if empty > 0 and (not safe or empty >= 2 or not own):
                return p, rng
            weight, flags = ft.point_info(st, g, p, c, ft.RULES, tables, lines)
            if weight > 0:
                if not (safe and flags & ft.JOINED_SA):
                    return p, rng
                deferred[n_deferred] = p
                n_deferred += 1
        nb.swap_behind(st, k, m)
        m -= 1
    if n_sa > 0:
        return _pick(scratch[1], n_sa, rng)
    if n_deferred > 0:
        return _pick(deferred, n_deferred, rng)
    return nb.PASS, rng


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
        n = _unique(found, n, lib)
    return n


@jit
def _counter_moves(st, g, chain, found, n, tables, lines):
    """Add, for the side to move's ``chain``, the liberty of each opponent chain next to it in atari (not a
    snapback) and, for each with two liberties, ``_atari_moves`` on it; the new count."""
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
                elif libs == 2:
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
    s = chain
    while True:
        for k in range(4):
            q = s + nb.neighbour_offset(k, w)
            if st[nb.COLOUR, q] == 3 - c:
                ch = st[nb.CHAIN, q]
                if st[nb.LIBS, ch] == 1:
                    n = _capture(st, g, ch, found, n)
        s = st[nb.NEXT, s]
        if s == chain:
            break
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
    return _unique(found, n, lib), rng


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
        n = _unique(found, n, lib)
    return n


@jit
def _own_neighbours(st, p, c, w):
    return ((st[nb.COLOUR, p - w] == c) + (st[nb.COLOUR, p + w] == c) + (st[nb.COLOUR, p - 1] == c)
            + (st[nb.COLOUR, p + 1] == c))


@jit
def _local_ataris(st, g, prev, found, rng, tables, lines, ladders):
    """(n, rng): the local atari tier after the opponent's move ``prev``: the capture of its chain when it is in
    atari, and for each chain next to it in atari, its capture (the opponent's) or its defence (``_defend``)."""
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
def _local_two_liberties(st, g, prev, found, tables, lines):
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
                n = _counter_moves(st, g, ch, found, n, tables, lines)
    return n


@jit
def choose_local(st, g, atari, tables, lines, rng, scratch, ladders):
    """(move, rng): the local variant's move (``local_rules``), tier by tier after the opponent's last move: its
    ataris (``_local_ataris``, LOCAL_PERCENT of the time unless an own chain of three or more stones is in
    atari), its two-liberty fights (``_local_two_liberties``, LOCAL_PERCENT of the time), the shapes next to
    it, the captures anywhere, then anything (joined self-ataris last)."""
    found = scratch[0]
    prev = g[nb.LAST]
    if prev >= 0 and st[nb.COLOUR, prev] == 3 - g[nb.TO_PLAY]:
        n, rng = _local_ataris(st, g, prev, found, rng, tables, lines, ladders)
        if n > 0:
            return _pick(found, n, rng)
        look, rng = _percent(rng, LOCAL_PERCENT)
        if look:
            n = _local_two_liberties(st, g, prev, found, tables, lines)
            if n > 0:
                return _pick(found, n, rng)
    n, n_sa = _shape_moves(st, g, tables, lines, scratch)
    if n > 0:
        return _pick(found, n, rng)
    n = _captures(st, g, atari, found, 0)
    if n > 0:
        return _pick(found, n, rng)
    return _any_move(st, g, tables, lines, rng, scratch, n_sa, 0)


@jit
def tiered_playout(st, g, tables, lines, rng, max_moves, first, trace, atari, scratch, ladders):
    """Play the exact board out with the rule policy, tier by tier; ``first`` int8 [PP] (zeros) receives the
    colour that first played each point, ``trace`` int32 [M] the first M moves.  ``atari`` (``new_atari_set``),
    scratch int32 [4, PP] and ``ladders`` (``ladder.new_ladder_work`` of at least ``tables[LADDER]``) are
    working space.  Returns (moves played, rng)."""
    fill_atari_set(st, g, atari)
    moves = 0
    while g[nb.PASSES] < 2 and moves < max_moves:
        q, rng = choose_tiered(st, g, atari, tables, lines, rng, scratch, ladders)
        if q != nb.PASS and first[q] == 0:
            first[q] = g[nb.TO_PLAY]
        if moves < trace.shape[0]:
            trace[moves] = q
        play_and_track(st, g, q, atari, scratch[3])
        moves += 1
    return moves, rng


@jit
def ladder_weights(st, g, tables, ladders, weights):
    """The ladder variant's tiers as weights: ``weights`` float64 [P] (board points ``r * N + c``) holds the
    safe rule policy's weights of the side to move (``heavy.weights_by_point``); the ataris of
    ``ladder_ataris`` become captures (``TIER_CAPTURE``) and the escapes a ladder captures weigh what a joined
    self-atari off the shape tier weighs (``TIER_ANY * SA_FACTOR``)."""
    budget = int(tables[ft.LADDER])
    if budget <= 0:
        return
    c = g[nb.TO_PLAY]
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    prev = g[nb.LAST]
    if prev >= 0 and st[nb.COLOUR, prev] == 3 - c and st[nb.LIBS, st[nb.CHAIN, prev]] == 2:
        a, b = nb.liberties_of(st, st[nb.CHAIN, prev])
        for k in range(2):
            lib = a if k == 0 else b
            if ladder.atari_works(ladders, st, g, prev, lib, budget, budget):
                weights[(lib // w - 1) * size + lib % w - 1] = ft.TIER_CAPTURE
    for r in range(1, size + 1):
        for p in range(r * w + 1, r * w + 1 + size):
            if st[nb.COLOUR, p] == c and st[nb.CHAIN, p] == p and st[nb.LIBS, p] == 1:
                lib = st[nb.LSUM, p]
                i = (lib // w - 1) * size + lib % w - 1
                if weights[i] == ft.TIER_SAVE and ladder.escape_fails(ladders, st, g, lib, budget, budget):
                    weights[i] = ft.TIER_ANY * tables[ft.SA_FACTOR]
