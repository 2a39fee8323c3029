"""Strength of jaxgo vs GNU Go: win rate vs playouts (or time) per move for each search strategy.

    jaxgo eval strength run --strategies uct rave --playouts 1000 3000 10000 30000 \\
        --games 100 --level 10 --log benchmarks/logs/strength_9x9.jsonl
    jaxgo eval strength run --strategies rave --time 0:2:1 --games 100 --parallel 2 \\
        --log benchmarks/logs/strength_9x9_time.jsonl          # 2 s per move on a clock (Canadian byo-yomi)
    jaxgo eval strength run --size 19 --strategies rave --time 0:10:1 --games 20 \\
        --log benchmarks/logs/strength_19x19.jsonl
    jaxgo eval strength report --log benchmarks/logs/strength_9x9.jsonl \\
        --plot docs/figures/strength_9x9.png
    jaxgo eval strength report --log benchmarks/logs/strength_9x9.jsonl --plot-labels default \\
        --plot curve.png --baseline default --forest ablations.png   # each series minus the default's win rate
    jaxgo eval strength audit --log benchmarks/logs/strength_9x9.jsonl --sgf-dir games.tar.xz \\
        --label default --playouts 10000 --out resign_audit.jsonl   # were the resignations right?
    jaxgo eval strength audit --log benchmarks/logs/strength_19x19_time.jsonl.gz --size 19 \\
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
``--pool NAME=LABEL+LABEL`` merges the series of those labels into one (the same configuration in several runs).
With ``--baseline LABEL...`` it also sets every series against the series of the first of those labels at the same
board, strategy and budget: the difference of the win rates with Newcombe's 95% interval (his hybrid score
interval, ``jaxgo.match.difference_interval``), as a table and, with ``--forest``, as a plot of one bar per change.
Every game is refereed by ``jaxgo.match`` (komi 7.5, area scoring, positional superko).

``ladders`` counts, in one series' SGFs, the moves of each side that extend a string in atari into a ladder
that still captures it (``jaxgo.go.ladder.failed_escapes``; heavy playouts do not read ladders):

    jaxgo eval strength ladders --log benchmarks/logs/strength_9x9_default.jsonl.gz \\
        --sgf-dir benchmarks/games/sgf_9x9_default.tar.xz --sgf-folder sgf_default --label default --playouts 10000

``swings`` asks GNU Go's ``estimate_score`` after every jaxgo move of one series' games (with GNU Go to move, so the
tempo does not zigzag the series) and tells where each game turned: its largest fall from one jaxgo move to the next
and, in a lost game, the move from which jaxgo stays behind for good, summarised for lost and won games:

    jaxgo eval strength swings --log benchmarks/logs/strength_9x9_default.jsonl.gz \\
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
import json
import sys
from collections import defaultdict
from pathlib import Path

from jaxgo.eval.series import (
    DEFAULT_ENGINE,
    OPPONENTS,
    PACHI_MIN_PLAYOUTS,
    add_series_arguments,
    budget_text,
    engine_command,
    load,
    open_log,
    opponent_command,
    resolve,
    series_key,
)
from jaxgo.eval.strength_audit import audit, ladders, swings
from jaxgo.gtp.play import fixed_handicap_points
from jaxgo.match import TimeControl, difference_interval, run_match, wilson_interval


def run(args) -> int:
    problem = run_arguments_problem(args)
    if problem:
        print(f"jaxgo eval strength run: {problem}", file=sys.stderr)
        return 2
    if opponent_command(args.opponent, args.level, args.opponent_playouts, args.opponent_threads) is None:
        return 2
    time_control = TimeControl.parse(args.time) if args.time else None
    komi = args.komi if args.komi is not None else (0.5 if args.handicap else 7.5)
    log = resolve(Path(args.log))
    log.parent.mkdir(parents=True, exist_ok=True)
    budgets = [None] if args.time else args.playouts
    configs = [(s, p) for p in budgets for s in args.strategies]
    while True:
        done, won = defaultdict(int), defaultdict(int)
        for rec in load(log):
            done[series_key(rec)] += 1
            won[series_key(rec)] += bool(rec["jaxgo_won"])
        todo = [(s, p) for s, p in configs if done[series_key(opponent_fields(args, s, p))] < args.games]
        if not todo:
            return 0
        for strategy, playouts in todo:
            fields = opponent_fields(args, strategy, playouts)
            key = series_key(fields)
            first = done[key]
            # A fresh seed per game: GNU Go is deterministic, so repeated seeds would repeat games.  In handicap
            # games jaxgo plays White in both games of a round, so the round's game index (run_match's own
            # "{seed}") goes after the round's seed: 10000 and 10001, 10020 and 10021, ...
            seed = f"{1000 + first}{{seed}}" if args.handicap else str(1000 + first)
            command = engine_command(strategy, playouts, args.engine_options, args.engine, args.size).replace(
                "{seed}", seed)
            opponent = opponent_command(args.opponent, args.level, fields.get("opponent_playouts"),
                                        args.opponent_threads, seed=1000 + first)
            budget = playouts or args.time.replace(":", "-")
            sgf_dir = str(Path(args.sgf_dir) / f"{strategy}_{budget}_{first:04d}") if args.sgf_dir else None
            summary = run_match(command, opponent, games=2, size=args.size, komi=komi, alternate=True,
                                sgf_dir=sgf_dir, parallel=args.parallel, timeout=args.timeout, progress=None,
                                time_control=time_control, pin=not args.no_pin, handicap=args.handicap)
            with open_log(log, "a") as out:
                for rec in summary["games_detail"]:
                    out.write(json.dumps({
                        **fields, "game": first + rec["index"],
                        "jaxgo_colour": rec["a_colour"], "result": rec["result"],
                        "jaxgo_won": rec["winner_name"] == "A", "forfeit": rec.get("forfeit"),
                        "reason": rec.get("reason"), "moves": rec.get("moves"),
                    }) + "\n")
            games = first + len(summary["games_detail"])
            wins = won[key] + summary["wins_a"]
            low, high = wilson_interval(wins, games)
            results = ", ".join(f"{r['result']} ({'won' if r['winner_name'] == 'A' else 'lost'} as "
                                f"{r['a_colour']})" for r in summary["games_detail"])
            print(f"{args.size}x{args.size} {strategy} {budget} {args.label} vs {key[-1]}: {results}; {wins} of "
                  f"{games} ({low:.2f}-{high:.2f}), {summary['seconds'] / 60:.1f} min", file=sys.stderr, flush=True)


def run_arguments_problem(args) -> str | None:
    """What is wrong with a ``run`` command line in one line (options that do not go together), or None."""
    if args.opponent == "gnugo" and args.opponent_playouts:
        return "--opponent-playouts is for --opponent pachi (GNU Go plays by --level)"
    if args.opponent == "pachi" and not args.time:
        low = min([args.opponent_playouts] if args.opponent_playouts else args.playouts)
        if low < PACHI_MIN_PLAYOUTS:
            return f"Pachi plays at least {PACHI_MIN_PLAYOUTS} playouts per move (asked for {low})"
    if args.opponent_threads < 1:
        return "--opponent-threads must be at least 1"
    if args.time and args.opponent_playouts:
        return "--opponent-playouts and --time exclude each other (on a clock both engines play by it)"
    if args.handicap:
        try:
            fixed_handicap_points(args.size, args.handicap)
        except ValueError:
            return f"--handicap {args.handicap}: no fixed placement of that many stones on {args.size}x{args.size}"
    return None


def opponent_fields(args, strategy: str, playouts: int | None) -> dict:
    """The fields of a log record that say which series a game of ``run`` belongs to (``series_key``)."""
    pachi = args.opponent == "pachi"
    fields = {"strategy": strategy, "playouts": playouts, "label": args.label,
              "level": None if pachi else args.level, "size": args.size, "time": args.time,
              "opponent": args.opponent}
    if pachi:
        fields["opponent_playouts"] = None if args.time else (args.opponent_playouts or playouts)
        fields["opponent_threads"] = args.opponent_threads
    if args.handicap:
        fields.update(handicap=args.handicap, komi=args.komi if args.komi is not None else 0.5)
    elif args.komi is not None:
        fields["komi"] = args.komi
    return fields


def report(args) -> int:
    games = defaultdict(list)
    for rec in (rec for log in args.log for rec in load(Path(log))):
        games[series_key(rec)].append(rec)
    games = pooled(games, args.pool)
    print("| board | engine | per move | games | jaxgo wins | win rate | 95% interval | forfeits |")
    print("|---|---|---|---|---|---|---|---|")
    series = defaultdict(list)
    for key, recs in sorted(games.items(), key=lambda kv: str(kv[0])):
        size, label, strategy, playouts, clock = key[:5]
        wins = sum(r["jaxgo_won"] for r in recs)
        low, high = wilson_interval(wins, len(recs))
        forfeits = sum(1 for r in recs if r.get("forfeit"))
        name = series_name(key)
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


def pooled(games: dict, pools: list[str]) -> dict:
    """``games`` ({series_key: records}) with the series of each ``NAME=LABEL+LABEL...`` item in ``pools`` merged
    into one series labelled NAME at each board, strategy, budget and opponent (the same configuration played in
    several runs, e.g. on two days); the merged series are no longer reported on their own."""
    out = defaultdict(list, {key: list(recs) for key, recs in games.items()})
    for item in pools or []:
        name, sep, labels = item.partition("=")
        members = set(labels.split("+"))
        if not (sep and name and all(members)):
            raise ValueError(f"--pool {item!r}: expected NAME=LABEL+LABEL")
        for key in [key for key in out if key[1] in members]:
            out[(key[0], name) + key[2:]].extend(out.pop(key))
    return out


def series_name(key: tuple) -> str:
    """A series' name in tables and plots: its strategy, label in brackets, and ``vs OPPONENT`` unless the
    opponent is GNU Go (``key``: ``series_key``, or a key from before opponents were logged)."""
    name = key[2] + (f" ({key[1]})" if key[1] else "")
    opponent = key[5] if len(key) > 5 else "gnugo"
    return name if opponent == "gnugo" else f"{name} vs {opponent}"


def ablation_rows(games: dict, baselines: list[str]) -> list[dict]:
    """Every series against its baseline: the series of the first label in ``baselines`` with the same board,
    strategy and budget, or for a series named in a ``LABEL=BASE`` item the series BASE at its board, strategy and
    budget (a change made on top of another change; BASE stays a series of its own); ``games``: {series_key:
    records}; the difference of the win rates with Newcombe's
    interval (``jaxgo.match.difference_interval``), ordered by board, budget and label."""
    chosen = dict(item.split("=", 1) for item in baselines if "=" in item)  # LABEL=BASE: that series' own
    plain = [item for item in baselines if "=" not in item]
    rows = []
    for key, recs in games.items():
        size, label, strategy, playouts, clock = key[:5]
        if label in plain:
            continue
        candidates = [chosen[label]] if label in chosen else plain
        base_label = next((b for b in candidates if (size, b) + key[2:] in games), None)
        if base_label is None:
            continue
        base = games[(size, base_label) + key[2:]]
        wins, base_wins = sum(r["jaxgo_won"] for r in recs), sum(r["jaxgo_won"] for r in base)
        d, low, high = difference_interval(wins, len(recs), base_wins, len(base))
        rows.append({"size": size, "name": series_name(key), "label": label,
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
    """Win rate against playouts per move, one line per series, with Wilson intervals, drawn to ``path``
    (``curve_figure``)."""
    fig = curve_figure(series, games, size, references)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"wrote {path}", file=sys.stderr)


def curve_figure(series: dict, games: dict, size: int, references=()):
    """The matplotlib figure of ``plot_curves``: ``series`` {name: [(playouts, rate, low, high, games)]},
    ``references`` [(name, playouts, win rate)] drawn as stars, one legend entry per name.  The legend sits to the
    right of the axes (it covered points inside them), the x ticks are the budgets played, labelled 1k, 3k, ...,
    and the game counts alternate above and below the points of successive series."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, ax = plt.subplots(figsize=(6, 4))
    budgets = set()
    for index, (name, points) in enumerate(series.items()):
        points.sort()
        budgets.update(p[0] for p in points)
        xs = [p[0] * (1.06 ** index) for p in points]  # a small offset per series so bars do not overlap
        ys = [p[1] for p in points]
        err = [[max(0.0, p[1] - p[2]) for p in points], [max(0.0, p[3] - p[1]) for p in points]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=name)
        offset = (4, 4) if index % 2 == 0 else (4, -10)
        for x, y, n in zip(xs, ys, [p[4] for p in points]):
            ax.annotate(f"n={n}", (x, y), textcoords="offset points", xytext=offset, fontsize=7)
    for name in dict.fromkeys(r[0] for r in references):
        points = sorted((x, y) for n, x, y in references if n == name)
        budgets.update(x for x, _ in points)
        ax.plot([x for x, _ in points], [y for _, y in points], "*--", ms=10, lw=0.8, label=name)
    ax.set_xscale("log")
    if budgets:
        ticks = spaced_ticks(sorted(budgets))
        ax.set_xticks(ticks, [budget_label(b) for b in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(0, 1)
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_xlabel("playouts per move")
    opponents = sorted({rec.get("opponent") or "gnugo" for recs in games.values() for rec in recs})
    levels = sorted({rec.get("level") for recs in games.values() for rec in recs if rec.get("level") is not None})
    names = [f"GNU Go 3.8 level {'/'.join(map(str, levels))}" if o == "gnugo" else o.capitalize() for o in opponents]
    ax.set_ylabel("win rate vs " + (names[0] if len(names) == 1 else "the opponent"))
    ax.set_title(f"jaxgo vs {' / '.join(names)}, {size}x{size}, komi 7.5\n(95% Wilson intervals; n = games)",
                 fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return fig


def spaced_ticks(budgets: list[int], ratio: float = 1.5) -> list[int]:
    """The budgets to label on a log axis: ascending, each at least ``ratio`` times the last kept (1000 and 1200
    would print over each other)."""
    kept = []
    for budget in budgets:
        if not kept or budget >= ratio * kept[-1]:
            kept.append(budget)
    return kept


def budget_label(playouts: int) -> str:
    """A tick label for a playout budget: 500, 1k, 2.5k, 10k, 1M."""
    if playouts >= 1_000_000:
        return f"{playouts / 1_000_000:g}M"
    return f"{playouts / 1000:g}k" if playouts >= 1000 else str(playouts)


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
    ax.set_title("jaxgo: each change against its baseline\n"
                 "(baseline: " + ", ".join(sorted({r["baseline"] for r in rows})) + ")", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"wrote {path}", file=sys.stderr)


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
    r.add_argument("--level", type=int, default=10, help="GNU Go's level (--opponent gnugo)")
    r.add_argument("--opponent", choices=OPPONENTS, default="gnugo",
                   help="gnugo (default) or pachi (built by `bash scripts/pachi.sh` from ../shared/peers/pachi)")
    r.add_argument("--opponent-playouts", type=int, default=None, metavar="N",
                   help="Pachi's playouts per move (default: jaxgo's --playouts; with --time both play the clock)")
    r.add_argument("--opponent-threads", type=int, default=2, help="Pachi's threads (default %(default)s)")
    r.add_argument("--handicap", type=int, default=0, metavar="N",
                   help="jaxgo gives N stones (fixed placement): the opponent plays Black in every game")
    r.add_argument("--komi", type=float, default=None, help="komi (default 7.5; 0.5 with --handicap)")
    r.add_argument("--log", default="benchmarks/logs/strength_9x9.jsonl", help="JSONL log (.jsonl or .jsonl.gz)")
    r.add_argument("--label", default="", help="tag for these games (e.g. heavy) kept apart in the report")
    r.add_argument("--engine-options", default="", help="extra `jaxgo gtp` options")
    r.add_argument("--engine", default=DEFAULT_ENGINE,
                   help="command that starts the jaxgo GTP engine (default: this Python's `-m jaxgo gtp`)")
    r.add_argument("--sgf-dir", default=None)
    r.add_argument("--parallel", type=int, default=1, help="games at once (each on its own CPUs)")
    r.add_argument("--no-pin", action="store_true", help="do not pin the games in play to their own CPUs")
    r.add_argument("--timeout", type=float, default=600.0)
    p = sub.add_parser("report", help="table and plot from the log")
    p.add_argument("--log", nargs="+", default=["benchmarks/logs/strength_9x9.jsonl"],
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
    p.add_argument("--pool", action="append", default=[], metavar="NAME=LABEL+LABEL",
                   help="report the series of these labels as one series NAME (repeatable), e.g. one configuration "
                        "played on two days: --pool defaults=defaults-1201+defaults-1202 --baseline defaults")
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
