"""The move weights of the heavy and rule playouts on the native board, point by point.

A candidate's weight for colour ``c`` splits into a *base* that depends only on the board around the point,
kept per colour and point (``base[c - 1, p]``) and recomputed only where a move changed something (``dirty``),
and a per-move *modifier* that ``jaxgo.playouts.native.weighted`` applies when it samples: the distance to the
last two moves, the ko point, the atari level while a ko is on the board, capturing the previous move's chain
(heavy), the shape tier next to the previous move (rules).

Heavy (``HEAVY``): the gamma product of ``jaxgo.playouts.heavy`` / ``jaxgo.features.moves``:
base = pattern[3x3 code] * line * capture[1 or 3] * extension * self_atari * atari[1]; 0 for stones, own eyes
(the playout eye rule) and suicide.  Rules (``RULES``): the tier weights of ``jaxgo.playouts.rule_policy``
(capture 1e24, save 1e16, anything 1, a joined self-atari times ``self_atari_factor``).

The tactical levels follow from the exact liberties of the (at most four) neighbouring chains, as in the XLA
kernel: the new chain's liberties (captures aside) are the empty neighbours plus the other liberty of each own
two-liberty neighbour, and at least two with an own neighbour of three or more; counted exactly as 0, 1 or 2+.

``tables`` (``weight_tables``) is one float64 array: pattern gammas [2**20] then the small groups at
``CAPTURE`` ... ``LINE``; rules use ``SHAPE`` (4**8 entries, 1.0 where a MoGo shape matches) and ``SA_FACTOR``.
"""

from __future__ import annotations

import numpy as np

from jaxgo.playouts.native import board as nb

jit = nb.jit

HEAVY, RULES = 0, 1
PATTERNS = 1 << 20
CAPTURE = PATTERNS  # 4 levels
EXTENSION = CAPTURE + 4  # 2
SELF_ATARI = EXTENSION + 2  # 2
ATARI = SELF_ATARI + 2  # 3
LINE = ATARI + 3  # 6 (times the pass group's level-0 gamma)
SHAPE = LINE + 6  # 4**8 (rules)
SA_FACTOR = SHAPE + (1 << 16)  # 1 (rules)
TABLE_SIZE = SA_FACTOR + 1
TIER_ANY, TIER_SHAPE, TIER_SAVE, TIER_CAPTURE = 1.0, 1e8, 1e16, 1e24

# point_info flags (bits of the second result)
ATARI_FLAG = 1  # puts an opponent chain in atari without capturing (heavy: level 2 while a ko is on)
CAPTURE_ONE = 2  # capture of level 1 exactly (heavy: becomes level 2 when the captured chain holds the last move)
JOINED_SA = 4  # rules: a self-atari next to an own stone (the safe variant's last tier)
PLAIN = 8  # rules: neither capture nor save (the shape tier may apply)


def heavy_tables(policy_tables) -> np.ndarray:
    """float64 [TABLE_SIZE]: ``tables`` for the heavy policy from ``jaxgo.playouts.heavy.PolicyTables``."""
    out = np.zeros(TABLE_SIZE, np.float64)
    out[:PATTERNS] = np.asarray(policy_tables.pattern, np.float64)
    out[CAPTURE:CAPTURE + 4] = np.asarray(policy_tables.capture, np.float64)
    out[EXTENSION:EXTENSION + 2] = np.asarray(policy_tables.extension, np.float64)
    out[SELF_ATARI:SELF_ATARI + 2] = np.asarray(policy_tables.self_atari, np.float64)
    out[ATARI:ATARI + 3] = np.asarray(policy_tables.atari, np.float64)
    out[LINE:LINE + 6] = np.asarray(policy_tables.line, np.float64)
    return out


def rule_tables(rule_tables_) -> np.ndarray:
    """float64 [TABLE_SIZE]: ``tables`` for the rule policy from ``jaxgo.playouts.rule_policy.RuleTables``."""
    out = np.zeros(TABLE_SIZE, np.float64)
    out[SHAPE:SHAPE + (1 << 16)] = np.asarray(rule_tables_.shape, np.float64)
    out[SA_FACTOR] = float(np.asarray(rule_tables_.self_atari_factor))
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
def _cell(colour, q, c):
    """The 3x3 cell value of point q for colour c: 0 empty, 1 own, 2 opponent, 3 off board."""
    col = colour[q]
    if col == nb.EMPTY or col == nb.OFF:
        return col
    return 1 if col == c else 2


@jit
def pattern_code(st, p, c, w):
    """int: the raw 3x3 code of ``jaxgo.features.moves.pattern_codes`` of point p for colour c (8 cells, 2 bits
    each, up, down, left, right, then the diagonals; bit 16 + k when orthogonal neighbour k is in atari)."""
    colour = st[nb.COLOUR]
    code = (_cell(colour, p - w, c) | (_cell(colour, p + w, c) << 2) | (_cell(colour, p - 1, c) << 4)
            | (_cell(colour, p + 1, c) << 6) | (_cell(colour, p - w - 1, c) << 8) | (_cell(colour, p - w + 1, c) << 10)
            | (_cell(colour, p + w - 1, c) << 12) | (_cell(colour, p + w + 1, c) << 14))
    for k in range(4):
        q = p + nb.neighbour_offset(k, w)
        col = colour[q]
        if (col == nb.BLACK or col == nb.WHITE) and st[nb.LIBS, st[nb.CHAIN, q]] == 1:
            code |= 1 << (16 + k)
    return code


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
def point_info(st, g, p, c, policy, tables, lines):
    """(base weight, flags) of the empty point p for colour c (see the module docstring); the ko point is not
    excluded here (a per-move modifier).  Exact liberties required."""
    w = g[nb.WIDTH]
    colour = st[nb.COLOUR]
    if nb.is_eye(st, g, p, c):
        return 0.0, 0
    n_empty = 0
    extra0 = -1  # the new chain's liberties besides p's empty neighbours (other liberties of own 2-lib chains)
    extra1 = -1
    extra_many = False  # an own chain with 3+ liberties, or more distinct extra liberties than two
    captures = False
    capture_saves = False
    own_atari = False
    atari = False
    own_next = False
    seen0 = -1
    seen1 = -1
    seen2 = -1
    for k in range(4):
        q = p + nb.neighbour_offset(k, w)
        col = colour[q]
        if col == nb.EMPTY:
            n_empty += 1
            continue
        if col == nb.OFF:
            continue
        ch = st[nb.CHAIN, q]
        if ch == seen0 or ch == seen1 or ch == seen2:
            continue
        if k == 0:
            seen0 = ch
        elif k == 1:
            seen1 = ch
        else:
            seen2 = ch
        libs = st[nb.LIBS, ch]
        if col == c:
            own_next = True
            if libs == 1:
                own_atari = True
            elif libs == 2:
                a, b = nb.liberties_of(st, ch)
                other = b if a == p else a
                if other != extra0 and other != extra1:
                    if extra0 < 0:
                        extra0 = other
                    elif extra1 < 0:
                        extra1 = other
                    else:
                        extra_many = True
            else:
                extra_many = True
        else:
            if libs == 1:
                captures = True
                if not capture_saves and touches_atari(st, ch, c, w):
                    capture_saves = True
            elif libs == 2:
                atari = True
    # the new chain's liberties apart from captures: 0, 1 or 2+
    if extra_many or n_empty >= 2:
        left = 2
    else:
        left = n_empty
        for e in (extra0, extra1):
            if e >= 0 and not (n_empty == 1 and _is_empty_neighbour(colour, p, e, w)):
                left += 1
        left = min(left, 2)
    if left == 0 and not captures:
        return 0.0, 0  # suicide
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
        if self_atari and own_next:
            weight *= tables[SA_FACTOR]
            flags |= JOINED_SA
        return weight, flags
    weight = tables[pattern_code(st, p, c, w)] * tables[LINE + lines[p]]
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
def _is_empty_neighbour(colour, p, e, w):
    return colour[e] == nb.EMPTY and (e == p - w or e == p + w or e == p - 1 or e == p + 1)
