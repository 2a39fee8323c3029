"""GTP ``jaxgo-territory [b5|blib] [bp|sw|exact]``: the territory CRF's expected outcome E[s_i | c]
of the current position as ``size`` lines of ``size`` numbers in [-1, 1] (+1 = Black), top row first
(same layout as ``jaxgo-ownership``; a GoGui dboard).  Defaults: the shipped Boltzmann5 model and loopy BP.
Swendsen-Wang uses 400 sweeps after 20 of burn-in; exact inference is offered up to 11x11.
"""
from __future__ import annotations

import numpy as np


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


def jaxgo_territory(engine, args) -> str:
    from jaxgo.gtp.engine import GtpError

    model, inference = "b5", "bp"
    for a in args:
        if a in ("b5", "blib"):
            model = a
        elif a in ("bp", "sw", "exact"):
            inference = a
        else:
            raise GtpError("syntax error")
    stones = np.asarray(engine.game.board()).reshape(engine.size, engine.size)
    if inference == "exact" and engine.size > 11:
        raise GtpError("exact inference only up to 11x11")
    if engine.size < 2:
        raise GtpError("board too small")
    try:
        t = territory_map(stones, engine.game.to_play, model, inference)
    except FileNotFoundError:
        raise GtpError(f"model {model} not available") from None
    return "\n".join(" ".join(f"{v:.2f}" for v in row) for row in t)


COMMANDS = {"jaxgo-territory": jaxgo_territory}
