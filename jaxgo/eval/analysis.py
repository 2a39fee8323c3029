"""Quality of the analysis a KaTrain user sees: ``jaxgo serve`` asked as KaTrain asks it, over fixed positions.

    jaxgo eval analysis --visits 500 --fox 12 --config defaults= --config base=prior_model=base
    jaxgo eval analysis --visits 10000000 --seconds 8 --fox 12

For every ``--config NAME=KEY=VALUE,...`` (``overrideSettings`` of each query; empty: the server's defaults) one
``jaxgo serve`` process answers KataGo JSON queries (``maxVisits`` ``--visits``, ``includePolicy``, komi 7.5, area
scoring, 19x19, figures from Black's view as KaTrain sets them).  The positions:

- the empty board: its ``scoreLead`` (even is 0 for komi 7.5: the issue's target is within 3 points), and the
  rank of the best 4-4 and the best 3-4 point in the reported ``policy`` (target: both among the first five);
- the standard openings on an empty corner, 4-4 (Q16), 3-4 (R16) and 5-4 (Q15): each one's point loss as
  KaTrain computes it, the empty board's ``scoreLead`` minus the position's after Black plays it (target: at most
  3 points);
- ``--fox N`` positions from the held-out professional games (the test side of the data split: Fox pro-vs-pro
  even games, the first N records, after 30 and 80 moves), with the sign agreement of ``winrate - 0.5`` and
  ``scoreLead`` over every position (target: always the same sign).

Prints one JSON line per position and configuration, then one summary line per configuration with the targets'
checks; ``--out`` keeps the lines.  Each figure depends on the search's randomness (``--seed``).

``--trust`` measures instead what a KaTrain user can trust (issue 58, ``jaxgo.eval.trust``): the points lost of
played against random moves (AUC) on 19x19 and 9x9, the empty board's spread over identical queries, the komi's
effect and a fresh server's first query, at KaTrain's defaults (500 visits, ``maxTime`` 8):

    jaxgo eval analysis --trust --positions 100
    jaxgo eval analysis --trust --positions 100 --server-arg=--score-estimate --server-arg=calibrated

With the calibrated estimate (``jaxgo.learn.score_model``) the summary gives, from the same answers, the figures
before the calibration too (``before_calibration``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from jaxgo.data import SkipStats, archives, split
from jaxgo.go.coords import gtp_to_point
from jaxgo.server import probes
from jaxgo.server.client import ServerClient

SIZE = 19
KOMI = 7.5
CORNER_4_4 = ("D4", "D16", "Q4", "Q16")
CORNER_3_4 = ("C4", "D3", "C16", "D17", "Q3", "R4", "Q17", "R16")
OPENINGS = {"4-4": "Q16", "3-4": "R16", "5-4": "Q15"}
MAX_LOSS = 3.0
MAX_EVEN = 3.0
TOP = 5


def parse_config(text: str) -> tuple[str, dict]:
    """``NAME=KEY=VALUE,KEY=VALUE`` -> (NAME, overrideSettings); values are JSON where they parse, else text."""
    name, _, rest = text.partition("=")
    if not name:
        raise argparse.ArgumentTypeError(f"--config {text!r}: NAME=KEY=VALUE,... expected")
    settings = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"--config {text!r}: {item!r} is not KEY=VALUE")
        try:
            settings[key] = json.loads(value)
        except json.JSONDecodeError:
            settings[key] = value
    return name, settings


def fox_positions(count: int, numbers=(30, 80)) -> list[dict]:
    """Positions of the first ``count`` held-out professional games (``split.heldout_archives('fox')``, pro vs pro,
    even) after each of ``numbers`` moves: [{"id", "moves"}]."""
    out = []
    stats = SkipStats()
    for path in split.heldout_archives(which="fox"):
        for name, record in archives.iter_archive(path, stats, accept=split.is_pro_vs_pro, limit=count):
            moves = record.gtp_moves()
            for n in numbers:
                if n < len(moves):
                    out.append({"id": f"fox:{name.rsplit('/', 1)[-1]}@{n}", "moves": moves[:n]})
    if stats.broken:
        print(f"fox: skipped {stats.broken} unreadable records", file=sys.stderr)
    return out


def fixed_positions(fox: int) -> list[dict]:
    """The empty board, each opening of ``OPENINGS`` after Black's move, and ``fox_positions(fox)``."""
    positions = [{"id": "empty", "moves": []}]
    positions += [{"id": f"open:{name}", "moves": [["B", vertex]]} for name, vertex in OPENINGS.items()]
    return positions + (fox_positions(fox) if fox else [])


class Server:
    """A ``jaxgo serve --tcp`` child process (``jaxgo.server.probes.start_server``) and one client connection to
    it (``jaxgo.server.client.ServerClient``)."""

    def __init__(self, extra_args: list[str]):
        port = probes.free_port()
        self.process = probes.start_server(port, ["--quiet", *extra_args])
        self.client = ServerClient(f"tcp:127.0.0.1:{port}")

    def ask(self, query: dict) -> dict:
        """The final answer (not a during-search one) to ``query``; an error answer raises RuntimeError."""
        answer = self.client.query(query).results(timeout=3600)[0]
        if "error" in answer:
            raise RuntimeError(f"query {query['id']}: {answer['error']}")
        return answer

    def close(self) -> int:
        self.client.close()
        return probes.stop_server(self.process)


def query(position: dict, visits: int, settings: dict, seconds: float | None = None) -> dict:
    """The KaTrain-style analysis query of a position (``maxTime`` too when ``seconds`` is given)."""
    out = {"id": position["id"], "moves": position["moves"], "rules": "chinese", "komi": KOMI,
           "boardXSize": SIZE, "boardYSize": SIZE, "maxVisits": visits, "includePolicy": True}
    if seconds is not None:
        out["maxTime"] = seconds
    if settings:
        out["overrideSettings"] = settings
    return out


def policy_rank(policy: list[float], vertices) -> int:
    """1-based rank in ``policy`` (row-major from the top row, as KataGo lists it and jaxgo numbers points, pass
    last) of the best of ``vertices``; points outside ``vertices`` with the same probability count as ranked
    before it (a flat policy ranks no point well)."""
    indices = {gtp_to_point(v, SIZE) for v in vertices}
    best = max(policy[i] for i in indices)
    return 1 + sum(1 for i, value in enumerate(policy) if value > best or (value == best and i not in indices))


def row(config: str, position: dict, answer: dict, seconds: float) -> dict:
    root = answer["rootInfo"]
    return {"config": config, "position": position["id"], "visits": root["visits"],
            "winrate": round(root["winrate"], 4), "scoreLead": round(root["scoreLead"], 2),
            "best": answer["moveInfos"][0]["move"] if answer.get("moveInfos") else None,
            "seconds": round(seconds, 2)}


def summary(config: str, rows: list[dict], policy: list[float]) -> dict:
    """The targets' figures of one configuration's rows (``row``) and the empty board's policy."""
    by_id = {r["position"]: r for r in rows}
    even = by_id["empty"]["scoreLead"]
    losses = {name: round(even - by_id[f"open:{name}"]["scoreLead"], 2) for name in OPENINGS}
    agree = [(r["winrate"] - 0.5) * r["scoreLead"] >= 0 for r in rows]
    ranks = {"4-4": policy_rank(policy, CORNER_4_4), "3-4": policy_rank(policy, CORNER_3_4)}
    return {"config": config, "summary": True, "empty_scoreLead": even, "empty_within_3": abs(even) <= MAX_EVEN,
            "policy_rank": ranks, "policy_top5": all(r <= TOP for r in ranks.values()), "opening_loss": losses,
            "openings_within_3": all(loss <= MAX_LOSS for loss in losses.values()),
            "sign_agreement": f"{sum(agree)}/{len(agree)}",
            "mean_seconds": round(sum(r["seconds"] for r in rows) / len(rows), 2)}


def evaluate(name: str, settings: dict, positions: list[dict], visits: int, server_args: list[str], emit,
             seconds: float | None = None) -> dict:
    server = Server(server_args)
    rows, policy = [], None
    try:
        for position in positions:
            start = time.perf_counter()
            answer = server.ask(query(position, visits, settings, seconds))
            rows.append(row(name, position, answer, time.perf_counter() - start))
            if position["id"] == "empty":
                policy = answer["policy"]
            emit(rows[-1])
    finally:
        server.close()
    return summary(name, rows, policy)


def json_lines(out):
    """A function printing each result dict as one JSON line, and appending it to ``out`` (an open text file) too
    unless ``out`` is None."""
    def emit(line: dict) -> None:
        text = json.dumps(line)
        print(text, flush=True)
        if out:
            out.write(text + "\n")
            out.flush()
    return emit


def server_estimate(server_args: list[str]) -> str:
    """The ``--score-estimate`` that ``jaxgo serve`` gets from ``server_args`` (its default when not given)."""
    from jaxgo.server.engine_config import EngineConfig

    for i, arg in enumerate(server_args):
        if arg.startswith("--score-estimate="):
            return arg.split("=", 1)[1]
        if arg == "--score-estimate" and i + 1 < len(server_args):
            return server_args[i + 1]
    return EngineConfig.score_estimate


def trust_main(args, parser) -> int:
    """``--trust``: one fresh server per configuration, ``trust.run`` on it (``--visits`` 500 and ``--seconds`` 8
    unless given: KaTrain's defaults)."""
    from jaxgo.eval import trust

    try:
        sizes = tuple(int(s) for s in args.sizes.split(","))
    except ValueError:
        sizes = ()
    if not sizes or not set(sizes) <= {9, 19} or args.positions < 0:
        parser.error("--sizes takes 19 and/or 9 (comma-separated), --positions at least 0 (0: the empty board only)")
    seconds = trust.KATRAIN_SECONDS if args.seconds is None else args.seconds
    undo = trust.undo_shipped_calibration if server_estimate(args.server_arg) == "calibrated" else None
    out = open(args.out, "a") if args.out else None
    emit = json_lines(out)

    try:
        for name, settings in args.config or [("defaults", {})]:
            server = Server(["--seed", str(args.seed), *args.server_arg])
            try:
                summary = trust.run(server, emit, args.positions, sizes, args.visits, seconds, args.position_seed,
                                    settings, undo)
            finally:
                server.close()
            emit(dict(summary, config=name))
    finally:
        if out:
            out.close()
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval analysis", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--visits", type=int, default=500,
                        help="maxVisits of every query: playouts, in jaxgo's server (default 500)")
    parser.add_argument("--seconds", type=float, help="maxTime of every query (with a large --visits: KaTrain's "
                                                      "time limit per move, e.g. 8)")
    parser.add_argument("--fox", type=int, default=12, help="held-out professional games (0: none; default 12)")
    parser.add_argument("--config", type=parse_config, action="append", metavar="NAME=KEY=VALUE,...",
                        help="a configuration as overrideSettings (repeatable; default: the server's defaults)")
    parser.add_argument("--seed", type=int, default=1, help="the servers' --seed (default 1)")
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="an extra argument of every `jaxgo serve` (repeatable)")
    parser.add_argument("--out", help="also append the JSON lines to this file")
    parser.add_argument("--trust", action="store_true",
                        help="issue 58's figures instead (jaxgo.eval.trust): points lost of played against random "
                             "moves at KaTrain's defaults, the empty board's spread, first-query visits")
    parser.add_argument("--positions", type=int, default=20,
                        help="--trust: positions per board size (default 20; 0: only the empty board)")
    parser.add_argument("--sizes", default="19,9", help="--trust: board sizes, 19 and/or 9 (default 19,9)")
    parser.add_argument("--position-seed", type=int, default=0, help="--trust: the positions' draw (default 0)")
    args = parser.parse_args(argv)
    if args.trust:
        return trust_main(args, parser)
    configs = args.config or [("defaults", {})]
    positions = fixed_positions(args.fox)
    out = open(args.out, "a") if args.out else None
    emit = json_lines(out)

    try:
        for name, settings in configs:
            emit(evaluate(name, settings, positions, args.visits, ["--seed", str(args.seed), *args.server_arg], emit,
                          args.seconds))
    finally:
        if out:
            out.close()
    return 0
