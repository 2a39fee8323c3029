"""Heavy playouts on the native board: every move drawn in proportion to its weight.  (The rule policy's weights
work here too, for its move probabilities and the checks; its playouts draw tier by tier, ``tiers``.)

The per-point base weights of both colours (``jaxgo.playouts.native.features``) are kept in ``base`` float64
[2, PP] and recomputed after each move only where the move changed something (``play_and_update``): the 3x3
around the new stone and around captured stones, the liberties of the chains whose liberties it changed (their
one or two liberties named from the exact liberty sums, before and after; a chain of three or more liberties
looks the same to every feature), and the liberties of opponent chains in atari next to a chain that went into
or out of atari (the "capture that saves" level).  Each move then multiplies in what depends on the move number
(``move_weights``): the distance gammas to the last two moves (heavy), the ko point, the atari level while a ko
is on the board, the capture of the last move's chain (heavy), the shape tier next to the last move (rules),
summing the weights row by row; the draw takes a row by the row sums, then a point in it.

The ladder variant (``tables[LADDER]`` > 0, policy ``ladder_heavy``) reads ladders with
``jaxgo.playouts.native.ladder`` before each draw (``ladder_gammas``): an escape from atari that a ladder still
captures weighs as a self-atari instead of an escape, and an atari that captures the last move's chain by
ladder as a capture of that chain instead of an atari (the trained gammas of those features).  Its
two-liberty form (``tables[TWO_LIBERTIES]``, policy ``ladder2_heavy``) also gives the escape gamma to the
extensions that get an own two-liberty chain next to the last move out of a ladder that threatens it.  Its
local form (``tables[LOCAL]``, policy ``local_heavy``) looks at the local tiers of
``jaxgo.playouts.native.local`` before each draw and plays one of their candidates, uniformly, when any has a
positive weight.
"""

from __future__ import annotations

import numpy as np

from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import ladder, local
from jaxgo.playouts.native.random import next_u64, uniform_below, uniform_float

jit = nb.jit


@jit(nrt=True)
def new_work(pp, w):
    """Scratch arrays of one playout thread: (weights float64 [PP], row sums float64 [W], dirty list int32
    [PP], dirty marks int32 [PP], a stamp in [0], captured stones int32 [PP], neighbour chains' liberty
    statistics before a move int32 [4, 4], the same of the chains next to captured stones int32 [4, PP])."""
    return (np.zeros(pp, np.float64), np.zeros(w, np.float64), np.zeros(pp, np.int32), np.zeros(pp, np.int32),
            np.zeros(1, np.int32), np.zeros(pp, np.int32), np.zeros((4, 4), np.int32), np.zeros((4, pp), np.int32))


@jit(nrt=True)
def fill_base(st, g, base, flags, policy, tables, lines):
    """Compute ``base`` float64 [2, PP] and ``flags`` int8 [2, PP] of every point from scratch."""
    fill_base_of(st, g, base, flags, policy, tables, lines, 0)


@jit(nrt=True)
def fill_base_of(st, g, base, flags, policy, tables, lines, c):
    """``fill_base`` for colour c alone (``ft.point_info``; c = 0: both, ``_store``): ``base[c - 1]`` and
    ``flags[c - 1]`` as ``fill_base`` computes them, the other colour's rows 0 -- what ``move_weights`` of c
    reads."""
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    base[:, :] = 0.0
    flags[:, :] = 0
    for r in range(1, size + 1):
        for col in range(1, size + 1):
            p = r * w + col
            if st[nb.COLOUR, p] != nb.EMPTY:
                continue
            if c == 0:
                _store(st, g, p, base, flags, policy, tables, lines)
            else:
                base[c - 1, p], flags[c - 1, p] = ft.point_info(st, g, p, c, policy, tables, lines)


@jit
def _store(st, g, p, base, flags, policy, tables, lines):
    """Recompute both colours' base weight and flags of the empty point p."""
    weight_b, flags_b, weight_w, flags_w = ft.point_infos(st, g, p, policy, tables, lines)
    base[0, p] = weight_b
    flags[0, p] = flags_b
    base[1, p] = weight_w
    flags[1, p] = flags_w


@jit
def _mark(p, dirty, marks, stamp, n):
    if marks[p] != stamp:
        marks[p] = stamp
        dirty[n] = p
        n += 1
    return n


@jit
def _mark_liberties(st, libs, lsum, lsq, dirty, marks, stamp, n):
    """Mark the liberties named by exact liberty statistics with one or two liberties."""
    a, b = nb.liberties_from(libs, lsum, lsq)
    if a >= 0:
        n = _mark(a, dirty, marks, stamp, n)
    if b >= 0:
        n = _mark(b, dirty, marks, stamp, n)
    return n


@jit
def _mark_atari_neighbours(st, chain, w, dirty, marks, stamp, n):
    """Mark the liberty of every opponent chain in atari next to ``chain`` (its capture may save ``chain``)."""
    colour = st[nb.COLOUR]
    opp = 3 - colour[chain]
    s = chain
    while True:
        for k in range(4):
            q = s + nb.neighbour_offset(k, w)
            if colour[q] == opp:
                ch = st[nb.CHAIN, q]
                if st[nb.LIBS, ch] == 1:
                    n = _mark(st[nb.LSUM, ch], dirty, marks, stamp, n)
        s = st[nb.NEXT, s]
        if s == chain:
            return n


@jit
def play_and_update(st, g, q, base, flags, policy, tables, lines, work):
    """Play q (a legal point or ``PASS``) on the exact board and bring ``base`` / ``flags`` up to date."""
    if q == nb.PASS:
        nb.play(st, g, q, True)
        return
    dirty, marks, stamps, captured, old, gain = work[2], work[3], work[4], work[5], work[6], work[7]
    w = g[nb.WIDTH]
    c = g[nb.TO_PLAY]
    # before the move: the neighbour chains' liberty statistics, and the stones about to be captured
    old_ch, old_libs, old_sum, old_sq = old[0], old[1], old[2], old[3]
    n_old = 0
    n_cap = 0
    for k in range(4):
        r = q + nb.neighbour_offset(k, w)
        col = st[nb.COLOUR, r]
        if col == nb.BLACK or col == nb.WHITE:
            ch = st[nb.CHAIN, r]
            fresh = True
            for j in range(n_old):
                if old_ch[j] == ch:
                    fresh = False
            if fresh:
                old_ch[n_old] = ch
                old_libs[n_old] = st[nb.LIBS, ch]
                old_sum[n_old] = st[nb.LSUM, ch]
                old_sq[n_old] = st[nb.LSQ, ch]
                n_old += 1
                if col != c and st[nb.LIBS, ch] == 1:
                    s = ch
                    while True:
                        captured[n_cap] = s
                        n_cap += 1
                        s = st[nb.NEXT, s]
                        if s == ch:
                            break
    n_gain = 0
    if n_cap > 0:
        # own chains next to the stones about to be captured gain liberties: their statistics now
        chain_stamp = nb.next_stamp(st, g)
        for i in range(n_cap):
            z = captured[i]
            for k in range(4):
                r = z + nb.neighbour_offset(k, w)
                if st[nb.COLOUR, r] == c:
                    ch = st[nb.CHAIN, r]
                    if st[nb.MARK, ch] != chain_stamp:
                        st[nb.MARK, ch] = chain_stamp
                        gain[0, n_gain] = ch
                        gain[1, n_gain] = st[nb.LIBS, ch]
                        gain[2, n_gain] = st[nb.LSUM, ch]
                        gain[3, n_gain] = st[nb.LSQ, ch]
                        n_gain += 1
    nb.play(st, g, q, True)
    if stamps[0] >= 2147483000:
        for i in range(marks.shape[0]):
            marks[i] = 0
        stamps[0] = 0
    stamps[0] += 1
    stamp = stamps[0]
    n = 0
    base[0, q] = 0.0
    base[1, q] = 0.0
    flags[0, q] = 0
    flags[1, q] = 0
    for k in range(4):
        n = _mark(q + nb.neighbour_offset(k, w), dirty, marks, stamp, n)
        n = _mark(q + nb.diagonal_offset(k, w), dirty, marks, stamp, n)
    merged = st[nb.CHAIN, q]
    walk_merged = st[nb.LIBS, merged] == 1
    for j in range(n_old):
        n = _mark_liberties(st, old_libs[j], old_sum[j], old_sq[j], dirty, marks, stamp, n)
        ch = old_ch[j]
        if st[nb.COLOUR, ch] == c:
            walk_merged = walk_merged or old_libs[j] == 1
        elif st[nb.COLOUR, ch] == 3 - c:
            # a surviving opponent chain: it lost the liberty q
            n = _mark_liberties(st, st[nb.LIBS, ch], st[nb.LSUM, ch], st[nb.LSQ, ch], dirty, marks, stamp, n)
            if st[nb.LIBS, ch] == 1 and old_libs[j] != 1:
                n = _mark_atari_neighbours(st, ch, w, dirty, marks, stamp, n)
    n = _mark_liberties(st, st[nb.LIBS, merged], st[nb.LSUM, merged], st[nb.LSQ, merged], dirty, marks, stamp, n)
    if walk_merged:
        n = _mark_atari_neighbours(st, merged, w, dirty, marks, stamp, n)
    if n_cap > 0:
        # the captured points and their 3x3; the chains that gained them as liberties: their old one or two
        # liberties (the new ones are captured points), and past an atari they left, the opponent chains in
        # atari next to them (capturing those no longer saves anything)
        for i in range(n_cap):
            z = captured[i]
            n = _mark(z, dirty, marks, stamp, n)
            for k in range(4):
                n = _mark(z + nb.diagonal_offset(k, w), dirty, marks, stamp, n)
                n = _mark(z + nb.neighbour_offset(k, w), dirty, marks, stamp, n)
        for i in range(n_gain):
            n = _mark_liberties(st, gain[1, i], gain[2, i], gain[3, i], dirty, marks, stamp, n)
            if gain[1, i] == 1:
                n = _mark_atari_neighbours(st, st[nb.CHAIN, gain[0, i]], w, dirty, marks, stamp, n)
    for i in range(n):
        p = dirty[i]
        if st[nb.COLOUR, p] == nb.EMPTY:
            _store(st, g, p, base, flags, policy, tables, lines)


@jit
def move_weights(st, g, base, flags, policy, tables, dist1, dist2, plain_of, weights, rowsum):
    """Fill ``weights`` float64 [PP] with the side to move's weight of every point and ``rowsum`` [W] with
    their row sums; returns the total.  dist1 / dist2: float32 [P + 1, PP], the distance gammas of every point
    from a last move given as a board index (row P: none or a pass); plain_of: int32 [PP], padded -> board
    index."""
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    c = g[nb.TO_PLAY]
    own = base[c - 1]
    ko = g[nb.KO]
    points = size * size
    prev = g[nb.LAST]
    prev2 = g[nb.LAST2]
    row1 = plain_of[prev] if prev >= 0 else points
    row2 = plain_of[prev2] if prev2 >= 0 else points
    heavy = policy == ft.HEAVY
    if heavy:
        _product(own, dist1[row1], dist2[row2], weights, w + 1, size * w + size + 1)
    else:
        _copy(own, weights, w + 1, size * w + size + 1)
    # the modifiers, before any sum: the rule tiers differ by 1e8 and more, so a changed weight's difference
    # taken out of a sum would cancel the small weights beside it
    if ko >= 0:
        weights[ko] = 0.0
        if heavy:
            ko_ratio = tables[ft.ATARI + 2] / tables[ft.ATARI + 1]
            own_flags = flags[c - 1]
            for r in range(1, size + 1):
                for p in range(r * w + 1, r * w + 1 + size):
                    if own_flags[p] & ft.ATARI_FLAG:
                        weights[p] *= ko_ratio
    if prev >= 0 and st[nb.COLOUR, prev] != nb.EMPTY:
        if heavy:
            ch = st[nb.CHAIN, prev]
            if st[nb.LIBS, ch] == 1:
                lib = st[nb.LSUM, ch]
                if flags[c - 1, lib] & ft.CAPTURE_ONE:
                    weights[lib] *= tables[ft.CAPTURE + 2] / tables[ft.CAPTURE + 1]
        else:
            chase = tables[ft.ATARI_NEAR] > 0
            for k in range(8):
                p = prev + (nb.neighbour_offset(k, w) if k < 4 else nb.diagonal_offset(k - 4, w))
                if flags[c - 1, p] & ft.PLAIN and weights[p] > 0:
                    shaped = tables[ft.SHAPE + ft.cells_code(st, p, c, w)] > 0
                    if shaped or (chase and flags[c - 1, p] & ft.ATARI_FLAG):
                        weights[p] *= ft.TIER_SHAPE
    return row_sums(weights, rowsum, size, w)


@jit(fastmath=True)
def _product(own, d1, d2, weights, lo, hi):
    """weights[lo:hi] = own * d1 * d2 (unsigned indices: no negative-index checks, so the loop vectorises;
    the border points in between have weight 0)."""
    for p in range(np.uint64(lo), np.uint64(hi)):
        weights[p] = own[p] * d1[p] * d2[p]


@jit(fastmath=True)
def _copy(own, weights, lo, hi):
    for p in range(np.uint64(lo), np.uint64(hi)):
        weights[p] = own[p]


@jit(fastmath=True)
def row_sums(weights, rowsum, size, w):
    """Fill ``rowsum`` [W] with the sums of the board rows of ``weights`` [PP]; returns their total."""
    total = 0.0
    for r in range(1, size + 1):
        s = 0.0
        start = np.uint64(r * w + 1)
        for p in range(start, start + np.uint64(size)):
            s += weights[p]
        rowsum[r] = s
        total += s
    return total


@jit
def weights_by_point(st, g, base, flags, policy, tables, lines, dist1, dist2, plain_of, work, out):
    """Fill ``out`` float64 [>= P] with the side to move's weight of every board point (``r * N + c``), the base
    weights computed from scratch, the side to move's only (``fill_base_of``: ``base`` and ``flags`` hold its
    rows, the other colour's are 0); returns their total.  For a position's move probabilities and priors."""
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    fill_base_of(st, g, base, flags, policy, tables, lines, g[nb.TO_PLAY])
    total = move_weights(st, g, base, flags, policy, tables, dist1, dist2, plain_of, work[0], work[1])
    for i in range(size * size):
        out[i] = work[0][(i // size + 1) * w + i % size + 1]
    return total


@jit
def ladder_gammas(st, g, flags, tables, ladders, weights):
    """The ladder variant's weights: in ``weights`` float64 [PP] (``move_weights`` of the side to move) an escape
    of an own chain in atari that a ladder captures gets the self-atari gamma in place of the escape gamma, and
    an atari that captures the last move's two-liberty chain by ladder the gamma of capturing that chain in
    place of the atari gamma.  Returns whether a weight changed (the row sums are then stale)."""
    budget = int(tables[ft.LADDER])
    c = g[nb.TO_PLAY]
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    changed = False
    prev = g[nb.LAST]
    if prev >= 0 and st[nb.COLOUR, prev] == 3 - c and st[nb.LIBS, st[nb.CHAIN, prev]] == 2:
        atari = tables[ft.ATARI + 2] if g[nb.KO] >= 0 else tables[ft.ATARI + 1]
        a, b = nb.liberties_of(st, st[nb.CHAIN, prev])
        for k in range(2):
            lib = a if k == 0 else b
            if weights[lib] > 0 and flags[c - 1, lib] & ft.ATARI_FLAG and ladder.atari_works(
                    ladders, st, g, prev, lib, budget, budget):
                weights[lib] *= tables[ft.CAPTURE + 2] / atari
                changed = True
    seen = ladders[2][ladders[2].shape[0] - 1]  # a row no read reaches: the escapes looked at
    n_seen = 0
    escape = (tables[ft.SELF_ATARI + 1] * tables[ft.EXTENSION]) / (tables[ft.SELF_ATARI] * tables[ft.EXTENSION + 1])
    for r in range(1, size + 1):
        for p in range(r * w + 1, r * w + 1 + size):
            if st[nb.COLOUR, p] == c and st[nb.CHAIN, p] == p and st[nb.LIBS, p] == 1:
                lib = st[nb.LSUM, p]
                known = False
                for i in range(n_seen):
                    known = known or seen[i] == lib
                if known or weights[lib] <= 0:
                    continue
                seen[n_seen] = lib
                n_seen += 1
                if ladder.escape_laddered(ladders, st, g, lib, budget, budget):
                    weights[lib] *= escape
                    changed = True
    if tables[ft.TWO_LIBERTIES] > 0 and prev >= 0 and st[nb.COLOUR, prev] == 3 - c:
        changed = _defend_two_liberties(st, g, tables, ladders, weights, prev, seen, n_seen) or changed
    return changed


@jit
def _defend_two_liberties(st, g, tables, ladders, weights, prev, seen, start):
    """``ladder_gammas``' two-liberty defence: each own chain next to the last move with two liberties that the
    opponent would capture by ladder; a liberty of it whose extension gets it out of reach
    (``ladder.extension_saves``) takes the escape gamma (once per point; ``seen[start:]`` keeps them)."""
    budget = int(tables[ft.LADDER])
    c = g[nb.TO_PLAY]
    w = g[nb.WIDTH]
    factor = tables[ft.EXTENSION + 1] / tables[ft.EXTENSION]
    changed = False
    n = start
    for k in range(4):
        q = prev + nb.neighbour_offset(k, w)
        if st[nb.COLOUR, q] != c:
            continue
        chain = st[nb.CHAIN, q]
        repeated = False
        for j in range(k):
            r = prev + nb.neighbour_offset(j, w)
            repeated = repeated or (st[nb.COLOUR, r] == c and st[nb.CHAIN, r] == chain)
        if repeated or st[nb.LIBS, chain] != 2 or not ladder.ladder_threatened(ladders, st, g, q, budget, budget):
            continue
        a, b = nb.liberties_of(st, chain)
        for i in range(2):
            lib = a if i == 0 else b
            known = False
            for j in range(start, n):
                known = known or seen[j] == lib
            if known or weights[lib] <= 0:
                continue
            seen[n] = lib
            n += 1
            if ladder.extension_saves(ladders, st, g, lib, q, budget, budget):
                weights[lib] *= factor
                changed = True
    return changed


@jit
def draw(weights, rowsum, total, u, size, w):
    """The point drawn with probability weight / total for a uniform u in [0, 1): a row by the row sums, then
    a point in it (the last positive one when rounding runs past the end)."""
    target = u * total
    row = -1
    for r in range(1, size + 1):
        if rowsum[r] > 0:
            row = r
            if target < rowsum[r]:
                break
            target -= rowsum[r]
    start = row * w + 1
    last = -1
    for p in range(start, start + size):
        if weights[p] > 0:
            last = p
            if target < weights[p]:
                return p
            target -= weights[p]
    return last


@jit
def stored_reply(g, replies, weights):
    """The last good reply to the previous move (``replies`` int32 [2, PP]: per colour to move and previous
    point, a padded point or -1; [0, 0]: none kept) when it is a move the policy may play now (weight > 0),
    else -1."""
    prev = g[nb.LAST]
    if replies.shape[0] == 0 or prev < 0:
        return -1
    reply = replies[g[nb.TO_PLAY] - 1, prev]
    return reply if reply >= 0 and weights[reply] > 0 else -1


@jit
def allowed_pick(found, n, weights, rng):
    """(point, rng): one of ``found[:n]`` whose weight is positive, uniformly (``found`` is reordered), or -1."""
    k = 0
    for i in range(n):
        if weights[found[i]] > 0:
            found[k] = found[i]
            k += 1
    if k == 0:
        return -1, rng
    rng, bits = next_u64(rng)
    return found[uniform_below(bits, k)], rng


@jit
def weighted_playout(st, g, base, flags, policy, tables, lines, dist1, dist2, plain_of, rng, max_moves, first,
                     work, trace, ladders, replies, found):
    """Play the exact board out with moves drawn by weight (heavy or rules); ``base`` / ``flags`` must be
    up to date for the start position (``fill_base``); ``first`` int8 [PP] (zeros) receives the colour that
    first played each point; ``trace`` int32 [M] the first M moves (M = 0: none); ``ladders``
    (``ladder.new_ladder_work`` of at least ``tables[LADDER]``): the ladder variant's reads; ``replies``
    int32 [2, PP] (or [0, 0]): the last good replies (``stored_reply``), played instead of a draw whenever
    the policy allows them; ``found`` int32 [4 * PP]: the local tiers' candidates (``tables[LOCAL]``: played,
    uniformly, instead of a draw when ``local.local_moves`` finds any the policy allows).  Returns (moves
    played, rng)."""
    weights, rowsum = work[0], work[1]
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    read = policy == ft.HEAVY and tables[ft.LADDER] > 0
    look_local = tables[ft.LOCAL] > 0
    moves = 0
    while g[nb.PASSES] < 2 and moves < max_moves:
        total = move_weights(st, g, base, flags, policy, tables, dist1, dist2, plain_of, weights, rowsum)
        if read and ladder_gammas(st, g, flags, tables, ladders, weights):
            total = row_sums(weights, rowsum, size, w)
        if total > 0:
            q = stored_reply(g, replies, weights)
            if q < 0 and look_local:
                n, rng = local.local_moves(st, g, found, rng, tables, lines, ladders)
                q, rng = allowed_pick(found, n, weights, rng)
            if q < 0:
                rng, bits = next_u64(rng)
                q = draw(weights, rowsum, total, uniform_float(bits), size, w)
            if first[q] == 0:
                first[q] = g[nb.TO_PLAY]
        else:
            q = nb.PASS
        if moves < trace.shape[0]:
            trace[moves] = q
        play_and_update(st, g, q, base, flags, policy, tables, lines, work)
        moves += 1
    return moves, rng


def distance_tables(policy_tables, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(float32 [P + 1, PP], float32 [P + 1, PP]): gamma_dist_prev / gamma_dist_prev2 of every padded point
    for every last move (board index; row P: none), as ``jaxgo.playouts.xla.heavy``'s distance rows; 0 on the
    border."""
    from jaxgo.features import moves as mf

    points = size * size
    w = size + 2
    idx = np.arange(points)
    dr = np.abs(idx[:, None] // size - idx[None, :] // size)
    dc = np.abs(idx[:, None] % size - idx[None, :] % size)
    d = np.minimum(dr + dc + np.maximum(dr, dc), mf.MAX_DISTANCE)
    level = np.where(d == 0, mf.SAME_POINT_LEVEL, d - 1)
    level = np.concatenate([level, np.zeros((1, points), level.dtype)])
    padded = ((idx // size + 1) * w + idx % size + 1)
    out = []
    for table in (policy_tables.dist_prev, policy_tables.dist_prev2):
        rows = np.zeros((points + 1, w * w), np.float32)
        rows[:, padded] = np.asarray(table, np.float32)[level]
        out.append(rows)
    return out[0], out[1]
