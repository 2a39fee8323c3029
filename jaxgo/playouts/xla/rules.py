"""MoGo-style rule policy for playouts (Gelly, Wang, Munos, Teytaud 2006; Lew's thesis, section 3.4.1).

Every move of a playout is taken from the first non-empty tier:

1. capture: a move that captures an opponent chain in atari;
2. save: a move that gets an own chain out of atari (it keeps two or more liberties, or captures);
3. shape: an empty point among the 8 neighbours of the previous move whose 3x3 neighbourhood matches one of
   MoGo's hand-made shape patterns (``PATTERNS``: hane, cut, edge moves);
4. anything else that the light playouts would play (legal, not filling the mover's own eye),

uniformly at random within the tier.  The ``safe`` variant (``rule_tables(avoid_self_atari=True)``, playout
policy ``safe_rules``) also puts last, below tier 4, every self-atari that joins an own chain (the new chain keeps
one liberty and captures nothing): such moves are played only when nothing else is.  A lone stone in self-atari
(a throw-in, or a stone inside an eye space) keeps its tier, as do the self-ataris of the shape tier that stand
alone. Fuego and Pachi filter self-ataris the same way, with finer exceptions for nakade shapes.  The
``chase`` variant (``rule_tables(avoid_self_atari=True, atari_near_previous=True)``, policy ``safe_atari_rules``)
is the safe variant whose shape tier also holds every atari (a move that leaves an opponent chain with one
liberty and captures nothing) among the 8 neighbours of the previous move: a chain that escaped is chased, as
Pachi's and Fuego's playouts do with their atari and two-liberty rules near the last move. The tiers are
implemented as weights (``TIER_WEIGHTS``) on the move candidates of the heavy playout loop
(``jaxgo.playouts.xla.heavy``): a weight ratio of 1e8 between tiers makes a lower tier's chance at most 81 / 1e8 on 9x9,
i.e. the ordering above for every practical purpose, and lets the
rule policy share the heavy playouts' incremental features and sampler.

The patterns are the MoGo paper's Figures (as redrawn in the thesis, Figures 3.5-3.7), written as 3x3 ASCII
grids centred on the move; as in MoGo they count under the 8 board symmetries and with the colours swapped.
Legend: ``X``/``O`` stones of either colour (swapped together), ``.`` empty, ``x`` not X (O, empty or off
board), ``o`` not O, ``#`` off board, ``?`` anything.  ``pattern_table()`` evaluates them once for all 4**8
neighbourhood codes in the layout of ``jaxgo.features.moves.pattern_codes`` (low 16 bits: 8 cells x 2 bits,
0 empty, 1 own, 2 opponent, 3 off board; cells up, down, left, right, then the diagonals).
"""

from __future__ import annotations

import functools

import chex
import jax.numpy as jnp
import numpy as np

# (name, 3x3 grid top row first; the centre is the move and must be '.')
PATTERNS = (
    ("hane: enclosing", "XOX", "...", "???"),
    ("hane: non-cutting", "XO.", "...", "?.?"),
    ("hane: magari", "XO?", "X..", "x.?"),
    ("hane: thin", "XOO", "...", "?.?"),
    ("cut: unprotected", "XO?", "O.o", "?o?"),
    ("cut: peeped", "XO?", "O.X", "???"),
    ("cut: de (push between)", "?X?", "O.O", "ooo"),
    ("edge: chase", "X.?", "O.?", "###"),
    ("edge: block side cut", "OX?", "X.O", "###"),
    ("edge: block side connection", "?X?", "x.O", "###"),
    ("edge: sagari", "?XO", "x.x", "###"),
    ("edge: cut", "?OX", "X.O", "###"),
)

# Cell offsets (row, column) of the 8 neighbours in the raw-code order of ``jaxgo.features.moves``.
CELLS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
EMPTY, OWN, OPPONENT, OFF_BOARD = 0, 1, 2, 3
TIER_WEIGHTS = (1.0, 1e8, 1e16, 1e24)  # anything, shape near the previous move, save, capture
SELF_ATARI_FACTOR = 1e-12  # the safe variant's factor on a joined self-atari: below tier 4 even from the shape tier
CODE_BITS = 16


def _symmetries(grid: np.ndarray):
    """The 8 rotations / reflections of a 3x3 array."""
    for k in range(4):
        rotated = np.rot90(grid, k)
        yield rotated
        yield rotated[:, ::-1]


def _cell_values() -> np.ndarray:
    """int8 [4**8, 3, 3]: the neighbourhood of every raw code (centre EMPTY)."""
    codes = np.arange(4 ** 8)
    grid = np.zeros((len(codes), 3, 3), np.int8)
    for i, (dr, dc) in enumerate(CELLS):
        grid[:, 1 + dr, 1 + dc] = (codes >> (2 * i)) & 3
    return grid


def _matches(grid: np.ndarray, pattern: np.ndarray, x: int, o: int) -> np.ndarray:
    """bool [C]: which neighbourhoods grid [C, 3, 3] match the 3x3 char array ``pattern`` with X = x, O = o."""
    ok = np.ones(len(grid), bool)
    for r in range(3):
        for c in range(3):
            if r == 1 and c == 1:
                continue
            v, ch = grid[:, r, c], pattern[r, c]
            if ch == "X":
                ok &= v == x
            elif ch == "O":
                ok &= v == o
            elif ch == ".":
                ok &= v == EMPTY
            elif ch == "x":
                ok &= v != x
            elif ch == "o":
                ok &= v != o
            elif ch == "#":
                ok &= v == OFF_BOARD
            elif ch != "?":
                raise ValueError(f"unknown pattern character {ch!r}")
    return ok


@functools.lru_cache(maxsize=None)
def pattern_table() -> np.ndarray:
    """bool [4**8]: does the neighbourhood with this raw code (low 16 bits) match a MoGo shape pattern?"""
    grid = _cell_values()
    table = np.zeros(len(grid), bool)
    for _, *rows in PATTERNS:
        pattern = np.array([list(row) for row in rows])
        if pattern[1, 1] != ".":
            raise ValueError("the centre of a pattern is the move: it must be '.'")
        for variant in _symmetries(pattern):
            table |= _matches(grid, variant, OWN, OPPONENT) | _matches(grid, variant, OPPONENT, OWN)
    return table


def near_previous(dist_prev_level):
    """bool [...]: the point is one of the 8 neighbours of the previous move, from ``jaxgo.features.moves``
    distance levels (level = d - 1 with d = dx + dy + max(dx, dy): 1 orthogonal, 2 diagonal)."""
    return (dist_prev_level == 1) | (dist_prev_level == 2)


def tier_weights(code, capture, extension, dist_prev, candidate, table, joined_self_atari=None,
                 self_atari_factor=1.0, atari=None, atari_near_previous=0.0):
    """float32 [...]: the rule policy's weight of every point.

    code: raw 3x3 codes int32 [...] (bits above 16 ignored); capture, extension: tactical levels int32 [...]
    (``jaxgo.features.moves``); dist_prev: distance level to the previous move int32 [...]; candidate: bool
    [...] (legal and not the mover's own eye); table: ``pattern_table()`` as a bool array; joined_self_atari:
    bool [...] or None, the moves that leave a chain of two or more stones with one liberty and capture nothing,
    whose weight is multiplied by ``self_atari_factor`` (float32 scalar; 1 = the plain rule policy); atari:
    bool [...] or None, the moves that put an opponent chain in atari without capturing, which join the shape
    tier next to the previous move where ``atari_near_previous`` (float32 scalar, 0 or 1) is 1.
    """
    shaped = table[code & ((1 << CODE_BITS) - 1)]
    if atari is not None:
        shaped = shaped | (atari & (atari_near_previous > 0))
    shape = shaped & near_previous(dist_prev)
    weight = jnp.where(capture > 0, TIER_WEIGHTS[3],
                       jnp.where(extension > 0, TIER_WEIGHTS[2],
                                 jnp.where(shape, TIER_WEIGHTS[1], TIER_WEIGHTS[0])))
    if joined_self_atari is not None:
        weight = jnp.where(joined_self_atari, weight * self_atari_factor, weight)
    return jnp.where(candidate, weight, 0.0).astype(jnp.float32)


@chex.dataclass(frozen=True)
class RuleTables:
    """What the playout loop needs for the rule policy (passed where heavy playouts take ``PolicyTables``)."""

    shape: chex.Array  # bool [4**8]: ``pattern_table()``
    self_atari_factor: chex.Array  # float32 []: weight factor of a self-atari joining an own chain (1 = none)
    atari_near_previous: chex.Array  # float32 []: 1 = ataris next to the previous move join the shape tier


# The rule policies by name: (avoid_self_atari, atari_near_previous) of ``rule_tables``.
RULE_POLICIES = {"rules": (False, False), "safe_rules": (True, False), "safe_atari_rules": (True, True)}


@functools.lru_cache(maxsize=None)
def rule_tables(avoid_self_atari: bool = False, atari_near_previous: bool = False) -> RuleTables:
    """The plain rule policy's tables, with ``avoid_self_atari`` the safe variant's, with ``atari_near_previous``
    too the chase variant's (the same arrays but for two scalars, so all run the same compiled loop)."""
    factor = SELF_ATARI_FACTOR if avoid_self_atari else 1.0
    return RuleTables(shape=jnp.asarray(pattern_table()), self_atari_factor=jnp.float32(factor),
                      atari_near_previous=jnp.float32(1.0 if atari_near_previous else 0.0))


def tables_of_policy(policy: str) -> RuleTables:
    """The tables of the rule policy named ``policy`` (a key of ``RULE_POLICIES``)."""
    if policy not in RULE_POLICIES:
        raise ValueError(f"{policy!r} is not a rule policy; one of {tuple(RULE_POLICIES)}")
    return rule_tables(*RULE_POLICIES[policy])
