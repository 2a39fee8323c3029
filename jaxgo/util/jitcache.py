"""Persistent XLA compilation cache for the ``jaxgo`` command.

Every ``jaxgo gtp`` process compiles the same playout and search kernels; with the cache a GUI or a match runner
starting an engine reuses them (on a 2-core CPU the first 9x9 search drops from about 23 s to 7 s).  Directory:
``$JAXGO_CACHE_DIR`` or ``~/.cache/jaxgo/xla``; ``JAXGO_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path | None:
    """Where compiled kernels are kept, or None when caching is off."""
    if os.environ.get("JAXGO_NO_CACHE"):
        return None
    return Path(os.environ.get("JAXGO_CACHE_DIR") or Path.home() / ".cache" / "jaxgo" / "xla")


SETTINGS = {  # JAX reads its configuration from these variables when it is imported
    # kernels that took 0.1 s or more to compile: a fresh engine's rule and search kernels each take less than
    # half a second, and were compiled again by every process under JAX's default of 1 s (0.5 s here before)
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.1",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
}


def enable() -> Path | None:
    """Turn the persistent cache on for this process (harmless when the directory cannot be made).

    Works through environment variables and does not import jax, so a command can still choose its XLA
    flags (e.g. one CPU device per core) afterwards; if jax is already imported its configuration is updated.
    """
    path = cache_dir()
    if path is None:
        return None
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(path))
    for name, value in SETTINGS.items():
        os.environ.setdefault(name, value)
    import sys

    if "jax" in sys.modules:
        configure(sys.modules["jax"], os.environ["JAX_COMPILATION_CACHE_DIR"])
    return path


def configure(jax, path) -> None:
    """Point an imported ``jax`` at the cache in ``path`` through its configuration only (the environment, and so
    any subprocess's choice of cache, stays as it is): what the test suite does (tests/conftest.py)."""
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs",
                      float(SETTINGS["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes",
                      int(SETTINGS["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"]))
