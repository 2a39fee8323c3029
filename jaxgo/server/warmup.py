"""Seconds the process has spent compiling (numba and XLA), so that a query's ``maxTime`` counts its search only.

A fresh ``jaxgo serve`` compiles its playout and tree code on the first queries of each board size (tens of
seconds on a 2-core CPU, minutes when numba's cache is cold), and a ``maxTime`` clock that counted that time
answered KaTrain's first query with 16 visits (issue 61).  ``compile_seconds`` sums the durations of numba's
outermost ``numba:compile`` events (nested compiles of callees are inside them; loading from numba's cache is one
too) and of JAX's tracing, lowering and backend-compile events, on every thread, from the first call of
``install`` on.

``settle_heap`` is called once the first round has compiled: the objects the process holds by then (JAX's traced
and compiled functions, numba's dispatchers, the imported modules: about 220,000 on a 9x9 server) leave the cyclic
garbage collector's view (``gc.freeze``), so that a full collection, which Python starts when enough new objects
have piled up, scans only what the searches made since (100 ms of a reply thread's CPU, a third of a 64-client
server's Python time per leaf, before).
"""

from __future__ import annotations

import gc
import threading
import time

_lock = threading.Lock()
_state = {"seconds": 0.0, "installed": False, "settled": False}
_depth = threading.local()  # numba compile events nest: count the outermost one of each thread
JAX_COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
                      "/jax/core/compile/backend_compile_duration")


def _add(seconds: float) -> None:
    with _lock:
        _state["seconds"] += seconds


def _jax_listener(event: str, duration: float, **_) -> None:
    if event in JAX_COMPILE_EVENTS:
        _add(float(duration))


def install() -> None:
    """Start counting (once per process; later calls do nothing)."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    import jax.monitoring
    from numba.core import event

    class NumbaCompiles(event.Listener):
        def on_start(self, ev) -> None:
            depth = getattr(_depth, "value", 0)
            if depth == 0:
                _depth.began = time.perf_counter()
            _depth.value = depth + 1

        def on_end(self, ev) -> None:
            _depth.value = getattr(_depth, "value", 1) - 1
            if _depth.value == 0:
                _add(time.perf_counter() - _depth.began)

    event.register("numba:compile", NumbaCompiles())
    jax.monitoring.register_event_duration_secs_listener(_jax_listener)


def compile_seconds() -> float:
    """Seconds spent compiling since ``install`` (every thread)."""
    with _lock:
        return _state["seconds"]


def settle_heap() -> bool:
    """Once per process: collect the garbage, then freeze what is left (``gc.freeze``); whether it did so now."""
    with _lock:
        if _state["settled"]:
            return False
        _state["settled"] = True
    gc.collect()
    gc.freeze()
    return True
