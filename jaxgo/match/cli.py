"""``jaxgo match``: play GTP engines against each other, refereed by jaxgo's rules: a match of two engines, or a
round-robin tournament of any number (the everyday use of gomill's ringmaster, in Python 3).

Two engines (the default jaxgo against GNU Go, or any two commands)::

    jaxgo match --black "jaxgo gtp --playouts 1000" --white "gnugo --mode gtp --level 10" \\
        --size 9 --komi 7.5 --games 10 --sgf-dir games/ --parallel 1

Engine A is ``--black`` in game 1 and engine B ``--white``; they swap colours every other game (``--no-alternate``:
A keeps Black in every game); a JSON
summary on stdout with the wins of each engine, A's win rate and its 95% Wilson interval.  Without
``--black``/``--white`` the engines are jaxgo (``--playouts``, ``--strategy``) and GNU Go (``--level``).

A tournament (``jaxgo match league.toml``, or ``--player NAME=COMMAND`` two or more times)::

    board_size = 7
    komi = 7.5
    games = 4                      # per pairing; colours alternate
    time = "30:2:1"                # optional: MAIN[:BYOYOMI[:STONES]] seconds (Canadian byo-yomi)
    [players]
    gnugo0 = "gnugo --mode gtp --level 0"
    random = "jaxgo gtp --strategy random --seed {seed}"
    rave = {command = "jaxgo gtp --playouts 500", setup = ["komi 7.5"]}

Every pair of players meets ``games`` times, round by round.  Each finished game is one line of the results file
(JSON lines, default ``league.jsonl`` beside the TOML file; its first line holds the board size, komi, time
control and move limit), so a rerun of the same command plays only the games still missing (an interrupted
run loses only the games in progress; more ``games`` or a new player extend the schedule; other settings, or a
player whose command changed, are refused).  One SGF per game (``league-games/``) and each engine's stderr
(``league-logs/NAME.log``).  The standings go to stderr as a table and to stdout as JSON: per player games,
wins, losses, draws, forfeits, time losses, crashes and the Elo rating with its 95% interval; per pairing the
score with its Wilson interval.  ``--report`` prints them without playing.

Elo: Bradley-Terry maximum a posteriori (Hunter's MM iterations; a draw is half a win) with one virtual draw per
pairing as the prior (BayesElo's choice: a perfect score gets a finite rating), 95% intervals from the normal
approximation (the inverse of the posterior's information matrix); ratings are relative to the players' mean,
or to ``--anchor NAME`` (``anchor`` in the TOML file) rated 0.  With few games the intervals are wide and the
prior pulls ratings together; both are stated, not hidden.

Refereeing (``jaxgo.go.game``, positional superko, suicide forbidden): an illegal move, a crash, a timeout or a
garbled answer loses the game for that engine and the tournament goes on; a crashed engine's exit status is
recorded (``exit_status``, by player; negative: killed by that signal).  After two passes the dead stones are
settled by both engines' ``final_status_list dead``; when the lists differ the game is played on with
``kgs-genmove_cleanup`` (or ``genmove``) until two more passes, and then counted as it stands (Tromp-Taylor).
Each engine's own ``final_score`` is recorded too.  ``{seed}`` in an engine command is replaced by the game
number (deterministic engines then play different games).  Commands are split like a shell's words and run
without a shell (``jaxgo`` must be on PATH, e.g. ``.venv/bin`` activated, or give its full path).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from pathlib import Path

from jaxgo.go.gtp_client import find_gnugo
from jaxgo.match.clock import TimeControl
from jaxgo.match.league import (
    Tournament,
    load_tournament,
    parse_players,
    read_results,
    run_tournament,
    standings_table,
    tournament_summary,
)
from jaxgo.match.referee import run_match
from jaxgo.search.limits import DEFAULT_PLAYOUTS


def build_parser():
    parser = argparse.ArgumentParser(prog="jaxgo match", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tournament", nargs="?", help="tournament description (TOML; see above)")
    parser.add_argument("--player", action="append", default=[], metavar="NAME=COMMAND",
                        help="a tournament player (repeat; two or more play a round robin)")
    parser.add_argument("--results", default=None,
                        help="tournament results file, JSON lines (a rerun continues it; default: beside the TOML "
                             "file, or jaxgo-match.jsonl)")
    parser.add_argument("--report", action="store_true", help="print the tournament's standings without playing")
    parser.add_argument("--anchor", default=None, help="tournament player rated Elo 0 (default: the mean is 0)")
    parser.add_argument("--time", default=None, metavar="MAIN[:BYOYOMI[:STONES]]",
                        help="time control in seconds, e.g. 60 (sudden death) or 0:5:1 (5 s per move); sent to "
                             "the engines and enforced (a loss on time)")
    parser.add_argument("--black", help="engine A's command (default: jaxgo gtp with --playouts/--strategy)")
    parser.add_argument("--white", help="engine B's command (default: gnugo --mode gtp --level LEVEL)")
    parser.add_argument("--size", type=int, default=None, help="board size (default 9)")
    parser.add_argument("--komi", type=float, default=None, help="komi (default 7.5)")
    parser.add_argument("--games", type=int, default=None,
                        help="games, at least 1 (per pairing in a tournament; default 2)")
    parser.add_argument("--alternate", action=argparse.BooleanOptionalAction, default=True,
                        help="A vs B: swap colours every other game (default; --no-alternate: A plays Black in "
                             "every game; tournaments always alternate)")
    parser.add_argument("--sgf-dir", default=None, help="one SGF per game in this folder")
    parser.add_argument("--parallel", type=int, default=None, help="games played at once (default 1)")
    parser.add_argument("--no-pin", action="store_true", help="with --parallel: do not give each game in play its "
                        "own CPUs (default: pinned with taskset, e.g. one core per game on two cores)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds allowed per GTP command (default 120; a genmove under --time gets its clock)")
    parser.add_argument("--max-moves", type=int, default=None)
    parser.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS,
                        help="default jaxgo engine's playouts per move (default %(default)s)")
    parser.add_argument("--strategy", default="rave", help="default jaxgo engine's strategy")
    parser.add_argument("--level", type=int, default=10, help="default GNU Go engine's level")
    parser.add_argument("--details", action="store_true", help="include every game's record in the summary")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.games is not None and args.games < 1:
            raise ValueError(f"--games must be at least 1, got {args.games}")
        time_control = TimeControl.parse(args.time) if args.time else None
        if args.tournament or args.player:
            return _tournament_main(args, time_control)
    except (ValueError, OSError) as exc:
        print(f"jaxgo match: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxgo match: interrupted; the finished games are in the results file, and running the same command "
              "again plays the rest", file=sys.stderr)
        return 130
    return _two_engine_main(args, time_control)


def _tournament_main(args, time_control) -> int:
    """A round robin from a TOML file and / or ``--player`` options: play what is left, print the standings."""
    if args.black or args.white:
        raise ValueError("--black/--white are for a match of two engines; a tournament names its --player s")
    overrides = dict(size=args.size, komi=args.komi, games=args.games, time_control=time_control,
                     max_moves=args.max_moves, timeout=args.timeout, results=args.results, sgf_dir=args.sgf_dir,
                     parallel=args.parallel, anchor=args.anchor)
    if args.tournament:
        tournament = load_tournament(args.tournament, **overrides)
        if args.player:
            tournament = dataclasses.replace(tournament, players=tournament.players + parse_players(args.player))
    else:
        fields = {k: v for k, v in overrides.items() if v is not None}
        stem = str(Path(fields.get("results", "jaxgo-match.jsonl")).with_suffix(""))
        fields.setdefault("sgf_dir", stem + "-games")
        fields.setdefault("log_dir", stem + "-logs")
        tournament = Tournament(players=parse_players(args.player), **fields)
    if args.report:
        summary = tournament_summary(tournament, read_results(tournament.results, tournament.settings()))
    else:
        print(f"jaxgo match: {len(tournament.players)} players, {len(tournament.schedule())} games; results in "
              f"{tournament.results}", file=sys.stderr)
        summary = run_tournament(tournament, progress=sys.stderr, pin=not args.no_pin)
    print(standings_table(summary), file=sys.stderr)
    print(json.dumps(summary))
    return 0


def _two_engine_main(args, time_control) -> int:
    """Engine A (``--black``, default jaxgo) against engine B (``--white``, default GNU Go): a JSON summary."""
    size = args.size or 9
    komi = 7.5 if args.komi is None else args.komi
    a_cmd = args.black or (f"{shlex.quote(sys.executable)} -m jaxgo gtp --quiet --size {size} "
                           f"--komi {komi} --playouts {args.playouts} --strategy {args.strategy} --seed {{seed}}")
    if args.white:
        b_cmd = args.white
    else:
        binary = find_gnugo()
        if binary is None:
            print("gnugo not found (install it with: apt-get install -y gnugo)", file=sys.stderr)
            return 2
        b_cmd = f"{binary} --mode gtp --chinese-rules --level {args.level}"
    summary = run_match(a_cmd, b_cmd, args.games or 2, size, komi, args.alternate, args.sgf_dir,
                        args.parallel or 1, args.timeout or 120.0, args.max_moves, progress=sys.stderr,
                        time_control=time_control, pin=not args.no_pin)
    if not args.details:
        summary.pop("games_detail")
    print(json.dumps(summary))
    return 0

