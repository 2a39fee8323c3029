"""The floor of the layers: small services every other package may use, none of them about Go.

- ``files``: atomic writes (a reader sees the old file or the whole new one), for checkpoints, gamma files,
  label sets and results files that long jobs rewrite.
- ``paths``: ``data_dir()``, where the shared data (game archives, problem sets, rules suites) is read from:
  ``JAXGO_DATA``, else ``../shared/data`` beside the checkout.
- ``devices``: a CPU host split into several XLA devices, and a batch sharded over devices with ``shard_map``.
- ``distributed``: several processes, on one host or many, as one JAX program (``jax.distributed``).
- ``jitcache``: the persistent XLA compilation cache of the ``jaxgo`` command (``~/.cache/jaxgo/xla``).

Nothing here imports another jaxgo package (``tests/test_layers.py``).
"""
