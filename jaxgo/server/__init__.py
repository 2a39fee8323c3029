"""Batched analysis server: one process owns the device and runs the searches of many clients at once.

Modules: ``protocol`` (KataGo JSON-lines queries and responses), ``engine`` (device thread, merged leaf
batches), ``transports`` (stdin/stdout, TCP, Unix socket), ``web`` (HTTP page and JSON/SSE endpoints),
``cli`` (``jaxgo serve``), ``client`` (a small blocking client), ``gtp_commands`` / ``gtp_loop`` /
``gtp_frontend`` (live analysis over GTP), ``analyze`` (``jaxgo analyze``), ``bench`` (``jaxgo bench serve``).
"""
