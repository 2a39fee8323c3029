"""Proof search on Go capture problems (issue 6): AND/OR tree, proof-number search, probability propagation.

See ``docs/proof.md``.  Modules: ``tree`` (AND/OR tree with transpositions, PNS and PP), ``capture`` (capture
goal, L-increment; on the host board ``jaxgo.go.hostboard`` with the ladder reader ``jaxgo.go.ladder``),
``gtp_commands`` (GTP ``attack``/``defend``), ``cli`` (``jaxgo solve FILE.tst``).
"""
