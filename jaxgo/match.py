"""``python -m jaxgo.match``: play GTP engines against each other, refereed by jaxgo's rules.

    python -m jaxgo.match --black "python -m jaxgo gtp --playouts 1000" --white "gnugo --mode gtp --level 10" \\
        --size 9 --komi 7.5 --games 10 --alternate --sgf-dir games/ --parallel 1

Engine A is ``--black`` and engine B ``--white``; with ``--alternate`` they swap colours every other game.  The
referee (``jaxgo.go.game``, positional superko, suicide forbidden) checks every move: an illegal move, a crash, a
timeout or a garbled answer loses the game for that engine and the match goes on.  After two passes the dead
stones are settled by both engines' ``final_status_list dead``; when the lists differ the game is played on with
``kgs-genmove_cleanup`` (or ``genmove``) until two more passes, and then counted as it stands (Tromp-Taylor).
Each engine's own ``final_score`` is recorded too.  One SGF per game; a JSON summary on stdout with the wins of
each engine, A's win rate and its 95% Wilson interval.  ``{seed}`` in an engine command is replaced by the game
number (deterministic engines then play different games).  Without ``--black``/``--white`` the engines are jaxgo
(``--playouts``, ``--strategy``) and GNU Go (``--level``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jaxgo.go.coords import BLACK, WHITE, gtp_to_point, point_to_gtp
from jaxgo.go.gtp_client import GtpError, GtpFailure, GtpProcess
from jaxgo.go.gtp_client import find_gnugo


def wilson_interval(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def _result_text(score: float) -> str:
    return f"B+{score:g}" if score > 0 else (f"W+{-score:g}" if score < 0 else "0")


def play_game(black_cmd: str, white_cmd: str, size: int = 9, komi: float = 7.5, max_moves: int | None = None,
              timeout: float = 120.0, sgf_path: str | None = None, black_name: str = "black",
              white_name: str = "white", stderr=None) -> dict:
    """Play one game; returns a record with winner (BLACK / WHITE / 0), result, reason, moves and scores."""
    from jaxgo.go.game import IllegalMove, new_game
    from jaxgo.go.sgf import game_to_sgf

    game = new_game(size=size, komi=komi)
    max_moves = max_moves or 3 * size * size
    engines = {}
    record = {"black": black_name, "white": white_name, "moves": 0, "reason": "", "winner": 0}

    def forfeit(color, reason):
        record.update(winner=-color, reason=reason, result=("W" if color == BLACK else "B") + "+Forfeit",
                      forfeit=black_name if color == BLACK else white_name)

    try:
        for color, command in ((BLACK, black_cmd), (WHITE, white_cmd)):
            try:
                engine = GtpProcess(command, timeout, stderr)
                engines[color] = engine
                engine.send(f"boardsize {size}")
                engine.send("clear_board")
                engine.send(f"komi {komi}")
            except (GtpError, GtpFailure, OSError) as exc:
                forfeit(color, f"setup failed: {exc}")
                return record
        passes = 0
        cleanup = False
        while True:
            color = game.to_play
            if passes >= 2:
                if cleanup:
                    break
                dead = _agreed_dead(engines, size)
                if dead is not None:
                    record["dead_stones"] = [point_to_gtp(p, size) for p in sorted(dead)]
                    record["scoring"] = "agreed final_status_list"
                    break
                cleanup, passes = True, 0  # play on, capturing what each side thinks is dead
                record["scoring"] = "cleanup play-out"
                continue
            if len(game.moves) >= max_moves:
                record["scoring"] = "move limit"
                break
            engine, other = engines[color], engines[-color]
            name = "black" if color == BLACK else "white"
            verb = "kgs-genmove_cleanup" if cleanup and engine.try_send("known_command kgs-genmove_cleanup") == "true" \
                else "genmove"
            try:
                reply = engine.send(f"{verb} {name}").lower()
            except (GtpError, GtpFailure) as exc:
                forfeit(color, f"{verb} failed: {exc}")
                break
            if reply == "resign":
                record.update(winner=-color, reason="resign", result=("W" if color == BLACK else "B") + "+Resign")
                break
            try:
                move = gtp_to_point(reply, size)
                game.play(color, move)
            except ValueError as exc:  # IllegalMove is a ValueError too
                reason = f"illegal move {reply}" if isinstance(exc, IllegalMove) else f"garbled move {reply!r}"
                forfeit(color, reason)
                break
            passes = passes + 1 if move == game.pass_move else 0
            try:
                other.send(f"play {name} {point_to_gtp(move, size)}")
            except (GtpError, GtpFailure) as exc:
                forfeit(-color, f"rejected the opponent's legal move {reply}: {exc}")
                break
        record["moves"] = len(game.moves)
        if "result" not in record:
            dead = record.get("dead_stones", [])
            score = _settled_score(game, [gtp_to_point(v, size) for v in dead])
            record.update(score=score, winner=BLACK if score > 0 else (WHITE if score < 0 else 0),
                          result=_result_text(score), reason=record.get("scoring", "score"))
            record["engine_scores"] = {side: engines[c].try_send("final_score", 60)
                                       for side, c in (("black", BLACK), ("white", WHITE))}
    finally:
        for engine in engines.values():
            engine.close()
        record["moves"] = len(game.moves)
        if sgf_path:
            Path(sgf_path).parent.mkdir(parents=True, exist_ok=True)
            Path(sgf_path).write_text(game_to_sgf(game, record.get("result"), black_name, white_name))
    return record


def _agreed_dead(engines, size) -> set | None:
    """The dead stones both engines name, or None when they disagree or cannot say."""
    lists = []
    for engine in engines.values():
        reply = engine.try_send("final_status_list dead", 120)
        if reply is None:
            return None
        try:
            lists.append({gtp_to_point(v, size) for v in reply.split()})
        except ValueError:
            return None
    return lists[0] if lists[0] == lists[1] else None


def _settled_score(game, dead) -> float:
    from jaxgo.go.game import Game

    board = game.board().reshape(-1).copy()
    board[list(dead)] = 0
    settled = Game(game.rules)
    for color in (BLACK, WHITE):
        points = [int(p) for p in (board == color).nonzero()[0]]
        if points:
            settled.setup_stones(color, points)
    return settled.score()


def run_match(a_cmd: str, b_cmd: str, games: int, size: int = 9, komi: float = 7.5, alternate: bool = True,
              sgf_dir: str | None = None, parallel: int = 1, timeout: float = 120.0, max_moves: int | None = None,
              names=("A", "B"), progress=None) -> dict:
    """Play ``games`` games of A against B; the JSON-ready summary."""

    def one(index):
        a_black = not (alternate and index % 2 == 1)
        black, white = (a_cmd, b_cmd) if a_black else (b_cmd, a_cmd)
        black, white = black.replace("{seed}", str(index)), white.replace("{seed}", str(index))
        bname, wname = (names[0], names[1]) if a_black else (names[1], names[0])
        sgf = os.path.join(sgf_dir, f"game_{index:04d}.sgf") if sgf_dir else None
        rec = play_game(black, white, size, komi, max_moves, timeout, sgf, bname, wname)
        rec["index"] = index
        rec["a_colour"] = "black" if a_black else "white"
        winner_name = bname if rec["winner"] == BLACK else (wname if rec["winner"] == WHITE else None)
        rec["winner_name"] = winner_name
        if progress:
            print(json.dumps({k: rec.get(k) for k in ("index", "black", "white", "result", "reason", "moves")}),
                  file=progress, flush=True)
        return rec

    start = time.time()
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        records = list(pool.map(one, range(games)))
    wins_a = sum(r["winner_name"] == names[0] for r in records)
    wins_b = sum(r["winner_name"] == names[1] for r in records)
    draws = games - wins_a - wins_b
    rate = (wins_a + 0.5 * draws) / games if games else 0.0
    low, high = wilson_interval(wins_a + 0.5 * draws, games)
    return {"engine_a": a_cmd, "engine_b": b_cmd, "size": size, "komi": komi, "games": games,
            "wins_a": wins_a, "wins_b": wins_b, "draws": draws, "win_rate_a": rate, "ci95_a": [low, high],
            "forfeits": [{"index": r["index"], "engine": r.get("forfeit"), "reason": r["reason"]}
                         for r in records if r.get("forfeit")],
            "seconds": round(time.time() - start, 1), "games_detail": records}


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m jaxgo.match", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--black", help="engine A's command (default: jaxgo gtp with --playouts/--strategy)")
    parser.add_argument("--white", help="engine B's command (default: gnugo --mode gtp --level LEVEL)")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--alternate", action="store_true", help="swap colours every other game")
    parser.add_argument("--sgf-dir", default=None)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds allowed per GTP command")
    parser.add_argument("--max-moves", type=int, default=None)
    parser.add_argument("--playouts", type=int, default=1000, help="default jaxgo engine's playouts per move")
    parser.add_argument("--strategy", default="rave", help="default jaxgo engine's strategy")
    parser.add_argument("--level", type=int, default=10, help="default GNU Go engine's level")
    parser.add_argument("--details", action="store_true", help="include every game's record in the summary")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    a_cmd = args.black or (f"{shlex.quote(sys.executable)} -m jaxgo gtp --quiet --size {args.size} "
                           f"--komi {args.komi} --playouts {args.playouts} --strategy {args.strategy} --seed {{seed}}")
    if args.white:
        b_cmd = args.white
    else:
        binary = find_gnugo()
        if binary is None:
            print("gnugo not found (install it with: apt-get install -y gnugo)", file=sys.stderr)
            return 2
        b_cmd = f"{binary} --mode gtp --chinese-rules --level {args.level}"
    summary = run_match(a_cmd, b_cmd, args.games, args.size, args.komi, args.alternate, args.sgf_dir,
                        args.parallel, args.timeout, args.max_moves, progress=sys.stderr)
    if not args.details:
        summary.pop("games_detail")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
