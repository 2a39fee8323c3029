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
from jaxgo.playouts.native import ladder, local
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
            n = local.unique(out, n, lib)
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
                    n_laddered = local.unique(laddered, n_laddered, lib)
                else:
                    n = local.unique(found, n, lib)
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
                n = local.unique(found, n, lib)
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
        if n_laddered > 0 and local.unique(laddered, n_laddered, p) == n_laddered:  # an escape into a ladder: last
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


@jit
def choose_local(st, g, atari, tables, lines, rng, scratch, ladders):
    """(move, rng): the local variant's move (``local_rules``): the local tiers after the opponent's last move
    (``jaxgo.playouts.native.local``: its ataris, then its two-liberty fights), the shapes next to it, the
    captures anywhere, then anything (joined self-ataris last)."""
    found = scratch[0]
    n, rng = local.local_moves(st, g, found, rng, tables, lines, ladders)
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
