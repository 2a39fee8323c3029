"""Post-mortems of a finished strength series (``jaxgo eval strength audit|ladders|swings``): were its
resignations right, which atari escapes ran into working ladders, and where did its games turn by GNU Go's score
estimate.  The command's description is in ``jaxgo.eval.strength``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from jaxgo.eval.series import engine_command, gnugo_command, load, open_log, resolve, series_game, series_selection
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.match import wilson_interval


def estimate_margin(text: str, colour: str) -> float:
    """Points ``colour`` ("black"/"white") is ahead by in GNU Go's ``estimate_score`` reply ("W+105.8 (upper
    bound: ...)"; "0" a tie)."""
    word = text.split()[0].upper() if text.split() else ""
    if word in ("0", "DRAW", "JIGO"):
        return 0.0
    if len(word) < 3 or word[0] not in "BW" or word[1] != "+":
        raise ValueError(f"not a score: {text!r}")
    margin = float(word[2:])
    return margin if (word[0] == "B") == (colour == "black") else -margin


def game_key(record: dict, moves: str = "moves") -> tuple:
    """(game, jaxgo's colour, moves) of a log record or an output row (its moves under the key ``moves``): a
    series extended by a second run numbers its games from 0 again, so the game number alone names no game."""
    return record["game"], record["jaxgo_colour"], record.get(moves)


def audit(args) -> int:
    from concurrent.futures import ThreadPoolExecutor

    from jaxgo.go.gtp_client import GtpProcess
    from jaxgo.match import CpuShares, play_game

    opponent = gnugo_command(args.level)
    if opponent is None:
        return 2
    if args.series_opponent != "gnugo" and not args.estimate:
        print(f"audit: plays on against GNU Go; a series against {args.series_opponent} takes --estimate",
              file=sys.stderr)
        return 2
    if (args.playouts is None) == (args.time is None):
        print("audit: give one of --playouts N and --time MAIN:BYOYOMI:STONES (the series' budget)", file=sys.stderr)
        return 2
    if args.time and not args.estimate:
        print("audit: a series on a clock is audited with --estimate (GNU Go's estimate_score)", file=sys.stderr)
        return 2
    sources, series, budget = series_selection(args)
    resigned = [r for r in series if not r["jaxgo_won"] and r.get("reason") == "resign"]
    out = resolve(Path(args.out))
    done = {game_key(r, "resigned_at"): r for r in load(out)}
    shares = CpuShares(args.parallel, not args.no_pin)

    def estimate(rec, record):
        with GtpProcess(opponent) as gnugo:
            gnugo.set_position(args.size, 7.5, record.gtp_moves())
            text = gnugo.send("estimate_score", timeout=args.timeout)
        return {"game": rec["game"], "jaxgo_colour": rec["jaxgo_colour"], "resigned_at": len(record.moves),
                "estimate": text.split()[0], "jaxgo_margin": estimate_margin(text, rec["jaxgo_colour"])}

    def one(rec):
        record = series_game(sources.get((rec["strategy"], budget, rec["game"]), []), rec["moves"])
        if args.estimate:
            return estimate(rec, record)
        jaxgo = engine_command(rec["strategy"], rec["playouts"], f"{args.engine_options} --resign-threshold 0",
                               args.engine, args.size).replace("{seed}", str(5000 + rec["game"]))
        black, white = (jaxgo, opponent) if rec["jaxgo_colour"] == "black" else (opponent, jaxgo)
        with shares.take() as cpus:
            result = play_game(black, white, args.size, 7.5, timeout=args.timeout, cpus=cpus,
                               opening=record.moves)
        won = result["winner"] == (BLACK if rec["jaxgo_colour"] == "black" else WHITE)
        return {"game": rec["game"], "jaxgo_colour": rec["jaxgo_colour"], "resigned_at": len(record.moves),
                "result": result.get("result"), "reason": result.get("reason"), "forfeit": result.get("forfeit"),
                "moves": result.get("moves"), "jaxgo_won": won}

    todo = [r for r in resigned if game_key(r) not in done]
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        for row in pool.map(one, todo):
            with open_log(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            done[game_key(row, "resigned_at")] = row
            outcome = (f"GNU Go estimates {row['estimate']}" if args.estimate else
                       f"played on: {row['result']} ({'won' if row['jaxgo_won'] else 'lost'})")
            print(f"game {row['game']}: resigned at move {row['resigned_at']}, {outcome}", file=sys.stderr,
                  flush=True)
    rows = [done[game_key(r)] for r in resigned if game_key(r) in done]
    summary = {"series": [args.size, args.label, args.strategy, args.playouts or args.time],
               "games": len(series), "lost_by_resigning": len(resigned)}
    if args.estimate:
        margins = sorted(r["jaxgo_margin"] for r in rows)
        summary.update(estimated=len(rows), estimated_behind=sum(m < 0 for m in margins),
                       margins=margins, median_margin=margins[len(margins) // 2] if margins else None)
    else:
        wins = sum(r["jaxgo_won"] for r in rows)
        low, high = wilson_interval(wins, len(rows)) if rows else (0.0, 0.0)
        summary.update(played_on=len(rows), won_when_played_on=wins, ci95=[round(low, 3), round(high, 3)],
                       win_rate_without_resigning=round((sum(r["jaxgo_won"] for r in series) + wins)
                                                        / max(1, len(series)), 3))
    print(json.dumps(summary))
    return 0


def laddered_escapes(record, colour: int) -> int:
    """How many moves of ``colour`` (BLACK / WHITE) in a game record extend a string in atari into a ladder that
    still captures it (``jaxgo.go.ladder.failed_escapes`` of the position before the move)."""
    from jaxgo.go.hostboard import Board
    from jaxgo.go.ladder import failed_escapes

    board = Board(record.size)
    for stone_colour, points in ((BLACK, record.setup_black), (WHITE, record.setup_white)):
        for point in points:
            board.stones[point] = stone_colour
    count = 0
    for number, (mover, move) in enumerate(record.moves):
        board.to_play = mover
        count += mover == colour and move in failed_escapes(board)
        board = board.play(move)
        if board is None:
            raise ValueError(f"move {number + 1} of the record is illegal on the host board")
    return count


def ladders(args) -> int:
    """Atari escapes into working ladders played by jaxgo and by GNU Go in one series' games (JSON summary)."""
    sources, series, budget = series_selection(args)
    counts = {"jaxgo": [], "gnugo": []}
    outcomes = []
    for rec in series:
        record = series_game(sources.get((rec["strategy"], budget, rec["game"]), []), rec["moves"])
        jaxgo = BLACK if rec["jaxgo_colour"] == "black" else WHITE
        counts["jaxgo"].append(laddered_escapes(record, jaxgo))
        counts["gnugo"].append(laddered_escapes(record, -jaxgo))
        outcomes.append(rec["jaxgo_won"])
    summary = {"series": [args.size, args.label, args.strategy, args.playouts or args.time], "games": len(outcomes),
               "jaxgo_wins": sum(outcomes)}
    for side, per_game in counts.items():
        games = [won for won, n in zip(outcomes, per_game) if n]
        summary[side] = {"escapes": sum(per_game), "games": len(games), "games_jaxgo_lost": games.count(False)}
    print(json.dumps(summary))
    return 0


def median(values: list):
    """The middle of sorted ``values`` (the upper one of an even count), None when empty."""
    return values[len(values) // 2] if values else None


def by_tens(moves: list[int]) -> dict:
    """{"1-10": count, "11-20": count, ...} of move numbers, up to the last decade that holds one."""
    return {f"{lo}-{lo + 9}": sum(lo <= m <= lo + 9 for m in moves) for lo in range(1, max(moves + [1]) + 1, 10)}


def jaxgo_margins(record, jaxgo: str, estimate) -> list[tuple[int, float]]:
    """[(move number, jaxgo's margin)] after each of jaxgo's moves in a game record: ``estimate(moves)`` is the
    score text (GNU Go's ``estimate_score``) of the position after ``moves`` (GTP pairs), ``jaxgo`` its colour
    ("black"/"white").  Every margin is taken with the opponent to move, so that the side to move's tempo does not
    make the series zigzag."""
    moves = record.gtp_moves()
    letter = jaxgo[0].upper()
    return [(number, estimate_margin(estimate(moves[:number]), jaxgo))
            for number in range(1, len(moves) + 1) if moves[number - 1][0].upper().startswith(letter)]


def worst_drop(margins: list[tuple[int, float]]) -> tuple[int | None, float]:
    """(move number, points) of the largest fall of jaxgo's margin from one of its moves to the next (the
    opponent's reply and jaxgo's answer together); (None, 0.0) when it never falls."""
    worst = (None, 0.0)
    for (_, before), (number, after) in zip(margins, margins[1:]):
        if before - after > worst[1]:
            worst = (number, before - after)
    return worst


def turning_move(margins: list[tuple[int, float]]) -> int | None:
    """The move number of jaxgo's move from which its margin stays below zero to the end (None if it ends
    ahead or level)."""
    turn = None
    for number, margin in reversed(margins):
        if margin >= 0:
            break
        turn = number
    return turn


def swings(args) -> int:
    """Where jaxgo's games turned: GNU Go's score estimate after every jaxgo move of one series' games, each
    game's largest fall and the move it came at, summarised for lost and won games (JSON line per game in
    ``--out``, resumable, and a JSON summary)."""
    from concurrent.futures import ThreadPoolExecutor

    from jaxgo.go.gtp_client import GtpProcess

    opponent = gnugo_command(args.level)
    if opponent is None:
        return 2
    sources, series, budget = series_selection(args)
    out = resolve(Path(args.out))
    done = {game_key(r): r for r in load(out)}

    def one(rec):
        record = series_game(sources.get((rec["strategy"], budget, rec["game"]), []), rec["moves"])
        with GtpProcess(opponent) as gnugo:
            gnugo.set_position(args.size, 7.5)
            played = []

            def estimate(moves):
                for colour, vertex in moves[len(played):]:
                    gnugo.send(f"play {colour} {vertex}")
                    played.append((colour, vertex))
                return gnugo.send("estimate_score", timeout=args.timeout)

            margins = jaxgo_margins(record, rec["jaxgo_colour"], estimate)
        move, drop = worst_drop(margins)
        return {"game": rec["game"], "jaxgo_colour": rec["jaxgo_colour"], "jaxgo_won": rec["jaxgo_won"],
                "moves": rec["moves"], "margins": margins, "worst_move": move, "worst_drop": round(drop, 1)}

    todo = [r for r in series if game_key(r) not in done and not r.get("forfeit")]
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        for row in pool.map(one, todo):
            with open_log(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            done[game_key(row)] = row
            print(f"game {row['game']} ({'won' if row['jaxgo_won'] else 'lost'}): largest fall "
                  f"{row['worst_drop']} points at move {row['worst_move']}", file=sys.stderr, flush=True)
    summary = {"series": [args.size, args.label, args.strategy, args.playouts or args.time], "games": len(series)}
    for name, won in (("lost", False), ("won", True)):
        rows = [done[game_key(r)] for r in series if game_key(r) in done and r["jaxgo_won"] == won]
        drops = sorted(r["worst_drop"] for r in rows)
        moves = sorted(r["worst_move"] for r in rows if r["worst_move"] is not None)
        turns = sorted(t for t in (turning_move(r["margins"]) for r in rows) if t is not None)
        summary[name] = {"games": len(rows), "median_largest_fall": median(drops),
                         "falls_over_20": sum(d > 20 for d in drops), "median_move_of_largest_fall": median(moves),
                         "largest_fall_by_move": by_tens(moves), "behind_for_good": len(turns),
                         "median_turning_move": median(turns), "turning_move_by_move": by_tens(turns)}
    print(json.dumps(summary))
    return 0
