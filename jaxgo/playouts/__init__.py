"""Playouts: random games from batches of positions to their end, scored.

Two implementations of the same policies (light, heavy and the rule policies): the XLA kernels (``light``,
``light_wide``, ``heavy``, ``rule_policy``) for accelerators, and ``native``, numba code that plays one board at a
time on every CPU core.  ``evaluator.Evaluator`` (``make_evaluator(policy, gammas, backend)``) chooses between
them and is all the rest of jaxgo calls: positions come in from ``jaxgo.go``; winners, scores, ownership and the
first colour on each point go out to ``jaxgo.search`` and the analysis server.  ``bench`` and ``libego`` time
them against peers.
"""

# The one list of playout policies and backends (``jaxgo.search.config`` offers them as options; the evaluator
# builds them): no module above needs JAX to know them.
# The ladder_* policies read ladders, lgrf_heavy keeps last-good-reply tables: native backend only
# (``evaluator.NATIVE_ONLY``).
POLICIES = ("light", "heavy", "rules", "safe_rules", "safe_atari_rules", "ladder_rules", "ladder_heavy",
            "ladder2_heavy", "local_rules", "local_heavy",
            "lgrf_heavy")
BACKENDS = ("auto", "native", "xla")
