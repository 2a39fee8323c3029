"""``jaxgo analyze GAME.sgf --plot OUT.png``: win rate and score lead over a game, ownership at chosen moves.

Every position of the game's main line is analysed in one KataGo-style query (``analyzeTurns`` = all turns),
by an in-process engine or a running ``jaxgo serve`` (``--server ADDR``).  The figure has the Black win rate and
the Black score lead per move, and the mean final ownership (+1 Black) at the chosen moves (``--moves``,
default three spread over the game).  ``--json OUT.json`` keeps the raw responses.
"""

from __future__ import annotations

import argparse
import json
import sys


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="jaxgo analyze", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sgf", help="SGF game record")
    parser.add_argument("--plot", required=True, help="output PNG")
    parser.add_argument("--visits", type=int, default=256, help="playouts per position (default 256)")
    parser.add_argument("--moves", default=None,
                        help="comma-separated move numbers for ownership maps (default: 3 spread over the game)")
    parser.add_argument("--rules", default="chinese", help="KataGo rule-set name (default chinese)")
    parser.add_argument("--server", default=None, metavar="ADDR",
                        help="use a running `jaxgo serve` (tcp:..., unix:...)")
    parser.add_argument("--json", default=None, help="also write the responses (one JSON list)")
    parser.add_argument("--leaves", type=int, default=64, help="in-process engine: leaves per search per round")
    parser.add_argument("--max-boards", type=int, default=4096, help="in-process engine: most leaves per device call")
    return parser.parse_args(argv)


def game_query(sgf_path: str, visits: int, rules: str) -> tuple[dict, int]:
    from jaxgo.server.web import sgf_to_query_fields

    with open(sgf_path, "rb") as handle:
        fields = sgf_to_query_fields(handle.read())
    size = fields.pop("size")
    moves = fields["moves"]
    query = dict(fields, id="game", rules=rules, boardXSize=size, boardYSize=size, maxVisits=visits,
                 analyzeTurns=list(range(len(moves) + 1)), includeOwnership=True,
                 overrideSettings={"reportAnalysisWinratesAs": "BLACK"})
    return query, size


def run_query(query: dict, server: str | None, leaves: int = 64, max_boards: int = 4096) -> list[dict]:
    from jaxgo.server.client import LocalConnection, ServerClient
    from jaxgo.server.engine import AnalysisEngine, EngineConfig, default_buckets

    if server:
        conn = ServerClient(server)
    else:
        config = EngineConfig(max_leaves_per_search=leaves, max_boards=max_boards,
                              buckets=default_buckets(max_boards))
        conn = LocalConnection(AnalysisEngine(config).start())
    try:
        results = conn.query(query).results(timeout=3600)
    finally:
        conn.close()
    errors = [r for r in results if "error" in r]
    if errors:
        raise ValueError(errors[0]["error"])
    return sorted(results, key=lambda r: r["turnNumber"])


def plot(results: list[dict], size: int, query: dict, chosen: list[int], path: str, title: str) -> None:
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _stones_at(query: dict, size: int, turn: int, parse_vertex) -> dict:
    """{(row, col): colour} after ``turn`` moves (captures applied with the reference board)."""
    from jaxgo.go.game import Game
    from jaxgo.server.protocol import parse_rules

    rules = parse_rules("tromp-taylor", size, query.get("komi", 7.5), None, [])
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


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from jaxgo.go.sgf import SGFError

    try:
        query, size = game_query(args.sgf, args.visits, args.rules)
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
        results = run_query(query, args.server, args.leaves, args.max_boards)
    except (OSError, ValueError) as exc:
        print(f"jaxgo analyze: {exc}", file=sys.stderr)
        return 1
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle)
    plot(results, size, query, chosen, args.plot, f"{args.sgf.rsplit('/', 1)[-1]}: {args.visits} playouts/move")
    last = results[-1]["rootInfo"] if results and "rootInfo" in results[-1] else {}
    print(f"analysed {len(results)} positions; final Black win rate {last.get('winrate', float('nan')):.3f}, "
          f"score lead {last.get('scoreLead', float('nan')):.1f}; plot in {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
