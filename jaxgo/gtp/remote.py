"""``jaxgo gtp --server ADDR``: a thin GTP engine whose searches run in a ``jaxgo serve`` process.

The board, legality and the GTP command set are ``jaxgo.gtp.engine.GtpEngine``'s (played locally); ``genmove``,
``reg_genmove``, ``kgs-genmove_cleanup``, ownership (``jaxgo-ownership``, ``final_status_list``,
``final_score``), live analysis (``lz-analyze``, ``kata-analyze``, ``*-genmove_analyze``) and the GoGui
commands send KataGo queries to the server, so many GTP sessions (a match runner's games, GUIs) share one
device.  ADDR is ``tcp:HOST:PORT``, ``HOST:PORT``, ``PORT`` or ``unix:PATH``.
"""

from __future__ import annotations

import sys

from jaxgo.go.coords import point_to_gtp
from jaxgo.gtp.engine import RESIGN, GtpEngine, build_parser, rules_from_args
from jaxgo.gtp import analysis as gtp_commands


class FrontendEngine(GtpEngine):
    """GtpEngine with the search on a server connection (``analysis``: ServerClient or LocalConnection)."""

    def __init__(self, analysis, *args, resign_threshold: float = 0.08, resign_min_visits: int = 2000, **kwargs):
        super().__init__(*args, **kwargs)
        self.analysis = analysis
        self.analysis_stream = None
        self.resign_threshold = resign_threshold
        self.resign_min_visits = resign_min_visits
        self.last_response = None

    def generate(self, color: int, cleanup: bool = False) -> int:
        game = self.game
        legal = game.legal_moves(color)
        if not legal[:-1].any():
            return game.pass_move
        if color != game.to_play:
            game.set_to_play(color)
        if not cleanup and game.moves and game.moves[-1][1] == game.pass_move and game.moves[-1][0] == -color:
            if game.score() * color > 0:
                return game.pass_move
        visits, seconds = gtp_commands.genmove_budget(self)
        response = gtp_commands.final_response(self, visits, seconds=seconds)
        self.last_response = response
        move = gtp_commands.choose_move(response, self.size, self.resign_threshold, self.resign_min_visits)
        if move is None:
            return game.pass_move if cleanup else RESIGN
        if cleanup and move == game.pass_move and self._dead_stones_of(-color):
            for info in response.get("moveInfos", []):  # the best non-pass move
                if info["move"] != "pass":
                    move = gtp_commands.choose_move({"moveInfos": [info], "rootInfo": response["rootInfo"]},
                                                    self.size)
                    break
        if not legal[move]:
            move = game.pass_move
        self.debug(f"genmove: {point_to_gtp(move, self.size)} after {response['rootInfo']['visits']} playouts")
        return move

    def ownership(self, playouts: int = 256):
        import numpy as np

        response = gtp_commands.final_response(self, playouts, ownership=True)
        return np.asarray(response["ownership"], float).reshape(self.size, self.size)

    def cmd_gogui_analyze_commands(self, args):
        return gtp_commands.GOGUI_ANALYZE

    def cmd_jaxgo_search_stats(self, args):
        response = self.last_response
        if response is None:
            return "no search yet"
        root = response["rootInfo"]
        best = response["moveInfos"][0] if response.get("moveInfos") else None
        pv = " ".join(best["pv"]) if best else ""
        return f"playouts {root['visits']} win rate {root['winrate']:.3f} pv {pv}"


def main(argv: list[str] | None = None) -> int:
    from jaxgo.server.client import ServerClient
    from jaxgo.gtp.loop import serve

    args = build_parser().parse_args(argv)
    rules = rules_from_args(args)
    if rules is None:
        return 2
    try:
        analysis = ServerClient(args.server)
    except (OSError, ValueError) as exc:
        print(f"jaxgo gtp: cannot reach the server at {args.server}: {exc}", file=sys.stderr)
        return 1
    engine = FrontendEngine(analysis, rules, seed=args.seed, log=None if args.quiet else sys.stderr,
                            strategy="rave", playouts=args.playouts, seconds=args.seconds)
    stdin = getattr(sys.stdin, "buffer", sys.stdin)
    return serve(engine, stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
