"""Failure of adaptive patterns (thesis section 5.2, Figures 5.3-5.4) measured on a Go position.

The position (9x9, Black to play) is settled except for a few independent local games, as in Figure 5.3:
a Black wall (rows 0-3, three eyes) faces a White wall (rows 5-8, three eyes) across row 4.

* ``A`` = (4, 3) decides the fate of four Black stones (5, 3)-(5, 6) inside White's wall, which have A as
  their only liberty: Black at A connects them to the wall, White at A captures them (an H-like game worth
  about 10 points of area).
* ``p`` = (4, 2) is a dame next to A: whoever fills it gains one point, whatever happens at A.
* ``q`` = (4, 0) is another dame, far from A; (4, 1) and (4, 8) are dame too.

Random playouts (uniform over legal moves that do not fill one's own eye, the usual playout policy) are run
with the jaxgo rules engine.  An *adaptive pattern weight* is the mean playout result (Black's area score)
over the playouts in which Black played p while the 3x3 pattern around p looked a given way.  Because A is in
p's 3x3 (and (5, 3), one of the four stones, is on its diagonal), the pattern tells whether A was already
taken and by whom: the weights differ by about the value of A although p's own value is the same in every
case.  The value of p *within fixed circumstances* -- Black at p versus White at p, both after the same A
outcome, the comparison MCTS makes between siblings -- is measured alongside.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.go import rules

SIZE = 9
A = (4, 3)
P = (4, 2)
Q = (4, 0)

# X black, O white, . empty (row 0 at the top)
POSITION = """
X X X X X X X X X
X . X X . X X . X
X X X X X X X X X
X X X X X X X X X
. . . . O O O O .
O O O X X X X O O
O O O O O O O O O
O . O O . O O . O
O O O O O O O O O
"""


def board_from_ascii(text: str = POSITION) -> np.ndarray:
    """int8 [N*N] board from rows of ``X`` / ``O`` / ``.``."""
    rows = [r.split() for r in text.strip().splitlines()]
    lut = {"X": rules.BLACK, "O": rules.WHITE, ".": rules.EMPTY}
    return np.array([lut[c] for r in rows for c in r], dtype=np.int8)


def point(rc: tuple[int, int]) -> int:
    return rc[0] * SIZE + rc[1]


def pattern_points(rc: tuple[int, int]) -> list[int]:
    """The 3x3 neighbourhood of ``rc`` (row-major), off-board points as -1."""
    r, c = rc
    return [(r + dr) * SIZE + (c + dc) if 0 <= r + dr < SIZE and 0 <= c + dc < SIZE else -1
            for dr in (-1, 0, 1) for dc in (-1, 0, 1)]


@partial(jax.jit, static_argnames=("n", "max_moves"))
def random_playouts(state, key, n: int, max_moves: int = 40):
    """``n`` eye-avoiding uniform random playouts from ``state``.  Returns boards before each move
    (int8 [n, T, P]), moves (int32 [n, T], P = pass), movers (int8 [n, T]) and final area scores [n]."""
    points = state.stones.shape[0]

    def one(k):
        def step(carry, k_t):
            s = carry
            mask = rules.legal_mask(s)[:points] & ~rules.eye_mask(s, s.to_play)
            logits = jnp.where(mask, 0.0, -jnp.inf)
            move = jnp.where(mask.any(), jax.random.categorical(k_t, logits), points)
            over = rules.is_over(s)
            nxt = rules.play(s, move)
            nxt = jax.tree_util.tree_map(lambda a, b: jnp.where(over, a, b), s, nxt)
            rec_move = jnp.where(over, -1, move)
            return nxt, (s.stones, rec_move, s.to_play)

        final, (boards, moves, movers) = jax.lax.scan(step, state, jax.random.split(k, max_moves))
        return boards, moves, movers, rules.area_score(final, 0.0), rules.is_over(final)

    return jax.vmap(one)(jax.random.split(key, n))


def first_play(moves: np.ndarray, movers: np.ndarray, pt: int):
    """Per playout: index of the first move at ``pt`` (-1 if never) and its player (0 if never)."""
    hit = moves == pt
    has = hit.any(axis=1)
    idx = np.where(has, hit.argmax(axis=1), -1)
    who = np.where(has, movers[np.arange(len(moves)), np.maximum(idx, 0)], 0)
    return idx, who


def adaptive_pattern_experiment(n: int = 4096, seed: int = 0) -> dict:
    """Run the playouts and compute pattern weights of Black's move at p and q, split by what A looked like
    when the move was played, and the value of p inside fixed circumstances.

    Returns a JSON-able dict with, for each (move, circumstance): the number of playouts and the mean result
    (the adaptive weight), plus the A-swing measured directly (mean result when Black vs White played A)."""
    board = board_from_ascii()
    state = rules.from_board(board, rules.BLACK)
    boards, moves, movers, scores, over = (np.asarray(x) for x in random_playouts(state, jax.random.PRNGKey(seed), n))
    a_pt, p_pt, q_pt = point(A), point(P), point(Q)
    a_idx, a_who = first_play(moves, movers, a_pt)

    def weights(pt: int) -> dict:
        idx, who = first_play(moves, movers, pt)
        out = {}
        for mover, mname in ((rules.BLACK, "black"), (rules.WHITE, "white")):
            sel = who == mover
            # what A held when pt was played: 0 empty, 1 black, -1 white (read from the board before the move)
            a_then = boards[np.arange(n), np.maximum(idx, 0), a_pt]
            for a_val, aname in ((1, "A_black"), (-1, "A_white"), (0, "A_empty")):
                m = sel & (a_then == a_val)
                out[f"{mname}_plays_after_{aname}"] = {
                    "playouts": int(m.sum()), "mean_result": float(scores[m].mean()) if m.any() else None}
        return out

    def pattern_weights(pt: int) -> list[dict]:
        """What an adaptive-pattern system stores: mean result per 3x3 pattern seen when Black played pt."""
        idx, who = first_play(moves, movers, pt)
        nb = np.array(pattern_points(P if pt == p_pt else Q if pt == q_pt else divmod(pt, SIZE)))
        rows = {}
        for k in np.nonzero(who == rules.BLACK)[0]:
            b = boards[k, idx[k]]
            key = "".join("#" if j < 0 else ".XO"[int(b[j])] for j in nb)
            rows.setdefault(key, []).append(scores[k])
        return sorted(({"pattern": [key[0:3], key[3:6], key[6:9]], "playouts": len(v), "weight": float(np.mean(v))}
                       for key, v in rows.items()), key=lambda r: -r["playouts"])

    w_p, w_q = weights(p_pt), weights(q_pt)
    summary = {
        "position": POSITION.strip().splitlines(),
        "A": A, "p": P, "q": Q,
        "playouts": n,
        "finished": int(over.sum()),
        "mean_result": float(scores.mean()),
        "A_swing": float(scores[a_who == rules.BLACK].mean() - scores[a_who == rules.WHITE].mean()),
        "p_weights": w_p,
        "q_weights": w_q,
        "p_patterns": pattern_weights(p_pt),
        "q_patterns": pattern_weights(q_pt),
    }
    bp = w_p
    summary["pattern_weight_gap_p"] = _diff(bp["black_plays_after_A_black"], bp["black_plays_after_A_white"])
    summary["value_of_p_given_A_black"] = _diff(bp["black_plays_after_A_black"], bp["white_plays_after_A_black"])
    summary["value_of_p_given_A_white"] = _diff(bp["black_plays_after_A_white"], bp["white_plays_after_A_white"])
    return summary


def _diff(a: dict, b: dict):
    if a["mean_result"] is None or b["mean_result"] is None:
        return None
    return a["mean_result"] - b["mean_result"]
