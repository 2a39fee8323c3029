"""BPIP control vs MCTS (RAVE) for 9x9 move choice at equal playout budgets.

``test_positions`` makes positions by MCTS self-play (fixed seed), ``reference_moves`` runs a long MCTS on
each, and ``compare`` runs the BPIP controller (``GoPlayoutDomain``) with a playout budget and then
``jaxgo.search.searcher.Searcher`` (strategy ``rave``) with exactly the playouts the controller used, recording
whether each picks the reference move and the reference search's win rate of the chosen move.
"""

from __future__ import annotations

import time

import numpy as np

from jaxgo.bpip.control import run_search
from jaxgo.bpip.go_playout import GO_VALUE_GRID, GoPlayoutDomain, to_numpy
from jaxgo.bpip.tree import Settings
from jaxgo.go.game import new_game
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.searcher import Searcher


def game_from_moves(moves: list[int], size: int = 9, komi: float = 7.5):
    """A game with the given alternating moves (point indices) played from the empty board."""
    game = new_game(size, komi)
    for mv in moves:
        game.play(game.to_play, int(mv))
    return game


def test_positions(count: int, size: int = 9, komi: float = 7.5, playouts: int = 256, seed: int = 0,
                   spacing: int = 4, start: int = 4) -> list[list[int]]:
    """Move lists of ``count`` positions from MCTS self-play games (positions after start, start+spacing, ...)."""
    out, game_no = [], 0
    while len(out) < count:
        game = new_game(size, komi)
        config = SearchConfig(strategy="rave", leaves_per_batch=32, playout_policy="light", bias_c2=0.0)
        searcher = Searcher(game.rules, config, seed=seed + game_no)
        moves = []
        while len(out) < count and not game.is_over() and len(moves) < 60:
            if len(moves) >= start and (len(moves) - start) % spacing == 0:
                out.append(list(moves))
            r = searcher.search(game, SearchLimits(playouts=playouts))
            if r.move < 0:
                break
            game.play(game.to_play, r.move)
            moves.append(int(r.move))
        game_no += 1
    return out


def mcts_move(moves: list[int], playouts: int, seed: int = 0, size: int = 9, komi: float = 7.5,
              leaves_per_batch: int = 32) -> dict:
    """One RAVE search; returns the move, its win rate and the per-move root statistics."""
    game = game_from_moves(moves, size, komi)
    cfg = SearchConfig(strategy="rave", leaves_per_batch=leaves_per_batch, resign_min_playouts=10**9,
                       playout_policy="light", bias_c2=0.0)
    r = Searcher(game.rules, cfg, seed=seed).search(game, SearchLimits(playouts=playouts))
    return {"move": int(r.move), "win_rate": float(r.win_rate), "playouts": int(r.playouts),
            "values": np.asarray(r.values), "visits": np.asarray(r.visits), "seconds": r.seconds}


def bpip_move(moves: list[int], budget: int, method: str = "qss", playouts_per_leaf: int = 8, seed: int = 0,
              size: int = 9, komi: float = 7.5, cost: float = 1e-4, z: float = 2.0, alpha: float = 0.5) -> dict:
    """One BPIP-controlled search with a playout budget."""
    game = game_from_moves(moves, size, komi)
    dom = GoPlayoutDomain(size, komi, playouts_per_leaf=playouts_per_leaf, z=z, seed=seed, budget=budget)
    start = time.perf_counter()
    res = run_search(dom, to_numpy(game.state), method,
                     Settings(grid=GO_VALUE_GRID, cost_per_etu=cost, alpha=alpha, max_expansions=10**6))
    return {"move": int(res.move), "expansions": res.expansions, "playouts": dom.playouts,
            "stop": res.stop_reason, "root_values": res.root_values, "seconds": time.perf_counter() - start}


def compare(positions: list[list[int]], budgets: list[int], reference_playouts: int = 20000,
            methods=("qss", "trqss"), playouts_per_leaf: int = 8, seed: int = 0, log=print,
            references: list[dict] | None = None) -> list[dict]:
    """Agreement with the reference move for every (position, budget, method) and MCTS at equal budget.

    ``references``: reference searches of an earlier run ({"move", "win_rate", "values"} per position) to reuse.
    Every record carries its position's reference under "reference_search" (values as a list).
    """
    records = []
    for pi, moves in enumerate(positions):
        if references is not None:
            ref = dict(references[pi])
            ref["values"] = np.asarray(ref["values"], dtype=np.float64)
        else:
            ref = mcts_move(moves, reference_playouts, seed=1000 + pi, leaves_per_batch=128)
        ref_values = ref["values"]
        ref_record = {"move": ref["move"], "win_rate": ref["win_rate"],
                      "values": [None if np.isnan(v) else float(v) for v in ref_values]}

        def score(mv):
            v = ref_values[mv] if 0 <= mv < len(ref_values) else float("nan")
            return None if np.isnan(v) else round(float(v), 4)

        for budget in budgets:
            for method in methods:
                b = bpip_move(moves, budget, method, playouts_per_leaf, seed=seed + pi)
                m = mcts_move(moves, b["playouts"], seed=seed + pi)
                rec = {"position": pi, "ply": len(moves), "budget": budget, "method": method,
                       "reference": ref["move"], "reference_win_rate": round(ref["win_rate"], 4),
                       "bpip_move": b["move"], "bpip_agree": b["move"] == ref["move"],
                       "bpip_ref_value": score(b["move"]), "bpip_playouts": b["playouts"],
                       "bpip_expansions": b["expansions"], "bpip_stop": b["stop"],
                       "bpip_seconds": round(b["seconds"], 2),
                       "mcts_move": m["move"], "mcts_agree": m["move"] == ref["move"],
                       "mcts_ref_value": score(m["move"]), "mcts_playouts": m["playouts"],
                       "mcts_seconds": round(m["seconds"], 2), "reference_search": ref_record}
                records.append(rec)
                if log:
                    log({k: v for k, v in rec.items() if k != "reference_search"})
    return records


def play_match(games: int, budget: int, size: int = 9, komi: float = 7.5, max_moves: int = 150,
               playouts_per_leaf: int = 8, seed: int = 0, log=print) -> dict:
    """A small match, BPIP (QSS) vs MCTS rave, colours alternating; both get ``budget`` playouts per move
    (BPIP's last expansion may overshoot by up to one expansion).  Ends after two passes, a resignation by
    MCTS, or ``max_moves`` moves, then Tromp-Taylor area score.  Returns wins per engine and the games."""
    from jaxgo.go.coords import BLACK, colour_letter

    results = []
    for g in range(games):
        bpip_colour = BLACK if g % 2 == 0 else -BLACK
        game = new_game(size, komi)
        config = SearchConfig(strategy="rave", leaves_per_batch=32, playout_policy="light", bias_c2=0.0)
        searcher = Searcher(game.rules, config, seed=seed + g)
        moves, winner, passes = [], None, 0
        while len(moves) < max_moves and passes < 2:
            if game.to_play == bpip_colour:
                dom = GoPlayoutDomain(size, komi, playouts_per_leaf=playouts_per_leaf, seed=seed + 100 * g + len(moves),
                                      budget=budget)
                res = run_search(dom, to_numpy(game.state), "qss",
                                 Settings(grid=GO_VALUE_GRID, cost_per_etu=1e-4, max_expansions=10**6))
                mv = int(res.move)
                if game.illegal_reason(game.to_play, mv) is not None:  # superko: BPIP checks simple ko only
                    mv = size * size
            else:
                r = searcher.search(game, SearchLimits(playouts=budget))
                if r.move < 0:
                    winner = bpip_colour
                    break
                mv = int(r.move)
            passes = passes + 1 if mv == size * size else 0
            game.play(game.to_play, mv)
            moves.append(mv)
        score = float(game.score())
        if winner is None:
            winner = BLACK if score > 0 else -BLACK
        rec = {"game": g, "bpip_colour": colour_letter(bpip_colour), "moves": len(moves),
               "score_black": score, "bpip_won": winner == bpip_colour}
        results.append(rec)
        if log:
            log(rec)
    return {"games": results, "bpip_wins": sum(r["bpip_won"] for r in results), "mcts_wins":
            sum(not r["bpip_won"] for r in results), "budget": budget}
