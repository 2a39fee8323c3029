"""The move weights of the heavy and rule playouts on the native board, point by point.

A candidate's weight for colour ``c`` splits into a *base* that depends only on the board around the point,
kept per colour and point (``base[c - 1, p]``) and recomputed only where a move changed something (``dirty``),
and a per-move *modifier* that ``jaxgo.playouts.native.heavy`` applies when it samples: the distance to the
last two moves, the ko point, the atari level while a ko is on the board, capturing the previous move's chain
(heavy), the shape tier next to the previous move (rules).

Heavy (``HEAVY``): the gamma product of ``jaxgo.playouts.xla.heavy`` / ``jaxgo.features.moves``:
base = pattern[3x3 code] * line * capture[1 or 3] * extension * self_atari * atari[1]; 0 for stones, own eyes
(the playout eye rule) and suicide.  Rules (``RULES``): the tier weights of ``jaxgo.playouts.xla.rules``
(capture 1e24, save 1e16, anything 1, a joined self-atari times ``self_atari_factor``).

The tactical levels follow from the exact liberties of the (at most four) neighbouring chains, as in the XLA
kernel: the new chain's liberties (captures aside) are the empty neighbours plus the other liberty of each own
two-liberty neighbour, and at least two with an own neighbour of three or more; counted exactly as 0, 1 or 2+.

``tables`` (``heavy_tables``, ``rule_tables``) is one float64 array: the pattern gammas by *compact* 3x3 index
[6**4 * 4**4] (``compact_index``: each orthogonal cell one of empty, own, opponent, off board, own in atari,
opponent in atari; each diagonal one of the first four -- the reachable raw codes of ``jaxgo.features.moves``,
in a table of 2.6 MB instead of 8 MB, so that its lookups stay in cache), then the small groups at ``CAPTURE``
... ``LINE``; rules use ``SHAPE`` (4**8 entries by the raw code's low 16 bits, 1.0 where a MoGo shape matches),
``SA_FACTOR``, ``ATARI_NEAR``, ``LADDER`` and ``TWO_LIBERTIES``.
"""

from __future__ import annotations

import numpy as np

from jaxgo.playouts.native import board as nb

jit = nb.jit

HEAVY, RULES = 0, 1
PATTERNS = 6 ** 4 * 4 ** 4  # compact 3x3 indices
CAPTURE = PATTERNS  # 4 levels
EXTENSION = CAPTURE + 4  # 2
SELF_ATARI = EXTENSION + 2  # 2
ATARI = SELF_ATARI + 2  # 3
LINE = ATARI + 3  # 6 (times the pass group's level-0 gamma)
SHAPE = LINE + 6  # 4**8 (rules)
SA_FACTOR = SHAPE + (1 << 16)  # 1 (rules)
ATARI_NEAR = SA_FACTOR + 1  # 1 (rules): 1.0 = ataris next to the previous move join the shape tier (chase variant)
LADDER = ATARI_NEAR + 1  # 1 (native only): > 0 = read ladders, this many positions a read (the ladder variants)
TWO_LIBERTIES = LADDER + 1  # 1 (heavy, native only): 1.0 = also defend own two-liberty chains a ladder threatens
LOCAL = TWO_LIBERTIES + 1  # 1 (native only): 1.0 = the local tiers (``jaxgo.playouts.native.local``) first
TABLE_SIZE = LOCAL + 1
TIER_ANY, TIER_SHAPE, TIER_SAVE, TIER_CAPTURE = 1.0, 1e8, 1e16, 1e24

# point_info flags (bits of the second result)
ATARI_FLAG = 1  # puts an opponent chain in atari without capturing (heavy: level 2 while a ko is on)
CAPTURE_ONE = 2  # capture of level 1 exactly (heavy: becomes level 2 when the captured chain holds the last move)
JOINED_SA = 4  # rules: a self-atari next to an own stone (the safe variant's last tier)
PLAIN = 8  # rules: neither capture nor save (the shape tier may apply)


def heavy_tables(policy_tables, ladder_budget: int = 0, two_liberties: bool = False, local: bool = False
                 ) -> np.ndarray:
    """float64 [TABLE_SIZE]: ``tables`` for the heavy policy from ``jaxgo.playouts.xla.heavy.PolicyTables``;
    ``ladder_budget`` > 0: its ladder variant (``jaxgo.playouts.native.heavy.ladder_gammas``), with
    ``two_liberties`` its defence of two-liberty chains; ``local``: the local tiers first
    (``jaxgo.playouts.native.local``)."""
    out = np.zeros(TABLE_SIZE, np.float64)
    out[LOCAL] = 1.0 if local else 0.0
    out[LADDER] = float(ladder_budget)
    out[TWO_LIBERTIES] = 1.0 if two_liberties else 0.0
    out[:PATTERNS] = np.asarray(policy_tables.pattern, np.float64)[raw_codes_of_compact()]
    out[CAPTURE:CAPTURE + 4] = np.asarray(policy_tables.capture, np.float64)
    out[EXTENSION:EXTENSION + 2] = np.asarray(policy_tables.extension, np.float64)
    out[SELF_ATARI:SELF_ATARI + 2] = np.asarray(policy_tables.self_atari, np.float64)
    out[ATARI:ATARI + 3] = np.asarray(policy_tables.atari, np.float64)
    out[LINE:LINE + 6] = np.asarray(policy_tables.line, np.float64)
    return out


def rule_tables(rule_tables_, ladder_budget: int = 0, local: bool = False) -> np.ndarray:
    """float64 [TABLE_SIZE]: ``tables`` for the rule policy from ``jaxgo.playouts.xla.rules.RuleTables``;
    ``ladder_budget`` > 0: the ladder variant's reads (``jaxgo.playouts.native.rules``), at most that many
    positions each; ``local``: the local tiers first (``rules.choose_local``)."""
    out = np.zeros(TABLE_SIZE, np.float64)
    out[LADDER] = float(ladder_budget)
    out[LOCAL] = 1.0 if local else 0.0
    out[SHAPE:SHAPE + (1 << 16)] = np.asarray(rule_tables_.shape, np.float64)
    out[SA_FACTOR] = float(np.asarray(rule_tables_.self_atari_factor))
    out[ATARI_NEAR] = float(np.asarray(rule_tables_.atari_near_previous))
    return out


def raw_codes_of_compact() -> np.ndarray:
    """int64 [PATTERNS]: the raw 3x3 code (``jaxgo.features.moves.pattern_codes``) of every compact index."""
    index = np.arange(PATTERNS)
    diagonals = index % 256
    orth = index // 256
    raw = diagonals << 8
    for k in (3, 2, 1, 0):  # index = ((s0 * 6 + s1) * 6 + s2) * 6 + s3
        state = orth % 6
        orth = orth // 6
        value = np.where(state >= 4, state - 3, state)
        raw |= (value << (2 * k)) | ((state >= 4).astype(np.int64) << (16 + k))
    return raw


def rule_tables_for_light() -> np.ndarray:
    """float64 [TABLE_SIZE]: tables under which a point's base weight is positive exactly when the light policy
    may play it (legal, no own eye): the rule policy with no self-atari penalty."""
    out = np.zeros(TABLE_SIZE, np.float64)
    out[SA_FACTOR] = 1.0
    return out


def line_levels(size: int) -> np.ndarray:
    """int8 [(N+2)^2]: line level (1 first line .. 5 fifth or more) of every padded point, 0 on the border."""
    w = size + 2
    out = np.zeros(w * w, np.int8)
    for r in range(size):
        for c in range(size):
            out[(r + 1) * w + c + 1] = min(r, c, size - 1 - r, size - 1 - c, 4) + 1
    return out


@jit
def black_cells(colour, p, w):
    """The low 16 bits of the raw 3x3 code of p for Black: the 8 cells' colours, 2 bits each."""
    return (colour[p - w] | (colour[p + w] << 2) | (colour[p - 1] << 4) | (colour[p + 1] << 6)
            | (colour[p - w - 1] << 8) | (colour[p - w + 1] << 10) | (colour[p + w - 1] << 12)
            | (colour[p + w + 1] << 14))


@jit
def black_code(st, p, w):
    """int: the raw 3x3 code of point p for Black (the cell values are the board colours: 0 empty, 1 Black,
    2 White, 3 off board), with the atari bits of the orthogonal neighbours."""
    colour = st[nb.COLOUR]
    code = black_cells(colour, p, w)
    for k in range(4):
        q = p + nb.neighbour_offset(k, w)
        col = colour[q]
        if (col == nb.BLACK or col == nb.WHITE) and st[nb.LIBS, st[nb.CHAIN, q]] == 1:
            code |= 1 << (16 + k)
    return code


@jit
def compact_index(code):
    """The compact index of a raw 3x3 code (atari bits set on stone cells only)."""
    index = 0
    for k in range(4):
        value = (code >> (2 * k)) & 3
        if (code >> (16 + k)) & 1:
            value += 3
        index = index * 6 + value
    return index * 256 + ((code >> 8) & 0xFF)


@jit
def for_white(code):
    """The code for White of a code for Black: own and opponent swapped in every cell (1 <-> 2)."""
    cells = code & 0xFFFF
    swapped = ((cells & 0x5555) << 1) | ((cells & 0xAAAA) >> 1)
    return (code & ~0xFFFF) | swapped


@jit
def pattern_code(st, p, c, w):
    """int: the raw 3x3 code of ``jaxgo.features.moves.pattern_codes`` of point p for colour c (8 cells, 2 bits
    each, up, down, left, right, then the diagonals; bit 16 + k when orthogonal neighbour k is in atari)."""
    code = black_code(st, p, w)
    return code if c == nb.BLACK else for_white(code)


@jit
def cells_code(st, p, c, w):
    """int: the low 16 bits of ``pattern_code`` (the 8 cells, no atari bits), as MoGo's shapes read them."""
    code = black_cells(st[nb.COLOUR], p, w)
    return code if c == nb.BLACK else for_white(code)


@jit
def touches_atari(st, chain, c, w):
    """Whether ``chain`` touches a chain of colour c with exactly one liberty (a walk over its stones)."""
    colour = st[nb.COLOUR]
    s = chain
    while True:
        for k in range(4):
            q = s + nb.neighbour_offset(k, w)
            if colour[q] == c and st[nb.LIBS, st[nb.CHAIN, q]] == 1:
                return True
        s = st[nb.NEXT, s]
        if s == chain:
            return False


@jit
def point_infos(st, g, p, policy, tables, lines):
    """(Black's base weight, Black's flags, White's base weight, White's flags) of the empty point p (see the
    module docstring); the ko point is not excluded here (a per-move modifier).  Exact liberties required.
    One pass over the neighbours serves both colours: a neighbour chain is one colour's own and the other's
    opponent."""
    w = g[nb.WIDTH]
    colour = st[nb.COLOUR]
    n_empty = 0
    # per colour (b: Black, w: White): extra liberties of the new chain, 3+ / too many, own chain in atari,
    # captures, captures that save an own chain, ataris, an own neighbour
    xb0 = -1
    xb1 = -1
    xw0 = -1
    xw1 = -1
    many_b = False
    many_w = False
    atari_own_b = False
    atari_own_w = False
    cap_b = False
    cap_w = False
    saves_b = False
    saves_w = False
    atari_b = False
    atari_w = False
    next_b = False
    next_w = False
    eye_b = True
    eye_w = True
    seen0 = -1
    seen1 = -1
    seen2 = -1
    atari_bits = 0
    for k in range(4):
        q = p + nb.neighbour_offset(k, w)
        col = colour[q]
        if col == nb.EMPTY:
            n_empty += 1
            eye_b = False
            eye_w = False
            continue
        if col == nb.OFF:
            continue
        if col == nb.BLACK:
            eye_w = False
            next_b = True
        else:
            eye_b = False
            next_w = True
        ch = st[nb.CHAIN, q]
        libs = st[nb.LIBS, ch]
        if libs == 1:
            atari_bits |= 1 << (16 + k)
        if ch == seen0 or ch == seen1 or ch == seen2:
            continue
        if k == 0:
            seen0 = ch
        elif k == 1:
            seen1 = ch
        else:
            seen2 = ch
        if libs == 1:
            if col == nb.BLACK:
                atari_own_b = True
                cap_w = True
                if not saves_w:
                    saves_w = touches_atari(st, ch, nb.WHITE, w)
            else:
                atari_own_w = True
                cap_b = True
                if not saves_b:
                    saves_b = touches_atari(st, ch, nb.BLACK, w)
        elif libs == 2:
            a, b = nb.liberties_of(st, ch)
            other = b if a == p else a
            if col == nb.BLACK:
                atari_w = True
                xb0, xb1, many_b = _with_extra(xb0, xb1, many_b, other)
            else:
                atari_b = True
                xw0, xw1, many_w = _with_extra(xw0, xw1, many_w, other)
        elif col == nb.BLACK:
            many_b = True
        else:
            many_w = True
    if eye_b:
        eye_b = _diagonals_allow_eye(colour, p, w, nb.WHITE)
    if eye_w:
        eye_w = _diagonals_allow_eye(colour, p, w, nb.BLACK)
    code = (black_cells(colour, p, w) | atari_bits) if policy == HEAVY else 0
    weight_b, flags_b = _weight(policy, tables, lines[p], code, eye_b, _left(colour, p, w, n_empty, xb0, xb1, many_b),
                                cap_b, saves_b, atari_own_b, atari_b, next_b)
    weight_w, flags_w = _weight(policy, tables, lines[p], for_white(code), eye_w,
                                _left(colour, p, w, n_empty, xw0, xw1, many_w), cap_w, saves_w, atari_own_w, atari_w,
                                next_w)
    return weight_b, flags_b, weight_w, flags_w


@jit
def _with_extra(extra0, extra1, many, other):
    """The new chain's extra liberties (at most two named, ``many`` past that) with ``other`` added."""
    if other == extra0 or other == extra1:
        return extra0, extra1, many
    if extra0 < 0:
        return other, extra1, many
    if extra1 < 0:
        return extra0, other, many
    return extra0, extra1, True


@jit
def _diagonals_allow_eye(colour, p, w, opp):
    """The diagonal half of the playout eye rule: no opponent diagonal on a first-line point, at most one
    elsewhere."""
    a = colour[p - w - 1]
    b = colour[p - w + 1]
    d = colour[p + w - 1]
    e = colour[p + w + 1]
    bad = (a == opp) + (b == opp) + (d == opp) + (e == opp)
    if a == nb.OFF or b == nb.OFF or d == nb.OFF or e == nb.OFF:
        return bad == 0
    return bad <= 1


@jit
def _left(colour, p, w, n_empty, extra0, extra1, many):
    """The liberties (0, 1 or 2 for 2+) the new chain keeps, captures aside: the empty neighbours and the other
    liberties of own two-liberty chains (``extra0``, ``extra1``; ``many``: an own chain with 3+ or more)."""
    if many or n_empty >= 2:
        return 2
    left = n_empty
    for e in (extra0, extra1):
        if e >= 0 and not (n_empty == 1 and _is_empty_neighbour(colour, p, e, w)):
            left += 1
    return min(left, 2)


@jit
def _weight(policy, tables, line, code, eye, left, captures, capture_saves, own_atari, atari, own_next):
    """(base weight, flags) of one colour from its view of the point's neighbours."""
    if eye or (left == 0 and not captures):
        return 0.0, 0  # an own eye, or suicide
    extension = own_atari and (left >= 2 or captures)
    self_atari = left == 1 and not captures
    atari = atari and not captures
    flags = 0
    if policy == RULES:
        if captures:
            weight = TIER_CAPTURE
        elif extension:
            weight = TIER_SAVE
        else:
            weight = TIER_ANY
            flags |= PLAIN
        if atari:
            flags |= ATARI_FLAG
        if self_atari and own_next:
            weight *= tables[SA_FACTOR]
            flags |= JOINED_SA
        return weight, flags
    weight = tables[compact_index(code)] * tables[LINE + line]
    if captures:
        if capture_saves:
            weight *= tables[CAPTURE + 3]
        else:
            weight *= tables[CAPTURE + 1]
            flags |= CAPTURE_ONE
    else:
        weight *= tables[CAPTURE]
    weight *= tables[EXTENSION + 1] if extension else tables[EXTENSION]
    weight *= tables[SELF_ATARI + 1] if self_atari else tables[SELF_ATARI]
    if atari:
        weight *= tables[ATARI + 1]
        flags |= ATARI_FLAG
    else:
        weight *= tables[ATARI]
    return weight, flags


@jit
def point_info(st, g, p, c, policy, tables, lines):
    """(base weight, flags) of the empty point p for colour c: ``point_infos``' pair for c, the same steps for
    that colour alone (half the work where only the side to move's weights are read)."""
    w = g[nb.WIDTH]
    colour = st[nb.COLOUR]
    n_empty = 0
    x0 = -1  # as in point_infos, for colour c only: the new chain's extra liberties, 3+ / too many, ...
    x1 = -1
    many = False
    atari_own = False
    captures = False
    saves = False
    atari = False
    own_next = False
    eye = True
    seen0 = -1
    seen1 = -1
    seen2 = -1
    atari_bits = 0
    for k in range(4):
        q = p + nb.neighbour_offset(k, w)
        col = colour[q]
        if col == nb.EMPTY:
            n_empty += 1
            eye = False
            continue
        if col == nb.OFF:
            continue
        if col == c:
            own_next = True
        else:
            eye = False
        ch = st[nb.CHAIN, q]
        libs = st[nb.LIBS, ch]
        if libs == 1:
            atari_bits |= 1 << (16 + k)
        if ch == seen0 or ch == seen1 or ch == seen2:
            continue
        if k == 0:
            seen0 = ch
        elif k == 1:
            seen1 = ch
        else:
            seen2 = ch
        if libs == 1:
            if col == c:
                atari_own = True
            else:
                captures = True
                if not saves:
                    saves = touches_atari(st, ch, c, w)
        elif libs == 2:
            if col == c:
                a, b = nb.liberties_of(st, ch)
                x0, x1, many = _with_extra(x0, x1, many, b if a == p else a)
            else:
                atari = True
        elif col == c:
            many = True
    if eye:
        eye = _diagonals_allow_eye(colour, p, w, 3 - c)
    code = (black_cells(colour, p, w) | atari_bits) if policy == HEAVY else 0
    if c == nb.WHITE:
        code = for_white(code)
    return _weight(policy, tables, lines[p], code, eye, _left(colour, p, w, n_empty, x0, x1, many), captures, saves,
                   atari_own, atari, own_next)


@jit
def liberties_left(st, g, p, c):
    """(left, captures) of colour c playing the empty point p: the liberties its new chain keeps, captures aside
    (0, 1, or 2 for two or more), and whether the move captures an opponent chain."""
    w = g[nb.WIDTH]
    colour = st[nb.COLOUR]
    n_empty = 0
    x0 = -1
    x1 = -1
    many = False
    captures = False
    for k in range(4):
        q = p + nb.neighbour_offset(k, w)
        col = colour[q]
        if col == nb.EMPTY:
            n_empty += 1
        elif col == nb.OFF:
            continue
        else:
            ch = st[nb.CHAIN, q]
            libs = st[nb.LIBS, ch]
            if col != c:
                captures = captures or libs == 1
            elif libs == 2:
                a, b = nb.liberties_of(st, ch)
                x0, x1, many = _with_extra(x0, x1, many, b if a == p else a)
            elif libs > 2:
                many = True
    return _left(colour, p, w, n_empty, x0, x1, many), captures


@jit
def _is_empty_neighbour(colour, p, e, w):
    return colour[e] == nb.EMPTY and (e == p - w or e == p + w or e == p - 1 or e == p + 1)
