"""jaxgo: a JAX engine for computer Go research.

Data flows one way: ``go`` (rules, game, SGF) -> ``playouts`` (light, heavy, the Evaluator) -> ``search`` (tree,
MCTS family, the Player) -> front ends (``server``, ``gtp``); and ``data`` (archives) -> ``features`` -> ``learn``
-> parameters (the shipped gammas) used by the playouts and the search.  The studies (``proof``, ``bpip``,
``cgt``, ``crf``) use the engine; nothing below them imports them.

The public API below is imported on first use, so ``import jaxgo`` stays light (no JAX until needed)::

    from jaxgo import Game, Rules, Player, SearchConfig
    game = Game(Rules(size=9))
    decision = Player(SearchConfig(), playouts=1000).choose(game, game.to_play)
"""

from __future__ import annotations

import importlib

__version__ = "0.1"

# public name -> module that defines it
_API = {
    # go: rules, game records
    "Rules": "jaxgo.go.config", "State": "jaxgo.go.rules", "Game": "jaxgo.go.game", "new_game": "jaxgo.go.game",
    "IllegalMove": "jaxgo.go.game", "game_from_ascii": "jaxgo.go.display", "board_text": "jaxgo.go.display",
    "load_sgf": "jaxgo.go.sgf", "replay": "jaxgo.go.sgf", "game_to_sgf": "jaxgo.go.sgf",
    # playouts
    "Evaluator": "jaxgo.playouts.evaluator", "PlayoutBatch": "jaxgo.playouts.evaluator",
    "make_evaluator": "jaxgo.playouts.evaluator",
    # search
    "SearchConfig": "jaxgo.search.config", "Searcher": "jaxgo.search.searcher", "SearchResult": "jaxgo.search.result",
    "Tree": "jaxgo.search.tree", "Player": "jaxgo.search.player", "Decision": "jaxgo.search.player",
    "RESIGN": "jaxgo.search.player", "Clock": "jaxgo.search.timecontrol",
    # front ends
    "AnalysisEngine": "jaxgo.server.engine", "EngineConfig": "jaxgo.server.engine",
    "make_gtp_engine": "jaxgo.gtp.engine",
}
_SUBPACKAGES = ("util", "go", "data", "features", "playouts", "learn", "search", "proof", "bpip", "cgt", "crf",
                "server", "gtp")

__all__ = ["__version__", *_API, *_SUBPACKAGES]


def __getattr__(name: str):
    if name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"jaxgo.{name}")
    else:
        raise AttributeError(f"module 'jaxgo' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
