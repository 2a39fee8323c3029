"""Composition of the GTP engine (minigo's ``make_gtp_instance``): a session plus the handler families.

``make_gtp_engine(rules, config, ...)`` builds a ``Dispatcher`` over a ``GtpSession`` whose ``Player`` searches
in this process; ``make_remote_gtp_engine(connection, rules, config, ...)`` builds the same engine whose Player
searches through ``jaxgo serve`` (``RemoteSearch``), with that connection also serving live analysis.  Both
answer every command with the same handlers, listed here explicitly:

    core        rules shell: administration, setup, moves, queries, SGF    (``jaxgo.gtp.core``)
    play        genmove & co., handicap, clock, scoring, search info         (``jaxgo.gtp.play``)
    analysis    lz-analyze, kata-analyze, *-genmove_analyze, jaxgo-pv_gfx    (``jaxgo.gtp.analysis``)
    territory   jaxgo-territory (CRF)                                        (``jaxgo.gtp.territory``)
    proof       attack / defend (proof search)                               (``jaxgo.gtp.proof``)
    gogui       gogui-analyze_commands, gogui-interrupt                      (``jaxgo.gtp.gogui``)
    params      kata-get_param / kata-set_param / kata-list_params           (``jaxgo.gtp.params``)

Building an engine imports no JAX: the Player (and with it the search and JAX) is created on first use, so
``name`` or ``list_commands`` is answered at once (``quick_start`` also plays the first moves without JAX).
"""

from __future__ import annotations

from jaxgo.go.config import Rules
from jaxgo.gtp import analysis, core, gogui, params, play, proof, territory
from jaxgo.gtp.protocol import Dispatcher
from jaxgo.gtp.session import GtpSession
from jaxgo.search.config import SearchConfig

FAMILIES = {
    "core": core.COMMANDS,
    "play": play.COMMANDS,
    "analysis": analysis.COMMANDS,
    "territory": territory.COMMANDS,
    "proof": proof.COMMANDS,
    "gogui": gogui.COMMANDS,
    "params": params.COMMANDS,
}


def command_registry(families: dict = FAMILIES) -> dict:
    """name -> handler of all families; ValueError when two families register one name."""
    registry = {}
    for family, commands in families.items():
        clash = set(registry) & set(commands)
        if clash:
            raise ValueError(f"GTP commands registered twice ({family}): {sorted(clash)}")
        registry.update(commands)
    return registry


def make_gtp_engine(rules: Rules | None = None, config: SearchConfig | None = None, *,
                    player=None, seed: int = 0, log=None, playouts: int | None = None,
                    seconds: float | None = None, analysis=None, quick_start: bool = False,
                    ponder: bool = False) -> Dispatcher:
    """A GTP engine; its Player is ``player``, else one searching in this process with ``config`` (default
    ``SearchConfig()``) and the budget ``playouts`` / ``seconds`` per move (else the GTP clock), created on
    first use.  ``analysis``: the connection for live analysis (default: none, the analysis searches the
    Player's own tree, ``jaxgo.gtp.tree_analysis``; an in-process analysis engine for a Player with no tree).
    ``quick_start``: moves before the game exists are played without JAX (``jaxgo.gtp.early``).
    ``ponder``: think on the opponent's time after each genmove (``GtpSession.start_pondering``).  A local
    search stops early with what it has when the client interrupts (GoGui's ``# interrupt``)."""
    config = config or SearchConfig()

    def make_player():
        from jaxgo.search.player import Player

        return Player(config, seed=seed, log=log, playouts=playouts, seconds=seconds)

    session = GtpSession(rules, player, log=log, analysis=analysis, make_player=make_player, config=config,
                         budget=(playouts, seconds), quick_start=quick_start, ponder=ponder)
    return Dispatcher(session, command_registry())


def make_remote_gtp_engine(connection, rules: Rules | None = None, config: SearchConfig | None = None, *,
                           seed: int = 0, log=None, playouts: int | None = None,
                           seconds: float | None = None, quick_start: bool = False) -> Dispatcher:
    """A GTP engine whose searches and live analysis run on an analysis-server ``connection``
    (``ServerClient`` or ``LocalConnection``), with the Player of the local engine (ValueError for a config
    the server cannot search).  A search stops early when the client interrupts (GoGui's ``# interrupt``)."""
    from jaxgo.gtp.remote import RemoteSearch
    from jaxgo.search.player import Player

    search = RemoteSearch(connection, config or SearchConfig())
    player = Player(search=search, seed=seed, log=log, playouts=playouts, seconds=seconds)
    return make_gtp_engine(rules, player=player, log=log, analysis=connection, quick_start=quick_start)
