"""What the analysis server's host work costs per leaf (``jaxgo bench serve --host-only``): CPU time of the
engine's threads, the share of it under the GIL, and the Python calls it makes.

* ``ThreadClock``: CPU seconds of the engine's threads (the device thread, named ``device``, the tree
  threads, ``tree*``, and the thread that builds the answers, ``reply``) read from outside them
  (``time.pthread_getcpuclockid``).
* ``KernelClock``: CPU seconds those threads spend inside the compiled nogil kernels (numba dispatchers of the
  jaxgo modules that only Python calls), measured with ``time.thread_time`` around each call by a wrapper put
  in every jaxgo module's namespace that holds the kernel, and taken out again on ``close``.  A kernel that
  another compiled function calls is never wrapped (numba would try to compile the wrapper), so its time
  counts in its caller's.
* ``CallCounter``: Python function calls (profile ``call`` events) on the threads started while it is on
  (``threading.setprofile``), per thread name.

GIL-held host time = thread CPU time - time inside the nogil kernels; both over the leaves the run played out
(playouts / L).  The wrappers and the profile hook cost time of their own: calls are counted in a separate run.
"""

from __future__ import annotations

import collections
import sys
import threading
import time

ENGINE_THREADS = ("device", "tree", "reply")  # name prefixes of the threads that do the engine's host work


def engine_threads() -> list[threading.Thread]:
    """The live threads whose names start with one of ``ENGINE_THREADS``."""
    return [t for t in threading.enumerate() if t.name.startswith(ENGINE_THREADS) and t.ident is not None]


class ThreadClock:
    """CPU seconds of the engine's threads since ``mark`` (threads that ended in between are not counted)."""

    def __init__(self):
        self._start: dict[int, float] = {}

    @staticmethod
    def _read(thread: threading.Thread) -> float | None:
        try:
            return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except (OSError, ProcessLookupError, OverflowError):
            return None

    def mark(self) -> None:
        self._start = {t.ident: s for t in engine_threads() if (s := self._read(t)) is not None}

    def seconds(self) -> float:
        total = 0.0
        for thread in engine_threads():
            now = self._read(thread)
            if now is not None:
                total += now - self._start.get(thread.ident, 0.0)
        return total


def _jaxgo_modules() -> list:
    return [m for name, m in list(sys.modules.items()) if name.startswith("jaxgo.") and m is not None]


def python_only_kernels() -> dict[int, object]:
    """{id: dispatcher} of the numba dispatchers defined in jaxgo modules that no other dispatcher's source names
    (so wrapping them cannot reach a compiled caller)."""
    from numba.core.registry import CPUDispatcher

    found = {}
    for module in _jaxgo_modules():
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher):
                found[id(value)] = value
    referenced = set()
    for dispatcher in found.values():
        referenced.update(dispatcher.py_func.__code__.co_names)
    return {key: d for key, d in found.items() if d.__name__ not in referenced}


class KernelClock:
    """While open, every call of a Python-only nogil kernel (``python_only_kernels``) on one of the threads
    ``idents`` (default: the engine threads now) adds its thread CPU time to ``seconds`` and one to ``calls``."""

    def __init__(self, idents=None):
        self._idents = frozenset(t.ident for t in engine_threads()) if idents is None else frozenset(idents)
        self.seconds = 0.0
        self.calls = 0
        self._lock = threading.Lock()
        self._replaced: list[tuple[object, str, object]] = []
        kernels = python_only_kernels()
        wrappers = {key: self._wrap(d) for key, d in kernels.items()}
        for module in _jaxgo_modules():
            for name, value in list(vars(module).items()):
                if id(value) in wrappers and value is kernels[id(value)]:
                    self._replaced.append((module, name, value))
                    setattr(module, name, wrappers[id(value)])
        self.kernels = sorted({d.__name__ for d in kernels.values()})

    def _wrap(self, kernel):
        clock, lock, ident, watched = time.thread_time, self._lock, threading.get_ident, self._idents

        def timed(*args, **kwargs):
            if ident() not in watched:
                return kernel(*args, **kwargs)
            began = clock()
            try:
                return kernel(*args, **kwargs)
            finally:
                spent = clock() - began
                with lock:
                    self.seconds += spent
                    self.calls += 1

        timed.__name__ = kernel.__name__
        return timed

    def reset(self) -> None:
        with self._lock:
            self.seconds, self.calls = 0.0, 0

    def close(self) -> None:
        for module, name, value in self._replaced:
            setattr(module, name, value)
        self._replaced = []


class CallCounter:
    """Counts the Python function calls of every thread started while it is open, by thread name prefix."""

    def __init__(self):
        self._counts: dict[int, int] = collections.defaultdict(int)
        counts, ident = self._counts, threading.get_ident

        def hook(frame, event, arg):
            if event == "call":
                counts[ident()] += 1

        threading.setprofile(hook)

    def reset(self) -> None:
        self._counts.clear()

    def calls(self, prefixes: tuple = ENGINE_THREADS) -> int:
        """Calls so far on the live threads whose names start with one of ``prefixes``."""
        idents = {t.ident for t in threading.enumerate() if t.name.startswith(prefixes)}
        return sum(n for key, n in list(self._counts.items()) if key in idents)

    def close(self) -> None:
        threading.setprofile(None)


class HostCost:
    """The engine threads' CPU time and the nogil kernels' share of it from now until ``figures``."""

    def __init__(self):
        self.kernels = KernelClock()
        self.threads = ThreadClock()
        self.threads.mark()

    def figures(self, leaves: int) -> dict:
        """{host_cpu_us_per_leaf, host_nogil_us_per_leaf, host_gil_us_per_leaf, kernel_calls_per_leaf} over
        ``leaves`` leaves; the kernels' wrappers are taken out."""
        cpu, nogil = self.threads.seconds(), self.kernels.seconds
        calls = self.kernels.calls
        self.kernels.close()
        return {"host_cpu_us_per_leaf": per_leaf(cpu, leaves), "host_nogil_us_per_leaf": per_leaf(nogil, leaves),
                "host_gil_us_per_leaf": per_leaf(cpu - nogil, leaves),
                "kernel_calls_per_leaf": round(calls / max(1, leaves), 3)}


def calls_per_leaf(start, stop, run, playouts_per_leaf: int) -> float:
    """Python calls per leaf of the engine's threads (``CallCounter``) in a fresh engine: ``start()`` gives
    (engine, ..., address), ``run(address)`` drives it once to warm up and once counted, ``stop(started)``."""
    counter = CallCounter()
    try:
        started = start()
        engine, address = started[0], started[-1]
        try:
            run(address)
            counter.reset()
            playouts0 = engine.playouts
            run(address)
            calls = counter.calls()
            leaves = (engine.playouts - playouts0) // playouts_per_leaf
        finally:
            stop(started)
    finally:
        counter.close()
    return round(calls / max(1, leaves), 3)


def per_leaf(seconds: float, leaves: int) -> float:
    """Microseconds per leaf, rounded to 0.01."""
    return round(seconds * 1e6 / max(1, leaves), 2)
