"""Batched analysis server: one process owns the device and runs the searches of many clients at once.

Modules: ``protocol`` (KataGo JSON-lines queries and responses), ``engine`` (device thread, merged leaf
batches), ``transports`` (stdin/stdout, TCP, Unix socket), ``web`` (HTTP page and JSON/SSE endpoints),
``cli`` (``jaxgo serve``), ``client`` (a small blocking client, and ``LocalConnection`` for an in-process
engine), ``analyze`` (``jaxgo analyze``), ``bench`` (``jaxgo bench serve``).  Searches are ``jaxgo.search``
Searchers evaluating through ``jaxgo.playouts.evaluator``; GTP live analysis and ``jaxgo gtp --server`` are
clients of this package (``jaxgo.gtp.analysis``, ``jaxgo.gtp.remote``).
"""
