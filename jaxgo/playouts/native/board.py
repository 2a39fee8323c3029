"""One Go board at a time, compiled by numba: the state the native playouts play on.

Layout (as in Libego and GNU Go): a flat array of (N + 2) ** 2 points with a border of ``OFF`` points, width
``W = N + 2``, so the neighbours of point ``p`` are ``p - W, p + W, p - 1, p + 1`` with no bounds checks.  Board
point ``r * N + c`` of ``jaxgo.go.coords`` is ``(r + 1) * W + c + 1`` here (``to_padded`` / ``to_plain``).

The state of one board is two int32 arrays, so that compiled functions pass it around cheaply:

``st[FIELD, PP]`` (PP = W * W):
    COLOUR      EMPTY 0, BLACK 1, WHITE 2, OFF 3 (colour ``c``'s opponent is ``3 - c``)
    CHAIN       representative point of the stone's chain (junk on empty points)
    NEXT        the next stone of the same chain: every chain is a ring
    SIZE, LIBS, LSUM, LSQ   per chain, at its representative: stones, and the *exact* liberties (distinct empty
                neighbours): their count, index sum and sum of squares.  A chain with one or two liberties
                names them (``liberties_of``): one is ``LSUM``; two are (s -+ sqrt(2 q - s^2)) / 2.
    EMPTY_AT    index of an empty point in the empty list (-1 on stones and border)
    EMPTIES     the empty list (first ``g[N_EMPTY]`` entries): O(1) removal by swapping with the last
    MARK        scratch marks against a stamp (``g[STAMP]``), for "seen once" tests without clearing
``g[G_FIELDS]``: KO (point the side to move may not play, -1), TO_PLAY (1 or 2), N_EMPTY, PASSES (consecutive),
PLY (moves made, passes included), STAMP, CAPTURED (stones removed by the last move), LAST (last move, -1 none,
``PASS`` for a pass), LAST2 (the move before), SIZE_N (N), WIDTH (W).

Liberties are kept exactly, move by move, with local work: a stone takes one liberty from each neighbouring
chain; a merge adds the new stone's empty neighbours and, when two or more chains join, the liberties of the
smaller ones not already next to the growing chain (a walk over the smaller chains, as relabelling needs
anyway); a captured stone becomes a liberty of each distinct chain next to it.  ``check_consistency``
recomputes everything from scratch (for tests).
"""

from __future__ import annotations

import numba
import numpy as np

EMPTY, BLACK, WHITE, OFF = 0, 1, 2, 3
PASS = -2  # the pass move inside native code (a padded index is never negative)

# rows of ``st``
COLOUR, CHAIN, NEXT, SIZE, LIBS, LSUM, LSQ, EMPTY_AT, EMPTIES, MARK = range(10)
FIELDS = 10
# entries of ``g``
KO, TO_PLAY, N_EMPTY, PASSES, PLY, STAMP, CAPTURED, LAST, LAST2, SIZE_N, WIDTH = range(11)
G_FIELDS = 11



def jit(function=None, nrt=False, **options):
    """numba's ``njit`` with the native backend's defaults: no GIL (playouts run on every core), an on-disk
    cache (a second start compiles nothing) and no reference counting of arrays; usable bare or with extra
    options, e.g. ``@jit(fastmath=True)``.

    Without reference counting (numba's ``_nrt=False``) a function only reads and writes the arrays it is given:
    it may take views but may not allocate, fill a slice (``a[:] = 0``) or return an array.  Those that must,
    the set-up functions outside the move loop, say ``@jit(nrt=True)``.  Reference counting is what a call with
    array arguments costs most: an atomic increment and decrement per array, per call; it took 60-70% of a
    heavy playout's time (measured with ``perf`` on 19x19)."""
    compile_ = numba.njit(nogil=True, cache=True, _nrt=nrt, **options)
    return compile_ if function is None else compile_(function)


def width(size: int) -> int:
    return size + 2


def to_padded(point: np.ndarray, size: int) -> np.ndarray:
    """int [...]: padded index of board points ``r * N + c`` (pass N * N -> ``PASS``; negative stays -1)."""
    point = np.asarray(point)
    w = size + 2
    padded = (point // size + 1) * w + point % size + 1
    return np.where(point == size * size, PASS, np.where(point < 0, -1, padded))


def to_plain(padded: np.ndarray, size: int) -> np.ndarray:
    """int [...]: board point ``r * N + c`` of padded indices (``PASS`` -> N * N; negative otherwise -> -1)."""
    padded = np.asarray(padded)
    w = size + 2
    plain = (padded // w - 1) * size + padded % w - 1
    return np.where(padded == PASS, size * size, np.where(padded < 0, -1, plain))


@jit(nrt=True)
def new_board(size):
    """(st int32 [FIELDS, (N+2)^2], g int32 [G_FIELDS]): the empty N x N board, Black to play."""
    w = size + 2
    pp = w * w
    st = np.zeros((FIELDS, pp), np.int32)
    g = np.zeros(G_FIELDS, np.int32)
    g[SIZE_N] = size
    g[WIDTH] = w
    clear(st, g)
    return st, g


@jit
def clear(st, g):
    """Make ``st, g`` the empty board, Black to play.  (Rows and columns by nested loops: a division per point
    by the run-time width cost more than the rest of the set-up.)"""
    size = g[SIZE_N]
    w = g[WIDTH]
    for p in range(w * w):
        _new_chain(st, p, 0)
        st[MARK, p] = 0
        st[COLOUR, p] = OFF
        st[EMPTY_AT, p] = -1
    n = 0
    for r in range(1, size + 1):
        for p in range(r * w + 1, r * w + size + 1):
            st[COLOUR, p] = EMPTY
            st[EMPTY_AT, p] = n
            st[EMPTIES, n] = p
            n += 1
    g[N_EMPTY] = n
    g[KO] = -1
    g[TO_PLAY] = BLACK
    g[PASSES] = 0
    g[PLY] = 0
    g[STAMP] = 0
    g[CAPTURED] = 0
    g[LAST] = -1
    g[LAST2] = -1


@jit
def _new_chain(st, p, size):
    """Make p the representative of a chain of ``size`` stones (p alone in its ring) with no liberties yet."""
    st[CHAIN, p] = p
    st[NEXT, p] = p
    st[SIZE, p] = size
    st[LIBS, p] = 0
    st[LSUM, p] = 0
    st[LSQ, p] = 0


@jit(nrt=True)
def copy_board(src_st, src_g, st, g):
    """Copy the board ``src_st, src_g`` into ``st, g`` (same size)."""
    st[:, :] = src_st
    g[:] = src_g


@jit
def next_stamp(st, g):
    """A fresh mark value (the marks are cleared when the stamp would overflow)."""
    if g[STAMP] >= 2147483000:
        st[MARK, :] = 0
        g[STAMP] = 0
    g[STAMP] += 1
    return g[STAMP]


@jit
def _remove_empty(st, g, p):
    i = st[EMPTY_AT, p]
    last = g[N_EMPTY] - 1
    q = st[EMPTIES, last]
    st[EMPTIES, i] = q
    st[EMPTY_AT, q] = i
    st[EMPTY_AT, p] = -1
    g[N_EMPTY] = last


@jit
def _add_empty(st, g, p):
    n = g[N_EMPTY]
    st[EMPTIES, n] = p
    st[EMPTY_AT, p] = n
    g[N_EMPTY] = n + 1


@jit
def _add_liberty(st, chain, p):
    st[LIBS, chain] += 1
    st[LSUM, chain] += p
    st[LSQ, chain] += p * p


@jit
def _take_liberty(st, chain, p):
    st[LIBS, chain] -= 1
    st[LSUM, chain] -= p
    st[LSQ, chain] -= p * p


@jit
def liberties_of(st, chain):
    """(a, b): the liberties of a chain with one (a, -1) or two (a < b) liberties; (-1, -1) otherwise."""
    return liberties_from(st[LIBS, chain], st[LSUM, chain], st[LSQ, chain])


@jit
def liberties_from(libs, lsum, lsq):
    """(a, b): the liberties named by exact liberty statistics (count, index sum, sum of squares): one (a, -1)
    or two (a < b, from a + b = s and a^2 + b^2 = q); (-1, -1) for more."""
    if libs == 1:
        return lsum, -1
    if libs == 2:
        d = int(np.sqrt(2.0 * lsq - lsum * lsum) + 0.5)
        return (lsum - d) // 2, (lsum + d) // 2
    return -1, -1


@jit
def _touches_chain(st, e, chain, w):
    """Whether empty point ``e`` is next to a stone of ``chain``."""
    return (st[CHAIN, e - w] == chain and st[COLOUR, e - w] != EMPTY) or \
           (st[CHAIN, e + w] == chain and st[COLOUR, e + w] != EMPTY) or \
           (st[CHAIN, e - 1] == chain and st[COLOUR, e - 1] != EMPTY) or \
           (st[CHAIN, e + 1] == chain and st[COLOUR, e + 1] != EMPTY)


@jit
def is_legal(st, g, p, c, exact):
    """Whether colour ``c`` may play the empty point ``p`` (not the ko point, not suicide); ``exact``: the
    board keeps exact liberties (else pseudo-liberties)."""
    if st[COLOUR, p] != EMPTY or p == g[KO]:
        return False
    w = g[WIDTH]
    return (_gives_liberty(st, p - w, c, exact) or _gives_liberty(st, p + w, c, exact)
            or _gives_liberty(st, p - 1, c, exact) or _gives_liberty(st, p + 1, c, exact))


@jit
def _gives_liberty(st, q, c, exact):
    """Whether the neighbour ``q`` leaves a stone of colour ``c`` played next to it a liberty: q is empty, an
    own chain with another liberty, or an opponent chain in atari (captured)."""
    col = st[COLOUR, q]
    if col == EMPTY:
        return True
    if col == OFF:
        return False
    atari = in_atari(st, st[CHAIN, q], exact)
    return atari != (col == c)


@jit
def in_atari(st, chain, exact):
    """Whether the chain has exactly one liberty (pseudo-liberties: all its liberty adjacencies are one point,
    count * sum of squares == sum ** 2)."""
    n = st[LIBS, chain]
    if exact or n <= 1:
        return n == 1
    s = np.int64(st[LSUM, chain])
    return np.int64(n) * np.int64(st[LSQ, chain]) == s * s


@jit
def is_eye(st, g, p, c):
    """The playout eye rule: every on-board neighbour of the empty point ``p`` is colour ``c``, and the
    opponent holds no diagonal of a first-line point and at most one of any other."""
    w = g[WIDTH]
    colour = st[COLOUR]
    if not (_own_or_off(colour[p - w], c) and _own_or_off(colour[p + w], c) and _own_or_off(colour[p - 1], c)
            and _own_or_off(colour[p + 1], c)):
        return False
    opp = 3 - c
    a = colour[p - w - 1]
    b = colour[p - w + 1]
    d = colour[p + w - 1]
    e = colour[p + w + 1]
    bad = (a == opp) + (b == opp) + (d == opp) + (e == opp)
    if a == OFF or b == OFF or d == OFF or e == OFF:
        return bad == 0
    return bad <= 1


@jit
def _own_or_off(col, c):
    return col == c or col == OFF


@jit
def _remove_chain(st, g, chain, exact):
    """Take the chain's stones off the board; each becomes a liberty of every distinct chain next to it
    (pseudo-liberties: of each neighbouring stone's chain, once per adjacency).
    Returns the number of stones removed."""
    w = g[WIDTH]
    p = chain
    while True:
        st[COLOUR, p] = EMPTY
        _add_empty(st, g, p)
        p = st[NEXT, p]
        if p == chain:
            break
    # second pass, all stones empty now: so no neighbour chain is the removed one
    count = 0
    while True:
        nxt = st[NEXT, p]
        st[NEXT, p] = p
        count += 1
        for k in range(4):
            q = p + neighbour_offset(k, w)
            col = st[COLOUR, q]
            if col == BLACK or col == WHITE:
                ch = st[CHAIN, q]
                seen = False
                for j in range(k if exact else 0):
                    r = p + neighbour_offset(j, w)
                    cr = st[COLOUR, r]
                    if (cr == BLACK or cr == WHITE) and st[CHAIN, r] == ch:
                        seen = True
                if not seen:
                    _add_liberty(st, ch, p)
        p = nxt
        if p == chain:
            break
    return count


@jit
def diagonal_offset(k, w):
    """The k-th diagonal offset."""
    if k == 0:
        return -w - 1
    if k == 1:
        return -w + 1
    if k == 2:
        return w - 1
    return w + 1


@jit
def neighbour_offset(k, w):
    """The k-th neighbour offset (up, down, left, right)."""
    if k == 0:
        return -w
    if k == 1:
        return w
    if k == 2:
        return -1
    return 1


@jit
def play(st, g, p, exact):
    """Play the legal move ``p`` (a padded point, or ``PASS``) for the side to move; updates chains, liberties
    (exact when ``exact``, else pseudo-liberties: one per stone-empty adjacency), the empty list, ko, passes,
    the last moves and the side to move.  Returns the number of captured stones.
    Precondition: ``is_legal(st, g, p, g[TO_PLAY], exact)`` for a point."""
    c = g[TO_PLAY]
    g[LAST2] = g[LAST]
    g[LAST] = p
    g[PLY] += 1
    g[TO_PLAY] = 3 - c
    if p == PASS:
        g[PASSES] += 1
        g[KO] = -1
        g[CAPTURED] = 0
        return 0
    g[PASSES] = 0
    w = g[WIDTH]
    opp = 3 - c
    # 1. the stone takes the liberty p from each neighbouring chain (once per chain when exact)
    own_big = -1
    n_own = 0
    own0 = -1
    own1 = -1
    own2 = -1
    own3 = -1
    seen0 = -1
    seen1 = -1
    seen2 = -1
    for dk in range(4):
        q = p + neighbour_offset(dk, w)
        col = st[COLOUR, q]
        if col == BLACK or col == WHITE:
            ch = st[CHAIN, q]
            fresh = ch != seen0 and ch != seen1 and ch != seen2
            if dk == 0:
                seen0 = ch
            elif dk == 1:
                seen1 = ch
            else:
                seen2 = ch
            if fresh or not exact:
                _take_liberty(st, ch, p)
            if fresh and col == c:
                if n_own == 0:
                    own0 = ch
                elif n_own == 1:
                    own1 = ch
                elif n_own == 2:
                    own2 = ch
                else:
                    own3 = ch
                n_own += 1
                if own_big < 0 or st[SIZE, ch] > st[SIZE, own_big]:
                    own_big = ch
    _remove_empty(st, g, p)
    st[COLOUR, p] = c
    st[CHAIN, p] = p  # not yet any chain's (an old id left on the empty point could name one)
    # 2. merge: the largest own chain absorbs the others and the stone
    if n_own == 0:
        base = p
        _new_chain(st, p, 1)
        for dk in range(4):
            e = p + neighbour_offset(dk, w)
            if st[COLOUR, e] == EMPTY:
                _add_liberty(st, p, e)
    else:
        base = own_big
        for k in range(n_own):
            y = own0 if k == 0 else (own1 if k == 1 else (own2 if k == 2 else own3))
            if y != base:
                _absorb(st, g, base, y, exact)
        for dk in range(4):
            e = p + neighbour_offset(dk, w)
            if st[COLOUR, e] == EMPTY and (not exact or not _touches_chain(st, e, base, w)):
                _add_liberty(st, base, e)
        st[CHAIN, p] = base
        st[NEXT, p] = st[NEXT, base]
        st[NEXT, base] = p
        st[SIZE, base] += 1
    # 3. captures: opponent neighbours left without liberties
    captured = 0
    last_captured = -1
    for dk in range(4):
        q = p + neighbour_offset(dk, w)
        if st[COLOUR, q] == opp:
            ch = st[CHAIN, q]
            if st[LIBS, ch] == 0:
                last_captured = q
                captured += _remove_chain(st, g, ch, exact)
    g[CAPTURED] = captured
    if captured == 1 and st[SIZE, base] == 1 and st[LIBS, base] == 1:
        g[KO] = last_captured
    else:
        g[KO] = -1
    return captured


@jit
def _absorb(st, g, base, y, exact):
    """Chain ``base`` absorbs the own chain ``y``: y's liberties (exact: those not already next to base),
    its stones (relabelled) and its size."""
    w = g[WIDTH]
    s = y
    if exact:
        stamp = next_stamp(st, g)
        while True:
            for dk in range(4):
                e = s + neighbour_offset(dk, w)
                if st[COLOUR, e] == EMPTY and st[MARK, e] != stamp:
                    st[MARK, e] = stamp
                    if not _touches_chain(st, e, base, w):
                        _add_liberty(st, base, e)
            s = st[NEXT, s]
            if s == y:
                break
    else:
        st[LIBS, base] += st[LIBS, y]
        st[LSUM, base] += st[LSUM, y]
        st[LSQ, base] += st[LSQ, y]
    while True:
        st[CHAIN, s] = base
        s = st[NEXT, s]
        if s == y:
            break
    nxt = st[NEXT, base]
    st[NEXT, base] = st[NEXT, y]
    st[NEXT, y] = nxt
    st[SIZE, base] += st[SIZE, y]


@jit
def padded_point(point, size):
    """The padded index of board index ``point`` (N * N: ``PASS``; negative: -1)."""
    if point < 0:
        return -1
    if point >= size * size:
        return PASS
    return (point // size + 1) * (size + 2) + point % size + 1


@jit
def set_position(st, g, plain, to_play, ko_plain, passes, last, last2, exact):
    """``set_stones``, and the last two moves as board indices (N * N = pass, -1 = none)."""
    set_stones(st, g, plain, to_play, ko_plain, passes, exact)
    g[LAST] = padded_point(last, g[SIZE_N])
    g[LAST2] = padded_point(last2, g[SIZE_N])


@jit
def swap_behind(st, k, m):
    """Swap entry k of the empty list with entry m - 1 (sample-then-validate: a refuted pick goes behind the
    first m - 1 entries still to be tried; the empty list stays a permutation, ``EMPTY_AT`` consistent)."""
    p = st[EMPTIES, k]
    last = st[EMPTIES, m - 1]
    st[EMPTIES, k] = last
    st[EMPTY_AT, last] = k
    st[EMPTIES, m - 1] = p
    st[EMPTY_AT, p] = m - 1


@jit(nrt=True)
def set_stones(st, g, plain, to_play, ko_plain, passes, exact):
    """Set up the position of ``plain`` int8 [N * N] (jaxgo colours: 1 Black, -1 White, 0 empty) with
    ``to_play`` (1 / -1), the simple-ko point ``ko_plain`` (board index, -1 none) and ``passes``.  Chains and
    liberties (exact, or pseudo) are built from scratch; the last moves are none.  Every chain's
    representative is its first stone in board order, its ring in flood-fill order."""
    clear(st, g)
    size = g[SIZE_N]
    w = g[WIDTH]
    i = 0
    for r in range(1, size + 1):
        for p in range(r * w + 1, r * w + size + 1):
            v = plain[i]
            i += 1
            if v != 0:
                st[COLOUR, p] = BLACK if v > 0 else WHITE
                st[CHAIN, p] = -1  # no chain yet (an empty point's CHAIN stays itself)
                _remove_empty(st, g, p)
    # chains by flood fill, liberties counted once per chain
    stack = np.empty(w * w, np.int32)
    for r in range(1, size + 1):
        for p0 in range(r * w + 1, r * w + size + 1):
            col = st[COLOUR, p0]
            if col == EMPTY or st[CHAIN, p0] >= 0:
                continue
            _new_chain(st, p0, 1)
            top = 0
            stack[top] = p0
            top += 1
            stamp = next_stamp(st, g)
            while top > 0:
                top -= 1
                s = stack[top]
                for dk in range(4):
                    q = s + neighbour_offset(dk, w)
                    cq = st[COLOUR, q]
                    if cq == col and st[CHAIN, q] < 0:
                        st[CHAIN, q] = p0
                        st[NEXT, q] = st[NEXT, p0]
                        st[NEXT, p0] = q
                        st[SIZE, p0] += 1
                        stack[top] = q
                        top += 1
                    elif cq == EMPTY and (not exact or st[MARK, q] != stamp):
                        st[MARK, q] = stamp
                        _add_liberty(st, p0, q)
    g[TO_PLAY] = BLACK if to_play > 0 else WHITE
    g[KO] = padded_point(ko_plain, size)
    g[PASSES] = passes


@jit(nrt=True)
def area_owner(st, g, owner):
    """Tromp-Taylor area: fill ``owner`` int8 [N * N] (1 Black, -1 White, 0 neither) and return Black's area
    minus White's.  Empty regions are flooded once each."""
    size = g[SIZE_N]
    w = g[WIDTH]
    stamp = next_stamp(st, g)
    stack = np.empty(size * size + 1, np.int32)
    region = np.empty(size * size + 1, np.int32)
    total = 0
    for i in range(size * size):
        p = (i // size + 1) * w + i % size + 1
        col = st[COLOUR, p]
        if col == BLACK:
            owner[i] = 1
            total += 1
        elif col == WHITE:
            owner[i] = -1
            total -= 1
        elif st[MARK, p] != stamp:
            # flood the empty region, noting which colours it reaches
            reach = 0
            top = 0
            n = 0
            st[MARK, p] = stamp
            stack[top] = p
            top += 1
            while top > 0:
                top -= 1
                s = stack[top]
                region[n] = s
                n += 1
                for dk in range(4):
                    d = neighbour_offset(dk, w)
                    q = s + d
                    cq = st[COLOUR, q]
                    if cq == EMPTY:
                        if st[MARK, q] != stamp:
                            st[MARK, q] = stamp
                            stack[top] = q
                            top += 1
                    elif cq == BLACK:
                        reach |= 1
                    elif cq == WHITE:
                        reach |= 2
            value = 1 if reach == 1 else (-1 if reach == 2 else 0)
            for k in range(n):
                s = region[k]
                owner[(s // w - 1) * size + s % w - 1] = value
            total += value * n
    return total


@jit
def check_consistency(st, g, exact):
    """Recompute chains, liberties (exact or pseudo) and the empty list from the colours; raise if anything
    differs (KataGo's ``checkConsistency``)."""
    size = g[SIZE_N]
    w = g[WIDTH]
    n_empty = 0
    for i in range(size * size):
        p = (i // size + 1) * w + i % size + 1
        col = st[COLOUR, p]
        if col == EMPTY:
            n_empty += 1
            k = st[EMPTY_AT, p]
            if k < 0 or k >= g[N_EMPTY] or st[EMPTIES, k] != p:
                raise ValueError("empty list broken")
        elif col == BLACK or col == WHITE:
            ch = st[CHAIN, p]
            if st[COLOUR, ch] != col:
                raise ValueError("chain representative of another colour")
            # ring walk from the representative reaches p, and sizes match
            count = 0
            found = False
            s = ch
            while True:
                if st[CHAIN, s] != ch:
                    raise ValueError("ring member with another representative")
                if s == p:
                    found = True
                count += 1
                s = st[NEXT, s]
                if s == ch or count > size * size:
                    break
            if not found or count != st[SIZE, ch]:
                raise ValueError("ring or size broken")
            for dk in range(4):
                d = neighbour_offset(dk, w)
                q = p + d
                if st[COLOUR, q] == col and st[CHAIN, q] != ch:
                    raise ValueError("adjacent stones in different chains")
            if ch == p:
                stamp = next_stamp(st, g)
                libs = 0
                lsum = 0
                lsq = 0
                s = ch
                while True:
                    for dk in range(4):
                        d = neighbour_offset(dk, w)
                        q = s + d
                        if st[COLOUR, q] == EMPTY and (not exact or st[MARK, q] != stamp):
                            st[MARK, q] = stamp
                            libs += 1
                            lsum += q
                            lsq += q * q
                    s = st[NEXT, s]
                    if s == ch:
                        break
                if libs != st[LIBS, ch] or lsum != st[LSUM, ch] or lsq != st[LSQ, ch]:
                    raise ValueError("liberties broken")
                if libs == 0:
                    raise ValueError("chain without liberties on the board")
    if n_empty != g[N_EMPTY]:
        raise ValueError("empty count broken")
