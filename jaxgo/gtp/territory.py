"""GTP ``jaxgo-territory [b5|blib] [bp|sw|exact]``: the territory CRF's expected outcome E[s_i | c].

The answer is ``size`` lines of ``size`` numbers in [-1, 1] (+1 = Black), top row first (the layout of
``jaxgo-ownership``; a GoGui dboard).  Without arguments, on a session with an analysis connection, the
analysis engine computes it (``includeTerritory``), so a thin ``jaxgo gtp --server`` front end shares the
server's device; otherwise (the local engine, which keeps no analysis engine: ``jaxgo.gtp.tree_analysis``) and
with a model or an inference argument the CRF runs in this process.  Defaults: the shipped Boltzmann5 model
and loopy BP; Swendsen-Wang uses 400 sweeps; exact inference is offered up to 11x11.
"""

from __future__ import annotations

import numpy as np

from jaxgo.gtp.protocol import GtpError, board_rows

SERVER_TERRITORY_VISITS = 16  # the analysis search behind a server territory map (the CRF needs none)


def territory_map(stones, to_play: int, model: str = "b5", inference: str = "bp") -> np.ndarray:
    """stones int [N, N] -> E[s] float32 [N, N] in [-1, 1]."""
    from jaxgo.crf.evaluator import expected_territory, load_model
    from jaxgo.crf.predict import marginals

    if inference == "bp":
        return expected_territory(np.asarray(stones)[None], np.array([to_play]), model)[0]
    name, params = load_model(model)
    n = stones.shape[0]
    p = marginals(params, name, np.asarray(stones, np.int32).reshape(1, n * n), n, inference, sweeps=400)
    return (2.0 * p[0] - 1.0).reshape(n, n).astype(np.float32)


def crf_territory(session, args: list[str]) -> str:
    """The CRF's map in this process, with ``[b5|blib] [bp|sw|exact]``."""
    model, inference = "b5", "bp"
    for word in args:
        if word in ("b5", "blib"):
            model = word
        elif word in ("bp", "sw", "exact"):
            inference = word
        else:
            raise GtpError("syntax error")
    if inference == "exact" and session.size > 11:
        raise GtpError("exact inference only up to 11x11")
    if session.size < 2:
        raise GtpError("board too small")
    stones = np.asarray(session.game.board()).reshape(session.size, session.size)
    try:
        values = territory_map(stones, session.game.to_play, model, inference)
    except FileNotFoundError:
        raise GtpError(f"model {model} not available") from None
    return board_rows(values, session.size)


def server_territory(session) -> str:
    """The analysis engine's CRF map of the current position (``includeTerritory``, Black's view)."""
    from jaxgo.gtp.remote import final_response, position_query

    game = session.game
    query = position_query(game, game.to_play, session.config, SERVER_TERRITORY_VISITS, territory=True,
                           perspective="BLACK")
    values = final_response(session.analysis.connection(), query).get("territory")
    if values is None:
        raise GtpError("territory not available")
    return board_rows(values, session.size)


def jaxgo_territory(session, args: list[str]) -> str:
    return server_territory(session) if session.analysis.given and not args else crf_territory(session, args)


COMMANDS = {"jaxgo-territory": jaxgo_territory}
