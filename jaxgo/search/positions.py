"""Tree positions on the native board: the search's host-side twins of ``jaxgo.go.kernels``' ``children_batch``
and ``searchable_batch`` and of the move model's gammas, so that a search on a CPU makes no XLA call.

Positions are ``jaxgo.go.rules.State`` values batched on a leading axis, with the same fields and invariants
(``rules.check_consistency``: chain representatives, pseudo-liberty count / sum / sum of squares by board
index, the Zobrist hash of ``rules.zobrist_table``, captures, ko, passes, move count); suicide is never legal
(the tree under ``suicide=True`` rules keeps the XLA kernels).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from jaxgo.features import moves as mf
from jaxgo.go import rules
from jaxgo.playouts import tables
from jaxgo.playouts.native import NATIVE_SOURCES, drop_stale_cache, runner
from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import heavy as nw

jit = nb.jit

# numba keys each function's cache by its own file only: this package's compiled code is dropped when any of
# its modules or a native kernel they call changes (descend_round in round_step.py inlines descent.py's loops).
SEARCH_SOURCES = sorted(Path(__file__).parent.glob("*.py"))
drop_stale_cache(Path(__file__).parent, NATIVE_SOURCES + SEARCH_SOURCES)


@jit(nrt=True)
def _searchable_row(st, g, out):
    """bool [P + 1]: legal for the side to move and not its own eye; pass last, always True."""
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    c = g[nb.TO_PLAY]
    i = 0
    for r in range(1, size + 1):  # rows and columns: no division per point
        for p in range(r * w + 1, r * w + size + 1):
            out[i] = st[nb.COLOUR, p] == nb.EMPTY and nb.is_legal(st, g, p, c, False) and not nb.is_eye(st, g, p, c)
            i += 1
    out[size * size] = True


@jit(nrt=True)
def plain_points(size):
    """int32 [(N + 2) ** 2]: the board index of every padded point (-1 on the border), by rows and columns."""
    w = size + 2
    plain = np.full(w * w, -1, np.int32)
    for r in range(size):
        for c in range(size):
            plain[(r + 1) * w + c + 1] = r * size + c
    return plain


@jit(nrt=True)
def _export(st, g, plain_of, stones, chain, count, lsum, lsq):
    """Write the board as ``rules.State`` arrays (board indices; pseudo-liberties); plain_of int32 [PP]: the
    board index of each padded point (``plain_points``)."""
    size = g[nb.SIZE_N]
    w = g[nb.WIDTH]
    points = size * size
    count[:] = 0
    lsum[:] = 0
    lsq[:] = 0
    i = 0
    for row in range(1, size + 1):
        for p in range(row * w + 1, row * w + size + 1):
            col = st[nb.COLOUR, p]
            if col == nb.EMPTY:
                stones[i] = 0
                chain[i] = points
                i += 1
                continue
            stones[i] = 1 if col == nb.BLACK else -1
            r = plain_of[st[nb.CHAIN, p]]
            chain[i] = r
            for k in range(4):
                q = p + nb.neighbour_offset(k, w)
                if st[nb.COLOUR, q] == nb.EMPTY:
                    j = plain_of[q]
                    count[r] += 1
                    lsum[r] += j
                    lsq[r] += j * j
            i += 1


@jit(nrt=True)
def children_into(stones, to_play, ko, passes, captures, hashes, move_count, moves, zobrist, out_stones, out_chain,
                  out_count, out_sum, out_sumsq, out_ko, out_to_play, out_passes, out_captures, out_hash,
                  out_move_count, out_searchable, with_searchable):
    """Each position i [S] with ``moves[i]`` (board index, P = pass; legal under simple ko, no suicide)
    played: fills the ``out_*`` arrays (``rules.State`` fields [S, ...]) and, with ``with_searchable``,
    ``out_searchable`` bool [S, P + 1]."""
    count_rows, points = stones.shape
    size = int(np.sqrt(points) + 0.5)
    w = size + 2
    st, g = nb.new_board(size)
    plain_of = plain_points(size)
    for i in range(count_rows):
        nb.set_stones(st, g, stones[i], to_play[i], ko[i], passes[i], False)
        m = moves[i]
        mover = 0 if to_play[i] > 0 else 1  # rules.colour_index
        h0 = hashes[i, 0]
        h1 = hashes[i, 1]
        out_captures[i, 0] = captures[i, 0]
        out_captures[i, 1] = captures[i, 1]
        if m >= points:
            nb.play(st, g, nb.PASS, False)
        else:
            nb.play(st, g, nb.padded_point(m, size), False)
            h0 ^= zobrist[m, mover, 0]
            h1 ^= zobrist[m, mover, 1]
            removed = 0
            if g[nb.CAPTURED] > 0:  # the captured stones: on the board before, empty now
                for p in range(w + 1, w * (size + 1)):
                    j = plain_of[p]
                    if j >= 0 and stones[i, j] != 0 and st[nb.COLOUR, p] == nb.EMPTY:
                        h0 ^= zobrist[j, 1 - mover, 0]
                        h1 ^= zobrist[j, 1 - mover, 1]
                        removed += 1
            out_captures[i, mover] += removed
        _export(st, g, plain_of, out_stones[i], out_chain[i], out_count[i], out_sum[i], out_sumsq[i])
        k = g[nb.KO]
        out_ko[i] = -1 if k < 0 else plain_of[k]
        out_to_play[i] = 1 if g[nb.TO_PLAY] == nb.BLACK else -1
        out_passes[i] = g[nb.PASSES]
        out_hash[i, 0] = h0
        out_hash[i, 1] = h1
        out_move_count[i] = move_count[i] + 1
        if with_searchable:
            _searchable_row(st, g, out_searchable[i])


@jit(nrt=True)
def searchable_into(stones, to_play, ko, out):
    """bool [S, P + 1]: the moves a search considers in each position (``rules.searchable_mask``, no
    suicide)."""
    size = int(np.sqrt(stones.shape[1]) + 0.5)
    st, g = nb.new_board(size)
    for i in range(stones.shape[0]):
        nb.set_stones(st, g, stones[i], to_play[i], ko[i], 0, False)
        _searchable_row(st, g, out[i])


@jit(nrt=True)
def root_moves_into(stones, to_play, ko, hash_words, zobrist, out_searchable, out_hash):
    """One position (stones int8 [P], the side to move, the simple-ko point, its Zobrist words uint32 [2]): its
    searchable moves into ``out_searchable`` bool [P + 1] (``searchable_into``), and into ``out_hash`` uint32
    [P, 2] the Zobrist words of the child of each searchable point (as ``children_into`` makes them; the other
    rows are left as they are).  The board is set up once; each child is played on a copy."""
    points = stones.shape[0]
    size = int(np.sqrt(points) + 0.5)
    w = size + 2
    st, g = nb.new_board(size)
    nb.set_stones(st, g, stones, to_play, ko, 0, False)
    _searchable_row(st, g, out_searchable)
    child, child_g = nb.new_board(size)
    plain_of = plain_points(size)
    mover = 0 if to_play > 0 else 1  # rules.colour_index
    for m in range(points):
        if not out_searchable[m]:
            continue
        nb.copy_board(st, g, child, child_g)
        nb.play(child, child_g, nb.padded_point(m, size), False)
        h0 = hash_words[0] ^ zobrist[m, mover, 0]
        h1 = hash_words[1] ^ zobrist[m, mover, 1]
        if child_g[nb.CAPTURED] > 0:
            for p in range(w + 1, w * (size + 1)):
                j = plain_of[p]
                if j >= 0 and stones[j] != 0 and child[nb.COLOUR, p] == nb.EMPTY:
                    h0 ^= zobrist[j, 1 - mover, 0]
                    h1 ^= zobrist[j, 1 - mover, 1]
        out_hash[m, 0] = h0
        out_hash[m, 1] = h1


def root_moves(state) -> tuple:
    """(searchable bool [P + 1], child hash words uint32 [P, 2]) of one unbatched ``rules.State`` in one compiled
    call (``root_moves_into``): ``searchable_batch`` of the position, and the ``hash`` of ``children_batch``'s
    child for each searchable point (0 for the others)."""
    stones = np.ascontiguousarray(np.asarray(state.stones), np.int8)
    points = stones.shape[0]
    searchable = np.zeros(points + 1, bool)
    words = np.zeros((points, 2), np.uint32)
    root_moves_into(stones, int(np.asarray(state.to_play)), int(np.asarray(state.ko)),
                    np.asarray(state.hash, np.uint32).reshape(2), zobrist_of(rules.board_size(points)), searchable,
                    words)
    return searchable, words


@functools.lru_cache(maxsize=None)
def zobrist_of(size: int) -> np.ndarray:
    """``rules.zobrist_table(size)``, drawn once per board size (not to be changed in place)."""
    return rules.zobrist_table(size)


def _host(states, name):
    return np.asarray(getattr(states, name))


def children_batch(states, moves, searchable: bool = True):
    """(child states, searchable bool [S, P + 1]): ``kernels(False).children_batch`` on the host: states a
    batched ``rules.State`` [S, ...] (numpy or JAX arrays), moves int [S].  With ``searchable`` False the
    searchable moves are not computed (all False; ``searchable_batch`` gives them later)."""
    stones = np.ascontiguousarray(_host(states, "stones"), np.int8)
    count, points = stones.shape
    out = rules.State(stones=np.zeros((count, points), np.int8), chain=np.zeros((count, points), np.int32),
                      lib_count=np.zeros((count, points), np.int32), lib_sum=np.zeros((count, points), np.int32),
                      lib_sumsq=np.zeros((count, points), np.int32), ko=np.zeros(count, np.int32),
                      to_play=np.zeros(count, np.int8), passes=np.zeros(count, np.int32),
                      captures=np.zeros((count, 2), np.int32), hash=np.zeros((count, 2), np.uint32),
                      move_count=np.zeros(count, np.int32))
    out_searchable = np.zeros((count, points + 1), bool)
    size = rules.board_size(points)
    children_into(stones, np.asarray(_host(states, "to_play"), np.int32), np.asarray(_host(states, "ko"), np.int32),
                  np.asarray(_host(states, "passes"), np.int32),
                  np.ascontiguousarray(_host(states, "captures"), np.int32).reshape(count, 2),
                  np.ascontiguousarray(_host(states, "hash"), np.uint32).reshape(count, 2),
                  np.asarray(_host(states, "move_count"), np.int32), np.asarray(moves, np.int32),
                  rules.zobrist_table(size), out.stones, out.chain, out.lib_count, out.lib_sum, out.lib_sumsq, out.ko,
                  out.to_play, out.passes, out.captures, out.hash, out.move_count, out_searchable, searchable)
    return out, out_searchable


def searchable_batch(states) -> np.ndarray:
    """bool [S, P + 1]: ``kernels(False).searchable_batch`` on the host."""
    stones = np.ascontiguousarray(_host(states, "stones"), np.int8)
    out = np.zeros((stones.shape[0], stones.shape[1] + 1), bool)
    searchable_into(stones, np.asarray(_host(states, "to_play"), np.int32), np.asarray(_host(states, "ko"), np.int32),
                    out)
    return out


@jit(nrt=True)
def gammas_into(stones, to_play, ko, last_moves, tables, lines, dist1, dist2, plain_of, pass_gammas, out):
    """float64 [S, P + 1]: the move model's gamma of every candidate of each position (0 where the heavy policy
    may not play: illegal, own eye); pass last, ``pass_gammas[1]``, or ``[2]`` right after a pass."""
    count, points = stones.shape
    size = int(np.sqrt(points) + 0.5)
    w = size + 2
    pp = w * w
    st, g = nb.new_board(size)
    base = np.zeros((2, pp), np.float64)
    flags = np.zeros((2, pp), np.int8)
    work = nw.new_work(pp, w)
    for i in range(count):
        nb.set_position(st, g, stones[i], to_play[i], ko[i], 0, last_moves[i, 0], last_moves[i, 1], True)
        nw.weights_by_point(st, g, base, flags, ft.HEAVY, tables, lines, dist1, dist2, plain_of, work, out[i])
        out[i, points] = pass_gammas[2] if last_moves[i, 0] >= points else pass_gammas[1]


@functools.lru_cache(maxsize=16)
def _model(log_gamma_bytes: bytes, size: int):
    """(heavy policy arrays, pass gammas float64 [3], line levels, board index of padded points) of log-gammas
    given as bytes (hashable, for the cache) on an N x N board."""
    log_gamma = np.frombuffer(log_gamma_bytes, np.float32)
    arrays = runner.heavy_policy(tables.policy_tables(log_gamma), size)
    offset = int(mf.group_offsets()[mf.GROUPS.index("pass")])
    pass_gammas = np.exp(log_gamma[offset:offset + 3].astype(np.float64))
    return arrays, pass_gammas, ft.line_levels(size), runner.plain_index(size)


_MODELS_BY_ARRAY: dict = {}  # (id of a log-gamma array, size) -> (that array, ``_model``)


def _model_of(log_gamma, size: int):
    """``_model`` of log-gammas on an N x N board, found by the array's identity first: the search passes the same
    cached array on every call (it must not be changed in place), and turning its 134,337 entries into a key took
    a fifth of a server's tree work."""
    key = (id(log_gamma), size)
    hit = _MODELS_BY_ARRAY.get(key)
    if hit is not None and hit[0] is log_gamma:
        return hit[1]
    model = _model(np.asarray(log_gamma, np.float32).tobytes(), size)
    if isinstance(log_gamma, np.ndarray):
        if len(_MODELS_BY_ARRAY) >= 32:
            _MODELS_BY_ARRAY.clear()
        _MODELS_BY_ARRAY[key] = (log_gamma, model)
    return model


def move_gammas(states, last_moves, log_gamma) -> np.ndarray:
    """float64 [S, P + 1]: the gamma of every candidate (pass last) of each position under log-gammas float [K]
    (``jaxgo.features.moves`` order): the same product as ``jaxgo.search.priors.move_log_strengths`` (exp of),
    0 where the heavy policy may not play (illegal, or the mover's own eye).  last_moves int [S, 2]."""
    stones = np.ascontiguousarray(_host(states, "stones"), np.int8)
    count, points = stones.shape
    arrays, pass_gammas, lines, plain_of = _model_of(log_gamma, rules.board_size(points))
    out = np.zeros((count, points + 1), np.float64)
    gammas_into(stones, np.asarray(_host(states, "to_play"), np.int32), np.asarray(_host(states, "ko"), np.int32),
                np.asarray(last_moves, np.int32).reshape(count, 2), arrays.tables, lines, arrays.dist1, arrays.dist2,
                plain_of, pass_gammas, out)
    return out
