"""``jaxgo analyze GAME.sgf --plot OUT.png``: win rate and score lead over a game, ownership at chosen moves.

Every position of the game's main line is analysed (one KataGo-style query per turn, at most ``--window`` turns
in flight; a progress bar on stderr counts the playouts from the server's responses as turns finish and from
their during-search reports), by an in-process engine or a running ``jaxgo serve`` (``--server ADDR``).

The search is the engine's default (``jaxgo.search.config.SearchConfig``: RAVE, heavy playouts, progressive
bias) unless options say otherwise: ``--visits`` playouts per position, ``--playout-policy light|heavy|rules``
(``--playouts`` is its old, deprecated spelling), ``--bias``, ``--search-option FIELD=VALUE`` ..., sent to the
server as ``overrideSettings``.  The report has the Black win
rate and the Black score lead per move, and the mean final ownership (+1 Black) at the chosen moves
(``--moves``, default three spread over the game); ``--plot OUT.png`` writes the figure, ``--plot OUT.html`` a
page with the figure and a table of every move.  ``--json OUT.json`` keeps the raw responses.

Komi: ``--komi K`` overrides the record's.  Some archives write the komi times 50 or 100 (Fox writes ``KM[375]``
for 7.5: 3.75 stones counted twice, and ``KM[650]`` for 6.5), which the analysis protocol refuses (|komi| <=
150).  The rule (``plausible_komi``): a komi with |komi| <= 150 is taken as written; a larger one is divided by
50 and by 100, and the result that is a multiple of 0.5 within 150 is taken, a half-integer (x.5, no draws) before
an integer and then the division by 100; if neither is, the record is refused and ``--komi`` has to say it.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import os
import queue
import sys
import time

from jaxgo.search import config as search_config

KOMI_LIMIT = 150.0  # the analysis protocol's bound on |komi|
REPORT_FORMATS = (".png", ".svg", ".pdf", ".html", ".htm")  # --plot: a figure, or a page with figure and table
KOMI_SCALES = (50, 100)  # archives that write komi x50 (Fox's stones count: 375 = 3.75 stones = 7.5) or x100


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="jaxgo analyze", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sgf", help="SGF game record")
    parser.add_argument("--plot", required=True,
                        help="output report: OUT.png (figure; also .svg, .pdf), OUT.html (figure + table), or a "
                             "folder (GAME.png inside it); checked before the analysis starts")
    parser.add_argument("--komi", type=float, default=None,
                        help="komi (default: the record's KM, read by the rule above)")
    parser.add_argument("--visits", type=int, default=256, help="playouts per position (default 256)")
    parser.add_argument("--moves", default=None,
                        help="comma-separated move numbers for ownership maps (default: 3 spread over the game)")
    parser.add_argument("--rules", default="chinese", help="KataGo rule-set name (default chinese)")
    parser.add_argument("--server", default=None, metavar="ADDR",
                        help="use a running `jaxgo serve` (tcp:..., unix:...)")
    parser.add_argument("--json", default=None, help="also write the responses (one JSON list)")
    parser.add_argument("--window", type=int, default=32,
                        help="turns analysed at once (default 32; more fills larger device batches)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--max-boards", type=int, default=4096, help="in-process engine: most leaves per device call")
    search_config.add_arguments(parser)
    parser.add_argument("--playouts", dest="playout_policy", choices=search_config.PLAYOUT_POLICIES,
                        default=argparse.SUPPRESS, action=search_config.DeprecatedOption, new="--playout-policy",
                        help="deprecated: --playout-policy (the number of playouts is --visits)")
    args = parser.parse_args(argv)
    if args.visits < 1 or args.window < 1 or args.max_boards < 1:
        parser.error("--visits, --window and --max-boards must be at least 1")
    if args.komi is not None and not abs(args.komi) <= KOMI_LIMIT:
        parser.error(f"--komi must be in [-{KOMI_LIMIT:g}, {KOMI_LIMIT:g}]")
    return args


def plausible_komi(raw: float) -> float:
    """The komi a record means: ``raw`` when |raw| <= 150, else ``raw`` / 50 or / 100 (the module docstring's
    rule: a multiple of 0.5 within 150, x.5 first, then the division by 100).  ValueError when none fits."""
    if abs(raw) <= KOMI_LIMIT:
        return float(raw)
    candidates = [raw / scale for scale in KOMI_SCALES]
    fitting = [k for k in candidates if abs(k) <= KOMI_LIMIT and (2 * k).is_integer()]
    if not fitting:
        raise ValueError(f"komi {raw:g} is out of range and neither {raw:g}/50 nor {raw:g}/100 is a multiple of "
                         "0.5; give the komi with --komi")
    half = [k for k in fitting if (2 * k) % 2 == 1]
    return (half or fitting)[-1]


def game_query(sgf_path: str, visits: int, rules: str, komi: float | None = None,
               settings: dict | None = None) -> tuple[dict, int]:
    """(the analysis query of the whole game without ``analyzeTurns``, board size).  ``komi`` None: the record's
    (``plausible_komi``); ``settings``: overrideSettings besides the Black perspective."""
    from jaxgo.data.archives import read_regular_file
    from jaxgo.server.protocol import MAX_QUERY_MOVES
    from jaxgo.server.web import sgf_to_query_fields

    fields = sgf_to_query_fields(read_regular_file(sgf_path))  # never waits on a FIFO, never reads a huge file
    if len(fields["moves"]) > MAX_QUERY_MOVES:
        raise ValueError(f"{len(fields['moves'])} moves: at most {MAX_QUERY_MOVES} per game can be analysed")
    size = fields.pop("size")
    fields["komi"] = plausible_komi(fields["komi"]) if komi is None else float(komi)
    override = {"reportAnalysisWinratesAs": "BLACK", "playouts_per_visit": 1, **(settings or {})}  # --visits: playouts
    query = dict(fields, id="game", rules=rules, boardXSize=size, boardYSize=size, maxVisits=visits,
                 includeOwnership=True, overrideSettings=override)
    return query, size


def report_path(plot: str, sgf_path: str) -> str:
    """The file the report goes to, checked before any analysis: ``plot`` itself when it ends in one of
    ``REPORT_FORMATS``, or ``GAME.png`` inside it when it is a folder; ValueError (a message for the user) for
    another extension or a folder that does not exist or cannot be written."""
    if os.path.isdir(plot):
        stem = os.path.splitext(os.path.basename(sgf_path))[0] or "analysis"
        target = os.path.join(plot, stem + ".png")
    elif plot.lower().endswith(REPORT_FORMATS):
        target = plot
    else:
        raise ValueError(f"--plot {plot}: the report is a figure or a page: name it OUT.png, OUT.svg, OUT.pdf or "
                         "OUT.html, or give an existing folder")
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise ValueError(f"--plot {plot}: cannot write into {folder}")
    if os.path.exists(target) and not os.path.isfile(target):
        raise ValueError(f"--plot {plot}: {target} exists and is not a regular file")
    return target


def search_settings(args) -> dict:
    """The search options given on the command line that differ from the defaults (``overrideSettings``)."""
    return search_config.changed_fields(search_config.from_args(args))


REPORT_SECONDS = 2.0  # reportDuringSearchEvery of the turns in flight: the bar moves between finished turns


def run_query(query: dict, server: str | None, *, max_boards: int = 4096, window: int = 32, progress: bool = True,
              stall_seconds: float = 3600.0) -> list[dict]:
    """The final responses for every turn of ``query`` (0 .. len(moves)), sorted by turn.

    One single-turn query per turn, at most ``window`` in flight, on a running server (``server``) or an
    in-process engine.  With ``progress`` a tqdm bar on stderr counts the playouts from the server's responses:
    the final ones as turns finish (the turns done are shown beside it) and the during-search reports of the
    turns in flight (``reportDuringSearchEvery``), so it moves while a window of turns is searched.  An error
    response raises ValueError (the other turns are terminated); no response for ``stall_seconds`` raises
    TimeoutError.
    """
    from jaxgo.server.client import LocalConnection, ServerClient
    from jaxgo.server.engine import AnalysisEngine
    from jaxgo.server.engine_config import EngineConfig, default_buckets

    engine = None
    if server:
        conn = ServerClient(server)
    else:
        config = EngineConfig(max_boards=max_boards, buckets=default_buckets(max_boards))
        engine = AnalysisEngine(config).start()
        conn = LocalConnection(engine)
    turns = list(range(len(query["moves"]) + 1))
    bar = None
    if progress:
        from tqdm import tqdm

        query = dict(query, reportDuringSearchEvery=REPORT_SECONDS)
        bar = tqdm(total=len(turns) * query["maxVisits"], unit="playout", unit_scale=True, desc="analyze",
                   file=sys.stderr)
    try:
        return _analyse_turns(conn, query, turns, window, bar, stall_seconds)
    finally:
        if bar is not None:
            bar.close()
        conn.close()
        if engine is not None:  # no thread may still be in native (XLA) code when the interpreter exits
            engine.stop(wait=False, timeout=120)


def _analyse_turns(conn, query: dict, turns: list[int], window: int, bar, stall_seconds: float) -> list[dict]:
    """Keep ``window`` single-turn queries in flight until every turn has its final response."""
    waiting, live, finished, warned = list(reversed(turns)), {}, {}, set()
    counted = {}  # playouts of each turn counted on the bar so far
    last_news = time.monotonic()
    while waiting or live:
        while waiting and len(live) < window:
            turn = waiting.pop()
            live[turn] = conn.query(dict(query, id=f"{query['id']}-{turn}", analyzeTurns=[turn]))
        news = False
        for turn, stream in list(live.items()):
            for response in _ready(stream):
                news = True
                if "error" in response:
                    for other in live.values():
                        other.terminate()
                    raise ValueError(f"turn {turn}: {response['error']}")
                if "warning" in response and response["warning"] not in warned:
                    warned.add(response["warning"])
                    print(f"jaxgo analyze: warning: {response['warning']}", file=sys.stderr)
                if "turnNumber" not in response:
                    continue
                final = not response.get("isDuringSearch", False)
                if final:
                    finished[turn] = response
                    del live[turn]
                if bar is not None:
                    visits = query["maxVisits"] if final else response.get("rootInfo", {}).get("visits", 0)
                    step = min(visits, query["maxVisits"]) - counted.get(turn, 0)
                    counted[turn] = counted.get(turn, 0) + max(0, step)
                    bar.update(max(0, step))
                    if final:
                        bar.set_postfix_str(f"{len(finished)}/{len(turns)} turns")
        if news:
            last_news = time.monotonic()
        elif time.monotonic() - last_news > stall_seconds:
            raise TimeoutError(f"no response from the engine for {stall_seconds:.0f} s")
        else:
            time.sleep(0.02)
    return [finished[t] for t in turns]


def _ready(stream) -> list[dict]:
    """The responses that have arrived on ``stream`` (without waiting); ServerClosed when the connection is gone."""
    out = []
    while True:
        try:
            out.append(stream.get(timeout=0))
        except queue.Empty:
            return out


def plot(results: list[dict], size: int, query: dict, chosen: list[int], path, title: str,
         image_format: str = "png") -> None:
    """Draw the figure (win rate, score lead, ownership maps at ``chosen``) into ``path`` (a file name or a
    binary file object) in ``image_format`` (png, svg, pdf)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from jaxgo.server.protocol import parse_vertex

    turns = [r["turnNumber"] for r in results]
    rates = [r["rootInfo"]["winrate"] if "rootInfo" in r else np.nan for r in results]
    leads = [r["rootInfo"]["scoreLead"] if "rootInfo" in r else np.nan for r in results]
    fig = plt.figure(figsize=(3.2 * max(3, len(chosen)), 7.5))
    grid = fig.add_gridspec(3, max(3, len(chosen)), height_ratios=[1, 1, 1.6])
    ax = fig.add_subplot(grid[0, :])
    ax.plot(turns, rates, color="tab:blue")
    ax.axhline(0.5, color="grey", lw=0.8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("Black win rate")
    ax.set_title(title)
    for move in chosen:
        ax.axvline(move, color="tab:red", lw=0.8, ls="--")
    ax2 = fig.add_subplot(grid[1, :], sharex=ax)
    ax2.plot(turns, leads, color="tab:green")
    ax2.axhline(0, color="grey", lw=0.8)
    ax2.set_ylabel("Black score lead")
    ax2.set_xlabel("move")
    by_turn = {r["turnNumber"]: r for r in results}
    for i, move in enumerate(chosen):
        axo = fig.add_subplot(grid[2, i])
        response = by_turn.get(move, {})
        owner = np.asarray(response.get("ownership", [0.0] * size * size)).reshape(size, size)
        axo.imshow(owner, cmap="RdBu_r", vmin=-1, vmax=1, origin="upper")
        stones = _stones_at(query, size, move, parse_vertex)
        for (r, c), colour in stones.items():
            axo.add_patch(plt.Circle((c, r), 0.38, facecolor="black" if colour > 0 else "white",
                                     edgecolor="black", lw=0.6))
        axo.set_xticks([])
        axo.set_yticks([])
        axo.set_title(f"ownership after move {move}\n(red = Black, blue = White)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format=image_format)
    plt.close(fig)


def _stones_at(query: dict, size: int, turn: int, parse_vertex) -> dict:
    """{(row, col): colour} after ``turn`` moves (captures applied with the reference board)."""
    from jaxgo.go.game import Game
    from jaxgo.server.rulesets import parse_rules

    rules = parse_rules("tromp-taylor", size, query.get("komi", 7.5), [])
    game = Game(rules)
    for colour in (1, -1):
        points = [parse_vertex(v, size, "", None) for c, v in query.get("initialStones", [])
                  if (c == "B") == (colour == 1)]
        if points:
            game.setup_stones(colour, points)
    for c, v in query["moves"][:turn]:
        try:
            game.play(1 if c == "B" else -1, parse_vertex(v, size, "", None))
        except ValueError:
            break
    board = game.board()
    return {(r, c): int(board[r, c]) for r in range(size) for c in range(size) if board[r, c]}


def write_report(results: list[dict], size: int, query: dict, chosen: list[int], path: str, title: str) -> None:
    """``path`` ending in .html: a page with the figure and a table of every move; otherwise the figure in the
    format of its extension (png, svg, pdf).  Written atomically: a full disk (OSError) leaves no partial file
    and the old one, if any, as it was."""
    from jaxgo.util.files import atomic_write_bytes, atomic_write_text

    figure = io.BytesIO()
    extension = os.path.splitext(path)[1].lower().lstrip(".")
    if extension in ("html", "htm"):
        plot(results, size, query, chosen, figure, title)
        atomic_write_text(path, report_html(results, query, figure.getvalue(), title))
        return
    plot(results, size, query, chosen, figure, title, image_format=extension)
    atomic_write_bytes(path, figure.getvalue())


def report_html(results: list[dict], query: dict, png: bytes, title: str) -> str:
    """A self-contained page: the figure, then per move the move played, the Black win rate and score lead after
    it, the change it made for the side that played it, and the engine's choice in the position before it."""
    rows = []
    previous = None
    for response in results:
        turn, root = response["turnNumber"], response.get("rootInfo", {})
        played = query["moves"][turn - 1] if turn else None
        rate, lead = root.get("winrate"), root.get("scoreLead")
        change = ""
        if played and previous is not None and rate is not None:
            gain = (rate - previous["winrate"]) * (1 if played[0] == "B" else -1)
            change = f"{100 * gain:+.1f}%"
        engine_choice = previous["best"] if played and previous is not None else ""
        rows.append(f"<tr><td>{turn}</td><td>{html.escape(' '.join(played)) if played else 'start'}</td>"
                    f"<td>{_percent(rate)}</td><td>{_number(lead)}</td><td>{change}</td>"
                    f"<td>{html.escape(engine_choice)}</td></tr>")
        infos = response.get("moveInfos") or []
        previous = {"winrate": rate, "best": infos[0]["move"] if infos else ""} if rate is not None else None
    picture = base64.b64encode(png).decode("ascii")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html.escape(title) + "</title>"
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #ddd}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p>komi {query['komi']:g}, rules {html.escape(str(query['rules']))}, "
            f"{query['maxVisits']} playouts per position; win rates and score leads for Black.</p>"
            f'<img alt="win rate, score lead and ownership" src="data:image/png;base64,{picture}">'
            "<table><tr><th>move</th><th>played</th><th>Black win rate</th><th>Black score lead</th>"
            "<th>change for the mover</th><th>engine's choice</th></tr>" + "".join(rows) + "</table></body></html>\n")


def _percent(value) -> str:
    return "" if value is None else f"{100 * value:.1f}%"


def _number(value) -> str:
    return "" if value is None else f"{value:+.1f}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from jaxgo.go.sgf import SGFError

    try:
        settings = search_settings(args)
    except ValueError as exc:
        print(f"jaxgo analyze: {exc}", file=sys.stderr)
        return 2
    try:
        target = report_path(args.plot, args.sgf)
    except ValueError as exc:
        print(f"jaxgo analyze: {exc}", file=sys.stderr)
        return 2
    try:
        query, size = game_query(args.sgf, args.visits, args.rules, args.komi, settings)
    except (OSError, SGFError, ValueError) as exc:
        print(f"jaxgo analyze: cannot read {args.sgf}: {exc}", file=sys.stderr)
        return 1
    total = len(query["moves"])
    if args.moves:
        try:
            chosen = [min(total, max(0, int(m))) for m in args.moves.split(",") if m.strip()]
        except ValueError:
            print("jaxgo analyze: --moves takes comma-separated integers", file=sys.stderr)
            return 2
    else:
        chosen = sorted({total // 4, total // 2, total})
    try:
        results = run_query(query, args.server, max_boards=args.max_boards, window=args.window,
                            progress=not args.no_progress)
    except (OSError, ValueError) as exc:
        print(f"jaxgo analyze: {exc}", file=sys.stderr)
        return 1
    from jaxgo.util.files import write_json_atomic

    policy = settings.get("playout_policy", search_config.DEFAULT.playout_policy)
    title = (f"{args.sgf.rsplit('/', 1)[-1]}: {args.visits} playouts/move ({policy}), komi {query['komi']:g}")
    for path, write in ((args.json, lambda p: write_json_atomic(p, results, indent=None)),
                        (target, lambda p: write_report(results, size, query, chosen, p, title))):
        if path is None:
            continue
        try:
            write(path)
        except OSError as exc:  # a full disk (ENOSPC), a folder gone meanwhile: nothing half-written is left
            print(f"jaxgo analyze: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    last = results[-1]["rootInfo"] if results and "rootInfo" in results[-1] else {}
    print(f"analysed {len(results)} positions; final Black win rate {last.get('winrate', float('nan')):.3f}, "
          f"score lead {last.get('scoreLead', float('nan')):.1f}; report in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
