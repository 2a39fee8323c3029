"""Batched analysis server: one process owns the device and runs the searches of many clients at once.

Modules: ``protocol`` (KataGo JSON-lines queries; ``rulesets`` their rules, ``responses`` the answers),
``engine`` (the device thread; ``rounds`` its merged leaf batches, ``tasks`` one analysed turn each,
``positions`` the replayed games, ``settings`` the bounds of ``overrideSettings``, ``connection`` a client's
sending side, ``engine_config`` its settings), ``transports`` (stdin/stdout, TCP, Unix socket), ``web`` (HTTP
page and JSON/SSE endpoints), ``cli`` (``jaxgo serve``), ``client`` (a small blocking client, and
``LocalConnection`` for an in-process engine), ``analyze`` (``jaxgo analyze``), ``bench`` (``jaxgo bench
serve``).  Searches are ``jaxgo.search`` Searchers evaluating through ``jaxgo.playouts.evaluator``; GTP live
analysis and ``jaxgo gtp --server`` are clients of this package (``jaxgo.gtp.analysis``, ``jaxgo.gtp.remote``).
"""
