"""``jaxgo gtp``: a Go Text Protocol (version 2) engine on stdin/stdout.

``jaxgo gtp [options]`` searches in this process; ``jaxgo gtp --server ADDR`` is the same engine whose
searches run in a ``jaxgo serve`` process (``tcp:HOST:PORT``, ``HOST:PORT``, ``PORT`` or ``unix:PATH``), so many
GTP sessions share one device.  Both take the search options of ``jaxgo.search.config.add_arguments`` (the
remote one sends them with every query).

Start-up: nothing here imports JAX before the first command that needs it; the first commands a GUI sends
(``name``, ``list_commands``, ``boardsize``, ``komi``, ``play`` ...) are answered at once while a background
thread compiles ahead (``jaxgo.gtp.warmup``; ``--no-warmup`` turns it off).  The end: ``quit``, the end of
input, SIGTERM and SIGINT all close the session and exit with status 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading

from jaxgo.go.config import KO_RULES, Rules
from jaxgo.search import config as search_config
from jaxgo.search.limits import DEFAULT_PLAYOUTS

MAX_KOMI = 1000.0  # as the GTP komi command (jaxgo.gtp.core.MAX_KOMI)
MAX_SECONDS = 24 * 3600.0

DESCRIPTION = ("Go Text Protocol (v2) engine on stdin/stdout, for GUIs (Sabaki, GoGui, Lizzie) and match runners.  "
               "The default engine is the strongest configuration measured: "
               f"{search_config.SearchConfig().describe()}; {DEFAULT_PLAYOUTS} playouts per move unless "
               "--playouts, --seconds or the GTP clock say otherwise.  Limits: loadsgf reads regular files of at "
               "most 8 MiB, 20,000 SGF nodes and 1,500 main-line moves, |komi| <= 1000 (the error names the "
               "limit); printsgf FILE replaces the file atomically.  The session ends (exit 0) on quit, end of "
               "input, SIGTERM, SIGINT and when the parent process dies.")


def build_parser() -> argparse.ArgumentParser:
    """The options (every default is known without JAX)."""
    # conflict_handler: --resign-min-playouts below replaces the search module's option of that name
    parser = argparse.ArgumentParser(prog="jaxgo gtp", description=DESCRIPTION, conflict_handler="resolve")
    parser.add_argument("--size", type=int, default=19, help="board size (default %(default)s)")
    parser.add_argument("--komi", type=float, default=7.5, help="komi (default %(default)s)")
    parser.add_argument("--rules", choices=KO_RULES, default="positional", help="ko rule (default %(default)s)")
    parser.add_argument("--suicide", action="store_true", help="allow multi-stone suicide (default: forbidden)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the search's random choices (default: random)")
    parser.add_argument("--playouts", type=int, default=None,
                        help=f"playouts per move (default {DEFAULT_PLAYOUTS} unless --seconds or a GTP clock is set)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="seconds per move (default: none; the GTP clock when set, at most 60 s of it per move)")
    parser.add_argument("--quiet", action="store_true", help="no debug output on stderr (default: debug output)")
    parser.add_argument("--server", default=None, metavar="ADDR",
                        help="thin front end: run searches in a `jaxgo serve` process (tcp:HOST:PORT or unix:PATH; "
                             "default: search in this process)")
    parser.add_argument("--ponder", action="store_true",
                        help="think on the opponent's time: after each genmove, search on until the next command "
                             "and reuse that tree (local engine only; at most 4 moves' budgets; default: off)")
    parser.add_argument("--no-warmup", action="store_true",
                        help="do not compile ahead in a background thread (default: compile ahead at start-up)")
    search_config.add_arguments(parser)
    parser.add_argument("--resign-min-playouts", type=int, default=None,
                        help="playouts a search needs before it may resign (default "
                             f"{search_config.DEFAULT.resign_min_playouts}, or half of --playouts when smaller)")
    return parser


def resign_min_playouts(given: int | None, playouts: int | None) -> int:
    """``--resign-min-playouts``: as given, else the SearchConfig default (2000), lowered to half of
    ``--playouts`` when that is smaller -- a search of 1000 playouts could otherwise never resign, and a lost
    game was played to its end."""
    if given is not None:
        return given
    default = search_config.DEFAULT.resign_min_playouts
    return default if playouts is None else min(default, max(1, playouts // 2))


def rules_from_args(args) -> Rules | None:
    """The Rules of the --size/--komi/--rules/--suicide options, or None after printing why they are invalid."""
    if not abs(args.komi) <= MAX_KOMI:
        print(f"jaxgo gtp: komi must be a number between -{MAX_KOMI:g} and {MAX_KOMI:g}", file=sys.stderr)
        return None
    try:
        return Rules(size=args.size, komi=args.komi, ko_rule=args.rules, suicide=args.suicide)
    except ValueError as exc:
        print(f"jaxgo gtp: {exc}", file=sys.stderr)
        return None


def budget_error(args) -> str | None:
    """Why --playouts / --seconds are unusable, or None."""
    if args.playouts is not None and args.playouts < 1:
        return "--playouts must be at least 1"
    if args.seconds is not None and not 0 < args.seconds <= MAX_SECONDS:
        return f"--seconds must be in (0, {MAX_SECONDS:g}]"
    return None


def engine_from_args(args):
    """The GTP engine of parsed options (local, or on the ``--server`` connection); None after printing why
    it cannot be built."""
    from jaxgo.gtp.engine import make_gtp_engine, make_remote_gtp_engine

    rules = rules_from_args(args)
    if rules is None:
        return None
    error = budget_error(args)
    if error is not None:
        print(f"jaxgo gtp: {error}", file=sys.stderr)
        return None
    args.resign_min_playouts = resign_min_playouts(args.resign_min_playouts, args.playouts)
    try:
        config = search_config.from_args(args)
    except ValueError as exc:
        print(f"jaxgo gtp: {exc}", file=sys.stderr)
        return None
    seed = int.from_bytes(os.urandom(4), "little") % (2 ** 31) if args.seed is None else args.seed
    options = dict(seed=seed, log=None if args.quiet else sys.stderr, playouts=args.playouts,
                   seconds=args.seconds, quick_start=True)
    if args.server is None:
        return make_gtp_engine(rules, config, ponder=args.ponder, **options)
    from jaxgo.server.client import ServerClient

    try:
        connection = ServerClient(args.server)
    except (OSError, ValueError) as exc:
        print(f"jaxgo gtp: cannot reach the server at {args.server}: {exc}", file=sys.stderr)
        return None
    try:
        return make_remote_gtp_engine(connection, rules, config, **options)
    except ValueError as exc:
        connection.close()
        print(f"jaxgo gtp: {exc}", file=sys.stderr)
        return None


def end_process(status: int) -> None:
    """After the session: flush the output, and if a helper thread is still inside JAX (a compilation of the
    warm-up that cannot be interrupted), leave at once with ``status`` rather than let the interpreter's
    shutdown meet it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the client closed the pipe: nothing more can be written
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
            except (OSError, ValueError):
                pass
    if any(thread.is_alive() for thread in threading.enumerate() if thread is not threading.main_thread()):
        os._exit(status)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    engine = engine_from_args(args)
    if engine is None:
        return 2
    from jaxgo.gtp.loop import install_signal_handlers, serve
    from jaxgo.util.orphan import exit_with_parent

    watch = None
    if threading.current_thread() is threading.main_thread():
        install_signal_handlers()
        watch = exit_with_parent()  # a GUI that kills our `sh -c` parent: SIGTERM, a clean end
    if not args.no_warmup:
        engine.session.start_warmup()
    # Reads bytes (a stray non-UTF-8 byte cannot end the session) and streams analysis commands
    # (lz-analyze, kata-analyze) until the next command arrives.
    try:
        status = int(serve(engine, getattr(sys.stdin, "buffer", sys.stdin), sys.stdout) or 0)
    finally:
        if watch is not None:
            watch.stop()
    end_process(status)
    return status


if __name__ == "__main__":
    sys.exit(main())
