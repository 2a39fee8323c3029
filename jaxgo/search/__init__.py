"""Monte Carlo search over the playouts, and the Player that turns a search into moves.

- ``config``: ``SearchConfig``, how to search (strategy, constants, playout policy; the one list of strategies);
  ``limits``: ``SearchLimits``, what one search may spend (budget, node cap, forbid-pass, stop check), passed in
  by the search's owner.
- ``searcher``: the ``Searcher`` shared by every strategy, each strategy a search function it runs
  (``STRATEGY_SEARCHES``); ``tree_search`` (UCT, RAVE, progressive bias, tree
  reuse, in steps a server can interleave) over ``tree`` (numpy structure-of-arrays) and ``descent`` (its loops
  compiled with numba, held to the numpy definitions in ``reference``); ``flat`` (mc, amaf, pp, depth2);
  ``budget`` (the batch size K from a budget); ``priors`` (K(s, a) from the gammas); ``result``
  (``SearchResult``); ``ownership`` (mean final owner over playouts).
- ``player``: the ``Player`` (move choice, pass and resign rules, the clock of ``timecontrol``) every front end
  plays through; ``bench`` and ``rave_bias`` measure the search.

Positions come from ``jaxgo.go``, leaf values from ``jaxgo.playouts.evaluator``; the server (``jaxgo.server``)
and the GTP front ends (``jaxgo.gtp``) sit above.  Decision-theoretic search control lives in ``jaxgo.bpip``.
"""
