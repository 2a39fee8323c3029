"""``jaxgo serve``: the batched analysis server (KataGo JSON-lines protocol)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import threading
import time

from jaxgo.search import config as search_config
from jaxgo.server.engine_config import EngineConfig, check_device_batch, default_buckets
from jaxgo.server.protocol import PERSPECTIVES
from jaxgo.server.score_estimate import SCORE_ESTIMATES
from jaxgo.server.transports import ConnectionLimits, socket_inode
from jaxgo.util.orphan import exit_with_parent

PLAYOUTS_PER_VISIT = 16  # jaxgo serve's default: a visit of KaTrain's 500 is 16 playouts (docs/server.md)

EPILOG = """\
transports (any combination; with none of --tcp/--unix/--http the server reads stdin):
  stdin/stdout   one JSON query per line in, one JSON response per line out (KaTrain/KataGo style);
                 at end of input every queued query is answered, then the server exits
  --tcp PORT     many clients on 127.0.0.1:PORT (one JSON-lines session per connection)
  --unix PATH    many clients on a Unix socket (only a socket is ever removed at PATH: a regular file there
                 is refused)
  --http PORT    web board on http://127.0.0.1:PORT/ (click to play or set up stones, live ownership,
                 win-rate graph of a loaded SGF); JSON API: GET /api/stream?q=QUERY (server-sent events),
                 POST /api/sgf (SGF text -> moves; at most 4 MiB, 20,000 nodes, 1,500 moves); a whole request
                 must arrive within --stall-timeout; beyond --max-connections: HTTP 503
  The server stops (exit 0) on SIGTERM, SIGINT, at the end of stdin in stdin mode, and when its parent process
  dies (a GUI that kills the `sh -c` it started).

query (KataGo analysis engine format; one line):
  {"id":"q1","moves":[["B","E5"],["W","C3"]],"rules":"chinese","komi":7.5,"boardXSize":9,"boardYSize":9,
   "maxVisits":800,"analyzeTurns":[0,1,2],"includeOwnership":true,"reportDuringSearchEvery":0.5}
  other fields: initialStones, initialPlayer, maxTime (seconds), includePolicy, includeMovesOwnership,
  includeOwnershipStdev, includePVVisits, includeTerritory (CRF expected territory), avoidMoves / allowMoves
  ([{"player":"B","moves":["C3"],"untilDepth":1}]), priority, priorities, analysisPVLen, overrideSettings
  (reportAnalysisWinratesAs, maxTime, or any search option by its SearchConfig field name:
  {"playout_policy":"light","bias_c2":0}).  Actions: {"id":"v","action":"query_version"},
  {"id":"t","action":"terminate","terminateId":"q1"}, {"id":"t","action":"terminate_all"}, clear_cache.
  Errors come back as {"error":..., "field":..., "id":...} ("Illegal move N: VERTEX" as in KataGo); fields that
  have no effect here get a {"warning":..., "field":..., "id":...}.  "visits" are playouts; maxVisits may be up
  to 2^50 (a search's tree stops growing at its memory cap and the search goes on); at most 1,500 moves and
  1,501 analysed turns per query.  Exit status 0 at the end of stdin, on SIGTERM and on SIGINT.

devices:
  --device-batch B  leaf rows per device call (x L playouts each): the leaves of all running searches are
                 merged up to B per call; a round with fewer pending leaves does not wait for more, it is padded
                 to the smallest compiled shape that holds it (64, 512, 4096 ... below B, and B; padding rows
                 are not played out)
  --devices N    shard every call over N local devices, B/N rows each (B a multiple of N): on a GPU host the
                 first N visible GPUs; on a CPU the host is split into N XLA devices before JAX starts

examples:
  echo '{"id":"a","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":200}' | jaxgo serve
  jaxgo serve --tcp 6464 --http 8080          # then: jaxgo gtp --server tcp:127.0.0.1:6464
  jaxgo serve --tcp 6464 --devices 4 --device-batch 8192   # one server, 4 GPUs
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxgo serve", description=__doc__, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT")
    parser.add_argument("--host", default="127.0.0.1", help="address for --tcp/--http (default 127.0.0.1)")
    parser.add_argument("--unix", metavar="PATH", help="listen on a Unix socket")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve the web board on PORT")
    parser.add_argument("--stdin", action="store_true", help="also read queries from stdin when sockets are used")
    limits = ConnectionLimits()
    parser.add_argument("--max-connections", type=int, default=limits.max_connections, metavar="N",
                        help="open socket/HTTP connections per listener; more are refused with an error line "
                             "(default %(default)s)")
    parser.add_argument("--idle-timeout", type=float, default=limits.idle_seconds, metavar="SECONDS",
                        help="close a socket connection that has no query outstanding and sends nothing for this "
                             "long (default %(default)g)")
    parser.add_argument("--stall-timeout", type=float, default=limits.stall_seconds, metavar="SECONDS",
                        help="drop a connection (and its searches) whose replies make no progress for this long: "
                             "a client that does not read them; also the deadline for a whole HTTP request to "
                             "arrive (default %(default)g)")
    search_config.add_arguments(parser)
    parser.add_argument("--max-leaves-per-search", type=int, default=EngineConfig.max_leaves_per_search,
                        help="most leaves one search selects per round when --leaves is not set "
                             "(default %(default)s)")
    parser.add_argument("--device-batch", "--max-boards", dest="max_boards", type=int, default=4096, metavar="B",
                        help="leaf rows per device call, padded to a compiled shape when fewer are pending "
                             "(default 4096; x L playouts; --max-boards is its older name)")
    parser.add_argument("--devices", type=int, default=1, metavar="N",
                        help="shard every device call over N local devices (GPUs; a CPU host is split into N); "
                             "the device batch must be a multiple of N (default 1)")
    parser.add_argument("--report-as", choices=PERSPECTIVES, default="BLACK",
                        help="perspective of win rates, scores and ownership (default BLACK, as KaTrain sets)")
    parser.add_argument("--no-overlap", action="store_true",
                        help="one device call per round and board size (default: two waves, so tree work on the "
                             "host overlaps the other wave's playouts)")
    parser.add_argument("--round-seconds", type=float, default=EngineConfig.round_seconds, metavar="S",
                        help="cap each round's leaves at what the device played out in about S seconds, so "
                             "every client is served again that soon; 0 = no cap, rounds as large as the device "
                             "batch (default %(default)s)")
    parser.add_argument("--playouts-per-visit", type=int, default=PLAYOUTS_PER_VISIT, metavar="N",
                        help=f"playouts behind one visit of maxVisits (default {PLAYOUTS_PER_VISIT}; a query's "
                             "overrideSettings playouts_per_visit wins; docs/server.md)")
    parser.add_argument("--score-estimate", choices=SCORE_ESTIMATES, default=EngineConfig.score_estimate,
                        help="each move's scoreLead: the playouts' raw mean, shrunk toward the root's by its "
                             "uncertainty (default shrunk), or shrunk and calibrated on real games (docs/server.md)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no log lines on stderr")
    return parser


def make_engine(args):
    """The ``AnalysisEngine`` of ``args`` (JAX is imported here, not by ``--help``)."""
    from jaxgo.server.engine import AnalysisEngine

    buckets = default_buckets(args.max_boards, args.devices)
    search = dataclasses.replace(search_config.from_args(args), playouts_per_visit=args.playouts_per_visit)
    config = EngineConfig(search=search, max_leaves_per_search=args.max_leaves_per_search,
                          max_boards=args.max_boards, buckets=buckets, devices=args.devices,
                          perspective=args.report_as, seed=args.seed, overlap=not args.no_overlap,
                          round_seconds=args.round_seconds, score_estimate=args.score_estimate)
    return AnalysisEngine(config, log=None if args.quiet else sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.max_leaves_per_search < 1 or args.max_boards < 1 or args.devices < 1:
        print("jaxgo serve: --max-leaves-per-search, --device-batch and --devices must be positive", file=sys.stderr)
        return 2
    if not 1 <= args.playouts_per_visit <= 64:
        print(f"jaxgo serve: --playouts-per-visit {args.playouts_per_visit}: between 1 and 64", file=sys.stderr)
        return 2
    try:
        connection_limits(args)
        prior_model = search_config.from_args(args).prior_model
        check_device_batch(args.max_boards, args.devices)
        start_devices(args.devices)
    except ValueError as exc:
        print(f"jaxgo serve: {exc}", file=sys.stderr)
        return 2
    if args.unix and os.path.lexists(args.unix) and socket_inode(args.unix) is None:
        print(f"jaxgo serve: {args.unix} exists and is not a socket; not replacing it (choose another --unix path)",
              file=sys.stderr)
        return 2
    preload_priors(prior_model)
    previous = set_signal_handlers(_interrupt)
    watch = exit_with_parent() if previous is not None else None  # KaTrain SIGTERMs our `sh -c` parent
    try:
        return serve(args)
    except KeyboardInterrupt:  # a signal during start-up
        return 0
    finally:
        if watch is not None:
            watch.stop()
        set_signal_handlers(previous)


def preload_priors(prior_model: str | None) -> threading.Thread:
    """Load the priors' large-pattern model in a background thread (``priors.preload``), so that a client's first
    19x19 query does not wait the 3 s it takes; a failure there shows again, with its message, at that query."""
    from jaxgo.search import priors

    def run():
        try:
            priors.preload(prior_model)
        except Exception:  # noqa: BLE001 - reported by the query that needs the model
            pass

    thread = threading.Thread(target=run, name="jaxgo-preload-priors", daemon=True)
    thread.start()
    return thread


def connection_limits(args) -> ConnectionLimits:
    """``--max-connections``, ``--idle-timeout``, ``--stall-timeout`` (ValueError unless positive)."""
    try:
        return ConnectionLimits(args.max_connections, args.idle_timeout, args.stall_timeout)
    except ValueError:
        raise ValueError("--max-connections, --idle-timeout and --stall-timeout must be positive") from None


def start_devices(devices: int) -> None:
    """Before JAX starts: split a CPU host into ``devices`` XLA devices when more than one is asked for; then
    check that JAX sees that many (ValueError otherwise)."""
    if devices > 1:
        from jaxgo.util.devices import configure_host_devices, visible_devices

        configure_host_devices(devices)
        visible_devices(devices)


def serve(args) -> int:
    """Start the engine and the transports of ``args``; serve until end of stdin (stdin mode) or a signal."""
    from jaxgo.server import transports

    engine = make_engine(args).start()
    servers = []
    limits, log = connection_limits(args), None if args.quiet else sys.stderr
    try:
        if args.tcp is not None:
            servers.append(transports.TcpServer(engine, args.tcp, args.host, limits, log))
        if args.unix:
            servers.append(transports.UnixServer(engine, args.unix, limits, log))
        if args.http is not None:
            from jaxgo.server.web import WebServer

            servers.append(WebServer(engine, args.http, args.host, limits, log))
    except OSError as exc:
        print(f"jaxgo serve: {exc}", file=sys.stderr)
        for server in servers:
            server.server_close()
        engine.stop(wait=False, timeout=5)
        return 1
    for server in servers:
        transports.start_in_thread(server)
        if not args.quiet:
            where = getattr(server, "path", None) or "%s:%d" % server.server_address[:2]
            print(f"jaxgo serve: {type(server).__name__} listening on {where}", file=sys.stderr, flush=True)
    try:
        if not servers or args.stdin:
            transports.serve_stdio(engine)
        while servers:
            time.sleep(60)  # until SIGTERM or SIGINT
    except KeyboardInterrupt:  # SIGINT, and SIGTERM by the handler
        pass
    finally:
        set_signal_handlers(signal.SIG_IGN)  # a second signal must not cut the clean-up short
        for server in servers:
            server.shutdown()
            server.server_close()
        engine.stop(wait=False, timeout=10)
        if not args.quiet:
            print(f"jaxgo serve: stopped after {engine.playouts} playouts in {engine.device_calls} device calls",
                  file=sys.stderr)
        quiet_broken_stdout()
    return 0


def _interrupt(signum, frame) -> None:
    """SIGTERM behaves as SIGINT: a KeyboardInterrupt in the main thread (also while it waits in a read of
    stdin), which ``main`` turns into a clean stop with exit status 0."""
    raise KeyboardInterrupt


def set_signal_handlers(handler) -> dict | None:
    """Install ``handler`` (or a dict of them, as returned) for SIGTERM and SIGINT; returns the previous ones.
    Does nothing outside the main thread (an in-process caller keeps its own handlers)."""
    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    previous = {}
    for number in (signal.SIGTERM, signal.SIGINT):
        previous[number] = signal.signal(number, handler[number] if isinstance(handler, dict) else handler)
    return previous


def quiet_broken_stdout() -> None:
    """When the reader of stdout is gone, point stdout at /dev/null so that the interpreter's final flush does
    not fail (which would print a traceback and exit 120)."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    sys.exit(main())
