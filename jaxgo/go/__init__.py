"""The rules of Go and the board, the first floor above ``jaxgo.util``: everything else plays through them.

- ``config`` (``Rules``: size, komi, ko rule, suicide; hashable, a static argument of jitted code) and ``coords``
  (points, colours, GTP vertices; pass = action P = size²).
- ``rules``: one dense board as pure JAX functions (``State``, ``play``, ``legal_mask``, ``eye_mask``,
  ``area_score``) with incremental chains and pseudo-liberties, for ``jax.vmap`` over batches; ``tables`` holds
  its per-size constants (neighbours, diagonals, Zobrist keys) and ``kernels`` the jitted batch kernels built
  once per rule setting.
- ``game``: a real game on the host (one ``State`` plus the history that positional superko and undo need);
  ``sgf`` loads and writes game records; ``display`` draws boards as text and reads ASCII diagrams back.
- Host reading: ``hostboard`` (the one host board and flood fill: GTP's early game, the proof search, status and
  the rules' from-scratch chains), ``ladder`` (ladders and failed atari escapes) and
  ``status`` (alive, dead or seki at the end of a game, from playout ownership).
- ``reference``: a slow, obviously correct numpy board, the oracle the fast code is tested against;
  ``gtp_client``: talking GTP to another engine (GNU Go) over a subprocess.

Data flows up: positions (``State``) go to the playouts (``jaxgo.playouts``), features and search; nothing here
imports a package above it (``tests/test_layers.py``).
"""
