"""Strength of jaxgo vs GNU Go: win rate vs playouts (or time) per move for each search strategy.

    jaxgo eval strength run --strategies uct rave --playouts 1000 3000 10000 30000 \\
        --games 100 --level 10 --log benchmarks/strength_9x9.jsonl
    jaxgo eval strength run --strategies rave --time 0:2:1 --games 100 --parallel 2 \\
        --log benchmarks/strength_9x9_time.jsonl          # 2 s per move on a clock (Canadian byo-yomi)
    jaxgo eval strength run --size 19 --strategies rave --time 0:10:1 --games 20 \\
        --log benchmarks/strength_19x19.jsonl
    jaxgo eval strength report --log benchmarks/strength_9x9.jsonl \\
        --plot docs/figures/strength_9x9.png
    jaxgo eval strength report --log benchmarks/strength_9x9.jsonl --plot-labels default \\
        --plot curve.png --baseline default --forest ablations.png   # each series minus the default's win rate
    jaxgo eval strength audit --log benchmarks/strength_9x9.jsonl --sgf-dir games.tar.xz \\
        --label default --playouts 10000 --out resign_audit.jsonl   # were the resignations right?
    jaxgo eval strength audit --log benchmarks/strength_19x19_time.jsonl.gz --size 19 \\
        --sgf-dir benchmarks/games/sgf_19x19_time.tar.xz --label default-10s --time 0:10:1 --estimate \\
        --out resign_estimates.jsonl                              # GNU Go's score estimate where jaxgo resigned

``--time MAIN[:BYOYOMI[:STONES]]`` plays on a clock that the referee enforces (a loss on time) and tells both
engines (``time_settings`` / ``time_left``); jaxgo then budgets its moves by the clock instead of playouts.
With ``--parallel 2`` the two games in play run one per core (``jaxgo.match.CpuShares``, ``--no-pin`` to turn off);
each finished game prints a progress line (game, result, running score) on stderr.

``run`` plays the games in rounds (two games per configuration per round, colours alternating, so every
configuration advances together) and appends one JSON line per finished game to the log; rerunning the same
command continues where the log ends (a killed run loses at most the games in progress).  ``report`` prints a
Markdown table (games, wins, win rate with its 95% Wilson interval, forfeits) and draws win rate vs playouts.
With ``--baseline LABEL...`` it also sets every series against the series of the first of those labels at the same
board, strategy and budget: the difference of the win rates with Newcombe's 95% interval (his hybrid score
interval, ``jaxgo.match.difference_interval``), as a table and, with ``--forest``, as a plot of one bar per change.
Every game is refereed by ``jaxgo.match`` (komi 7.5, area scoring, positional superko).

``ladders`` counts, in one series' SGFs, the moves of each side that extend a string in atari into a ladder
that still captures it (``jaxgo.go.ladder.failed_escapes``; heavy playouts do not read ladders):

    jaxgo eval strength ladders --log benchmarks/strength_9x9_default.jsonl.gz \\
        --sgf-dir benchmarks/games/sgf_9x9_default.tar.xz --sgf-folder sgf_default --label default --playouts 10000

``swings`` asks GNU Go's ``estimate_score`` after every jaxgo move of one series' games (with GNU Go to move, so the
tempo does not zigzag the series) and tells where each game turned: its largest fall from one jaxgo move to the next
and, in a lost game, the move from which jaxgo stays behind for good, summarised for lost and won games:

    jaxgo eval strength swings --log benchmarks/strength_9x9_default.jsonl.gz \\
        --sgf-dir benchmarks/games/sgf_9x9_default.tar.xz --sgf-folder sgf_default --label default --playouts 10000 \\
        --out swings_10k.jsonl

``audit`` checks the resignations of one series: every game jaxgo lost by resigning is set up again from its SGF
(a folder of ``--sgf-dir`` or a tar of one) and played on from the resigning position against the same opponent,
jaxgo at the same budget but never resigning; it prints how many of them jaxgo still wins (a resignation that a
win follows was premature).  With ``--estimate`` (the way to audit a series on a clock, ``--time``, and a quick
one for long games) GNU Go's ``estimate_score`` of each resigning position is recorded instead, with jaxgo's
margin in it.  Resumable like ``run`` (one JSON line per game in ``--out``).

Logs may be gzip-compressed (``.jsonl.gz``, as the logs kept in benchmarks/ are): ``report`` reads either kind,
and a log named ``X.jsonl`` that is missing is read from ``X.jsonl.gz`` (and the other way round), so the
commands in benchmarks/RESULTS.md work with either name.  ``run`` appends to whichever file that finds (a new
gzip member for a ``.gz`` log); with neither it starts the named file (plain text unless the name ends in .gz).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
from collections import defaultdict
from pathlib import Path

from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.gtp_client import find_gnugo
from jaxgo.match import TimeControl, difference_interval, run_match, sgf_files, wilson_interval

DEFAULT_ENGINE = f"{shlex.quote(sys.executable)} -m jaxgo gtp"


def engine_command(strategy: str, playouts: int | None, extra: str = "", engine: str = DEFAULT_ENGINE,
                   size: int = 9) -> str:
    """The jaxgo GTP command of one configuration (``playouts`` None: the budget comes from the clock)."""
    budget = f"--playouts {playouts} " if playouts else ""
    return (f"{engine} --quiet --size {size} --komi 7.5 --strategy {strategy} "
            f"{budget}--seed {{seed}} {extra}").strip()


def series_key(rec: dict) -> tuple:
    """(size, label, strategy, playouts, time) of a game record; records from before sizes and clocks were
    logged are 9x9 without a clock."""
    return (rec.get("size", 9), rec.get("label", ""), rec["strategy"], rec.get("playouts"), rec.get("time"))


def resolve(log: Path) -> Path:
    """The file a log name refers to: the name itself, else its ``.gz`` twin (X.jsonl <-> X.jsonl.gz)."""
    if log.exists():
        return log
    twin = log.with_suffix("") if log.suffix == ".gz" else log.with_name(log.name + ".gz")
    return twin if twin.exists() else log


def open_log(log: Path, mode: str):
    """Open a log as text, through gzip when its name ends in ``.gz`` (append mode adds a gzip member)."""
    if log.suffix == ".gz":
        return gzip.open(log, mode + "t", encoding="utf-8")
    return log.open(mode, encoding="utf-8")


def load(log: Path) -> list[dict]:
    log = resolve(log)
    if not log.exists():
        return []
    with open_log(log, "r") as f:
        return [json.loads(line) for line in f.read().splitlines() if line.strip()]


def gnugo_command(level: int) -> str | None:
    """The GNU Go opponent's command at ``level`` (Chinese rules), or None (with a message) if it is missing."""
    gnugo = find_gnugo()
    if gnugo is None:
        print("gnugo not found (apt-get install -y gnugo)", file=sys.stderr)
        return None
    return f"{gnugo} --mode gtp --chinese-rules --level {level}"


def run(args) -> int:
    opponent = gnugo_command(args.level)
    if opponent is None:
        return 2
    time_control = TimeControl.parse(args.time) if args.time else None
    log = resolve(Path(args.log))
    log.parent.mkdir(parents=True, exist_ok=True)
    budgets = [None] if args.time else args.playouts
    configs = [(s, p) for p in budgets for s in args.strategies]
    while True:
        done, won = defaultdict(int), defaultdict(int)
        for rec in load(log):
            done[series_key(rec)] += 1
            won[series_key(rec)] += bool(rec["jaxgo_won"])
        key = lambda strategy, playouts: (args.size, args.label, strategy, playouts, args.time)  # noqa: E731
        todo = [(s, p) for s, p in configs if done[key(s, p)] < args.games]
        if not todo:
            return 0
        for strategy, playouts in todo:
            first = done[key(strategy, playouts)]
            # A fresh seed per game: GNU Go is deterministic, so repeated seeds would repeat games.
            command = engine_command(strategy, playouts, args.engine_options, args.engine, args.size).replace(
                "{seed}", str(1000 + first))
            budget = playouts or args.time.replace(":", "-")
            sgf_dir = str(Path(args.sgf_dir) / f"{strategy}_{budget}_{first:04d}") if args.sgf_dir else None
            summary = run_match(command, opponent, games=2, size=args.size, komi=7.5, alternate=True,
                                sgf_dir=sgf_dir, parallel=args.parallel, timeout=args.timeout, progress=None,
                                time_control=time_control, pin=not args.no_pin)
            with open_log(log, "a") as out:
                for rec in summary["games_detail"]:
                    out.write(json.dumps({
                        "strategy": strategy, "playouts": playouts, "label": args.label, "level": args.level,
                        "size": args.size, "time": args.time, "game": first + rec["index"],
                        "jaxgo_colour": rec["a_colour"], "result": rec["result"],
                        "jaxgo_won": rec["winner_name"] == "A", "forfeit": rec.get("forfeit"),
                        "reason": rec.get("reason"), "moves": rec.get("moves"),
                    }) + "\n")
            games = first + len(summary["games_detail"])
            wins = won[key(strategy, playouts)] + summary["wins_a"]
            low, high = wilson_interval(wins, games)
            results = ", ".join(f"{r['result']} ({'won' if r['winner_name'] == 'A' else 'lost'} as "
                                f"{r['a_colour']})" for r in summary["games_detail"])
            print(f"{args.size}x{args.size} {strategy} {budget} {args.label}: {results}; {wins} of {games} "
                  f"({low:.2f}-{high:.2f}), {summary['seconds'] / 60:.1f} min", file=sys.stderr, flush=True)


def sgf_sources(path: Path, folder: str | None = None) -> dict:
    """{(strategy, budget text, game number): [SGF bytes, ...]} of a ``run --sgf-dir`` folder or a tar of
    one or more (``STRATEGY_BUDGET_FIRST/game_K.sgf`` holds game FIRST + K of its series; series with other labels
    kept in other folders give more than one candidate, told apart by ``series_game``, or by ``folder``: only the
    tar's members under that top folder)."""
    import re

    pattern = re.compile(r"([a-z0-9]+)_([^/_]+)_(\d{4})/game_(\d{4})\.sgf$")
    found = {}
    for name, data in sgf_files(path, folder or None).items():
        match = pattern.search(name)
        if match:
            strategy, budget, first, index = match.groups()
            found.setdefault((strategy, budget, int(first) + int(index)), []).append(data)
    return found


def series_game(candidates: list, moves: int):
    """The one game record among ``candidates`` (SGF bytes) with ``moves`` moves; ValueError if none or more."""
    from jaxgo.go.sgf import load_sgf

    records = [record for record in (load_sgf(data) for data in candidates) if len(record.moves) == moves]
    if len(records) != 1:
        raise ValueError(f"{len(records)} of {len(candidates)} SGF files have the logged {moves} moves")
    return records[0]


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


def audit(args) -> int:
    from concurrent.futures import ThreadPoolExecutor

    from jaxgo.go.gtp_client import GtpProcess
    from jaxgo.match import CpuShares, play_game

    opponent = gnugo_command(args.level)
    if opponent is None:
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
    done = {r["game"]: r for r in load(out)}
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

    todo = [r for r in resigned if r["game"] not in done]
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        for row in pool.map(one, todo):
            with open_log(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            done[row["game"]] = row
            outcome = (f"GNU Go estimates {row['estimate']}" if args.estimate else
                       f"played on: {row['result']} ({'won' if row['jaxgo_won'] else 'lost'})")
            print(f"game {row['game']}: resigned at move {row['resigned_at']}, {outcome}", file=sys.stderr,
                  flush=True)
    rows = [done[r["game"]] for r in resigned if r["game"] in done]
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
    done = {r["game"]: r for r in load(out)}

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
                "margins": margins, "worst_move": move, "worst_drop": round(drop, 1)}

    todo = [r for r in series if r["game"] not in done and not r.get("forfeit")]
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        for row in pool.map(one, todo):
            with open_log(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            done[row["game"]] = row
            print(f"game {row['game']} ({'won' if row['jaxgo_won'] else 'lost'}): largest fall "
                  f"{row['worst_drop']} points at move {row['worst_move']}", file=sys.stderr, flush=True)
    summary = {"series": [args.size, args.label, args.strategy, args.playouts or args.time], "games": len(series)}
    for name, won in (("lost", False), ("won", True)):
        rows = [done[r["game"]] for r in series if r["game"] in done and r["jaxgo_won"] == won]
        drops = sorted(r["worst_drop"] for r in rows)
        moves = sorted(r["worst_move"] for r in rows if r["worst_move"] is not None)
        turns = sorted(t for t in (turning_move(r["margins"]) for r in rows) if t is not None)
        summary[name] = {"games": len(rows), "median_largest_fall": median(drops),
                         "falls_over_20": sum(d > 20 for d in drops), "median_move_of_largest_fall": median(moves),
                         "largest_fall_by_move": by_tens(moves), "behind_for_good": len(turns),
                         "median_turning_move": median(turns), "turning_move_by_move": by_tens(turns)}
    print(json.dumps(summary))
    return 0


def budget_text(playouts, time) -> str:
    return f"{playouts} playouts" if playouts else f"clock {time}"


def report(args) -> int:
    games = defaultdict(list)
    for rec in (rec for log in args.log for rec in load(Path(log))):
        games[series_key(rec)].append(rec)
    print("| board | engine | per move | games | jaxgo wins | win rate | 95% interval | forfeits |")
    print("|---|---|---|---|---|---|---|---|")
    series = defaultdict(list)
    for (size, label, strategy, playouts, clock), recs in sorted(games.items(), key=lambda kv: str(kv[0])):
        wins = sum(r["jaxgo_won"] for r in recs)
        low, high = wilson_interval(wins, len(recs))
        forfeits = sum(1 for r in recs if r.get("forfeit"))
        name = strategy + (f" ({label})" if label else "")
        print(f"| {size}x{size} | {name} | {budget_text(playouts, clock)} | {len(recs)} | {wins} | "
              f"{wins / len(recs):.2f} | {low:.2f}-{high:.2f} | {forfeits} |")
        if size == args.size and playouts and (not args.plot_labels or label in args.plot_labels):
            series[name].append((playouts, wins / len(recs), low, high, len(recs)))
    if args.plot:
        plot_curves(series, games, args.size, args.plot, [parse_reference(text) for text in args.reference])
    if args.baseline:
        rows = ablation_rows(games, args.baseline)
        print()
        print("| board | engine | per move | games | win rate | baseline | baseline win rate "
              "| difference (95%, Newcombe) |")
        print("|---|---|---|---|---|---|---|---|")
        for row in rows:
            print(f"| {row['size']}x{row['size']} | {row['name']} | {row['budget']} | {row['games']} | "
                  f"{row['rate']:.2f} | {row['baseline']} ({row['baseline_games']} games) | "
                  f"{row['baseline_rate']:.2f} | {row['difference']:+.2f} ({row['low']:+.2f} to {row['high']:+.2f}) |")
        if args.forest:
            plot_forest(rows, args.forest)
    return 0


def ablation_rows(games: dict, baselines: list[str]) -> list[dict]:
    """Every series against its baseline: the series of the first label in ``baselines`` with the same board,
    strategy and budget, or for a series named in a ``LABEL=BASE`` item the series BASE at its board, strategy and
    budget (a change made on top of another change; BASE stays a series of its own); ``games``: {series_key:
    records}; the difference of the win rates with Newcombe's
    interval (``jaxgo.match.difference_interval``), ordered by board, budget and label."""
    chosen = dict(item.split("=", 1) for item in baselines if "=" in item)  # LABEL=BASE: that series' own
    plain = [item for item in baselines if "=" not in item]
    rows = []
    for (size, label, strategy, playouts, clock), recs in games.items():
        if label in plain:
            continue
        candidates = [chosen[label]] if label in chosen else plain
        base_label = next((b for b in candidates if (size, b, strategy, playouts, clock) in games), None)
        if base_label is None:
            continue
        base = games[(size, base_label, strategy, playouts, clock)]
        wins, base_wins = sum(r["jaxgo_won"] for r in recs), sum(r["jaxgo_won"] for r in base)
        d, low, high = difference_interval(wins, len(recs), base_wins, len(base))
        rows.append({"size": size, "name": strategy + (f" ({label})" if label else ""), "label": label,
                     "playouts": playouts, "clock": clock, "budget": budget_text(playouts, clock),
                     "games": len(recs), "rate": wins / len(recs), "baseline": base_label,
                     "baseline_games": len(base), "baseline_rate": base_wins / len(base),
                     "difference": d, "low": low, "high": high})
    return sorted(rows, key=lambda r: (r["size"], r["playouts"] or 0, str(r["clock"]), r["label"]))


def parse_reference(text: str) -> tuple[str, int, float]:
    """(name, playouts, win rate) of a ``--reference NAME:PLAYOUTS:RATE`` (a published figure to plot)."""
    name, sep, rest = text.rpartition(":")
    name, sep2, playouts = name.rpartition(":")
    if not (sep and sep2 and name):
        raise ValueError(f"--reference {text!r}: expected NAME:PLAYOUTS:RATE")
    return name, int(playouts), float(rest)


def plot_curves(series: dict, games: dict, size: int, path: str, references=()) -> None:
    """Win rate against playouts per move, one line per series, with Wilson intervals; ``references``:
    [(name, playouts, win rate)] drawn as stars, one legend entry per name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for index, (name, points) in enumerate(series.items()):
        points.sort()
        xs = [p[0] * (1.06 ** index) for p in points]  # a small offset per series so bars do not overlap
        ys = [p[1] for p in points]
        err = [[max(0.0, p[1] - p[2]) for p in points], [max(0.0, p[3] - p[1]) for p in points]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=name)
        for x, y, n in zip(xs, ys, [p[4] for p in points]):
            ax.annotate(f"n={n}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    for name in dict.fromkeys(r[0] for r in references):
        points = sorted((x, y) for n, x, y in references if n == name)
        ax.plot([x for x, _ in points], [y for _, y in points], "*--", ms=10, lw=0.8, label=name)
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_xlabel("playouts per move")
    ax.set_ylabel("win rate vs GNU Go")
    levels = sorted({rec.get("level") for recs in games.values() for rec in recs})
    ax.set_title(f"jaxgo vs GNU Go 3.8 level {'/'.join(map(str, levels))}, {size}x{size}, komi 7.5\n"
                 "(95% Wilson intervals; n = games)", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}", file=sys.stderr)


def plot_forest(rows: list[dict], path: str) -> None:
    """Each ablation's win-rate difference to its baseline with the 95% Newcombe interval, one row each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.38 * max(len(rows), 1)))
    ys = list(range(len(rows)))[::-1]
    for y, row in zip(ys, rows):
        colour = "tab:blue" if row["low"] > 0 else "tab:red" if row["high"] < 0 else "tab:grey"
        xerr = [[row["difference"] - row["low"]], [row["high"] - row["difference"]]]
        ax.errorbar([row["difference"]], [y], xerr=xerr, marker="o", capsize=3, color=colour)
        ax.annotate(f"{row['rate']:.2f} vs {row['baseline']} {row['baseline_rate']:.2f}, "
                    f"n={row['games']}/{row['baseline_games']}",
                    (row["high"], y), textcoords="offset points", xytext=(5, -3), fontsize=7)
    ax.set_yticks(ys, [f"{r['label'] or r['name']}, {r['size']}x{r['size']}, {r['budget']}" for r in rows], fontsize=7)
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_xlim(-0.6, 1.0)
    ax.set_xlabel("win rate minus the baseline's (95% Newcombe interval)")
    ax.set_title("jaxgo vs GNU Go: each change against its baseline\n"
                 "(baseline: " + ", ".join(sorted({r["baseline"] for r in rows})) + ")", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}", file=sys.stderr)


def add_series_arguments(parser) -> None:
    """The options that pick one series and its SGFs (``audit``, ``ladders``, ``swings``)."""
    parser.add_argument("--log", required=True, help="the series' log (.jsonl or .jsonl.gz)")
    parser.add_argument("--size", type=int, default=9, help="the series' board size (default 9)")
    parser.add_argument("--sgf-dir", required=True, help="the series' --sgf-dir folder, or a tar of it")
    parser.add_argument("--sgf-folder", default=None, help="in a tar of several series: the series' top folder")
    parser.add_argument("--label", default="")
    parser.add_argument("--strategy", default="rave")
    parser.add_argument("--playouts", type=int, default=None, help="the series' playouts per move")
    parser.add_argument("--time", default=None, help="the series' clock (MAIN:BYOYOMI:STONES)")


def series_selection(args) -> tuple[dict, list, str]:
    """(SGF sources, the series' log records, its budget as the SGF folders name it) of ``add_series_arguments``."""
    sources = sgf_sources(Path(args.sgf_dir), args.sgf_folder)
    wanted = (args.size, args.label, args.strategy, args.playouts, args.time)
    series = [r for r in load(Path(args.log)) if series_key(r) == wanted]
    budget = str(args.playouts) if args.playouts else args.time.replace(":", "-")
    return sources, series, budget


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval strength", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="play games, appending to the log")
    r.add_argument("--strategies", nargs="+", default=["uct", "rave"])
    r.add_argument("--playouts", type=int, nargs="+", default=[1000, 3000, 10000, 30000])
    r.add_argument("--time", default=None, metavar="MAIN[:BYOYOMI[:STONES]]",
                   help="play on this clock (seconds, Canadian byo-yomi) instead of --playouts")
    r.add_argument("--size", type=int, default=9, help="board size (default 9)")
    r.add_argument("--games", type=int, default=100, help="games per configuration")
    r.add_argument("--level", type=int, default=10)
    r.add_argument("--log", default="benchmarks/strength_9x9.jsonl", help="JSONL log (.jsonl or .jsonl.gz)")
    r.add_argument("--label", default="", help="tag for these games (e.g. heavy) kept apart in the report")
    r.add_argument("--engine-options", default="", help="extra `jaxgo gtp` options")
    r.add_argument("--engine", default=DEFAULT_ENGINE,
                   help="command that starts the jaxgo GTP engine (default: this Python's `-m jaxgo gtp`)")
    r.add_argument("--sgf-dir", default=None)
    r.add_argument("--parallel", type=int, default=1, help="games at once (each on its own CPUs)")
    r.add_argument("--no-pin", action="store_true", help="do not pin the games in play to their own CPUs")
    r.add_argument("--timeout", type=float, default=600.0)
    p = sub.add_parser("report", help="table and plot from the log")
    p.add_argument("--log", nargs="+", default=["benchmarks/strength_9x9.jsonl"],
                   help="one or more logs (.jsonl or .jsonl.gz)")
    p.add_argument("--plot", default=None)
    p.add_argument("--size", type=int, default=9, help="board size of the plotted playout series (default 9)")
    p.add_argument("--plot-labels", nargs="+", default=None, metavar="LABEL",
                   help="draw only these labels' series in --plot (default: all)")
    p.add_argument("--reference", action="append", default=[], metavar="NAME:PLAYOUTS:RATE",
                   help="a published win rate to draw in --plot (repeatable), e.g. 'MoGo 2011:10000:0.82'")
    p.add_argument("--baseline", nargs="+", default=None, metavar="LABEL",
                   help="also print every series' difference to the series of the first of these labels with the "
                        "same board, strategy and budget (Newcombe's 95%% interval); LABEL=BASE sets the series "
                        "LABEL against BASE instead (a change on top of another)")
    p.add_argument("--forest", default=None, help="with --baseline: draw the differences to this file")
    w = sub.add_parser("swings", help="GNU Go's score estimate after every jaxgo move: where the games turned")
    add_series_arguments(w)
    w.add_argument("--level", type=int, default=10)
    w.add_argument("--parallel", type=int, default=1, help="games estimated at once (one GNU Go each)")
    w.add_argument("--timeout", type=float, default=120.0)
    w.add_argument("--out", required=True, help="JSONL, one line per game (rerun to continue)")
    a = sub.add_parser("audit", help="play on the games jaxgo resigned, with resigning off")
    add_series_arguments(a)
    a.add_argument("--estimate", action="store_true",
                   help="instead of playing on, ask GNU Go's estimate_score at each resigning position")
    a.add_argument("--level", type=int, default=10)
    a.add_argument("--engine", default=DEFAULT_ENGINE)
    a.add_argument("--engine-options", default="")
    a.add_argument("--out", required=True, help="JSONL log of the played-on games (resumable)")
    a.add_argument("--parallel", type=int, default=1)
    a.add_argument("--no-pin", action="store_true")
    a.add_argument("--timeout", type=float, default=600.0)
    d = sub.add_parser("ladders", help="count the atari escapes into working ladders each side played")
    add_series_arguments(d)
    args = parser.parse_args(argv)
    return {"run": run, "report": report, "audit": audit, "ladders": ladders, "swings": swings}[args.command](args)

