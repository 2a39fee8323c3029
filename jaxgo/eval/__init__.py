"""Evaluation tools: how strong, how good and how fast the engine is, measured from outside (``jaxgo eval``).

Each tool is one module with ``main(argv) -> int``, reached as ``jaxgo eval NAME`` (``jaxgo/eval/cli.py``):
``strength`` (match series against GNU Go, their table, plots and audits), ``spsa`` (self-play tuning of search
constants), ``move-quality`` (engines' moves scored by GNU Go), ``playout-quality`` (how well playouts predict
game results), ``balance`` (simulation balancing of the heavy playouts' gammas), ``rave-bias`` (the bias of
RAVE values in real trees), ``compare`` (speed and gammas accuracy of two revisions) and ``device-check``
(identical playouts on an accelerator and on the CPU).  This package sits at the top of the layers beside
``jaxgo.match`` and ``jaxgo.cli``: it uses the engine, nothing in the engine uses it.
"""
