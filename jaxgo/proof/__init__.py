"""Proof search on Go capture problems (issue 6): AND/OR tree, proof-number search, probability propagation.

See ``docs/proof.md``.  Modules: ``board`` (small host board with Zobrist-free tuple hashing), ``tree``
(AND/OR tree with transpositions, PNS and PP), ``capture`` (capture goal, ladder reader, L-increment),
``gtp_commands`` (GTP ``attack``/``defend``), ``cli`` (``jaxgo solve FILE.tst``).
"""
