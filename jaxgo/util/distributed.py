"""Several processes, on one host or many, as one JAX program: a thin layer over ``jax.distributed``.

``initialize`` starts JAX's own multi-process runtime (``jax.distributed.initialize``: a coordination service in
process 0, heartbeats, and collectives across processes: gloo on CPUs, NCCL on GPUs).  After it, ``jax.devices()``
lists the devices of every process and a ``jax.sharding.Mesh`` over them makes ``jax.jit`` insert cross-process
all-reduces.  This module adds only what a command line needs around that:

- the coordinator, process count and process id from arguments, else from what ``jax.distributed`` itself reads
  (``JAX_COORDINATOR_ADDRESS``; the process count and id of a Slurm, Open MPI or Kubernetes job);
- a clear message instead of a silent wait when the other processes never join (a watchdog that fires just
  before JAX's own initialization timeout, which would abort with a misleading "another task died");
- ``fail``: report an error and leave at once, skipping the shutdown barrier that would otherwise wait for a
  process that is gone (a dead peer makes every collective fail: gloo raises "connection closed by peer"; the
  coordination service stops the survivors when a process misses heartbeats for ``heartbeat_timeout`` s);
- ``broadcast_bytes``: process 0's bytes (a checkpoint) on every process, through a JAX collective;
- ``core_shares``, ``pin_cores`` and ``free_port`` for starting several processes on one host (tests,
  benchmarks).

Nothing here runs at import time; call ``initialize`` before any other JAX call of the process.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import threading

WATCHDOG_MARGIN_S = 10  # JAX's own initialization timeout is set this much later than the watchdog's


@dataclasses.dataclass(frozen=True)
class Cluster:
    """Where this process stands: ``process_id`` of ``num_processes``, reached through ``coordinator``."""

    process_id: int
    num_processes: int
    coordinator: str | None

    @property
    def is_writer(self) -> bool:
        """True for the process that writes files shared by all (process 0)."""
        return self.process_id == 0

    def prefix(self) -> str:
        """``"process I/N: "`` for log lines of a multi-process run, else ``""``."""
        return f"process {self.process_id}/{self.num_processes}: " if self.num_processes > 1 else ""


def wanted(coordinator=None, num_processes=None, process_id=None, force: bool = False) -> bool:
    """True when a multi-process run is asked for: any of the three arguments given, ``force`` (read everything
    from the cluster environment), or ``JAX_COORDINATOR_ADDRESS`` set."""
    given = (coordinator, num_processes, process_id)
    return force or any(x is not None for x in given) or bool(os.environ.get("JAX_COORDINATOR_ADDRESS"))


def initialize(coordinator: str | None = None, num_processes: int | None = None, process_id: int | None = None,
               *, init_timeout: int = 300, heartbeat_timeout: int = 60, log=None) -> Cluster:
    """Join the multi-process JAX runtime and return this process's place in it.

    coordinator: ``HOST:PORT`` of process 0 (None: ``JAX_COORDINATOR_ADDRESS`` or the cluster environment);
    init_timeout: seconds to wait for every process to join; the watchdog then prints which address was waited
    on and exits with status 1; heartbeat_timeout: seconds after which a silent process is declared dead and the
    others are stopped by JAX.  On CPUs the cross-process collectives are gloo's.
    """
    import jax

    if jax.distributed.is_initialized():
        return current()
    if not os.environ.get("JAX_CPU_COLLECTIVES_IMPLEMENTATION"):  # the user's choice (e.g. mpi) wins
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    where = coordinator or os.environ.get("JAX_COORDINATOR_ADDRESS") or "the cluster's coordinator"
    if log:
        log(f"process {process_id if process_id is not None else '?'}"
            f"/{num_processes if num_processes is not None else '?'}: joining {where} "
            f"(waiting up to {init_timeout} s for every process)")
    done = threading.Event()
    watchdog = threading.Thread(target=_init_watchdog, args=(done, init_timeout, where, num_processes),
                                daemon=True)
    watchdog.start()
    try:
        jax.distributed.initialize(coordinator, num_processes, process_id,
                                   initialization_timeout=init_timeout + WATCHDOG_MARGIN_S,
                                   heartbeat_timeout_seconds=heartbeat_timeout)
    finally:
        done.set()
    return Cluster(jax.process_index(), jax.process_count(), coordinator or os.environ.get("JAX_COORDINATOR_ADDRESS"))


def _init_watchdog(done: threading.Event, timeout: float, where: str, num_processes) -> None:
    """Leave with a clear message when ``done`` is not set within ``timeout`` seconds."""
    if not done.wait(timeout):
        count = num_processes if num_processes is not None else "all"
        fail(f"not every process joined {where} within {timeout:g} s: start {count} processes with the same "
             f"--coordinator and --num-processes and distinct --process-id (0 is the coordinator)")


def current() -> Cluster:
    """This process's ``Cluster`` (one process of one when ``jax.distributed`` was not started)."""
    import jax

    if not jax.distributed.is_initialized():
        return Cluster(0, 1, None)
    return Cluster(jax.process_index(), jax.process_count(), os.environ.get("JAX_COORDINATOR_ADDRESS"))


def fail(message: str, status: int = 1) -> None:
    """Print ``message`` on stderr and end the process now with ``status``.

    ``os._exit`` skips ``jax.distributed``'s exit-time shutdown barrier, which would wait (and then abort) for
    processes that are already gone.
    """
    try:
        sys.stdout.flush()
        print(message, file=sys.stderr, flush=True)
    finally:
        os._exit(status)


def peer_lost(exc: BaseException) -> bool:
    """True if ``exc`` is a collective failing because another process stopped (gloo / NCCL / coordination)."""
    text = str(exc).lower()
    return any(s in text for s in ("gloo", "nccl", "connection closed", "connection reset", "coordination service",
                                   "heartbeat", "socket closed", "unavailable"))


def shutdown() -> None:
    """Leave the runtime together with the other processes (a barrier), if it was started."""
    import jax

    if jax.distributed.is_initialized():
        jax.distributed.shutdown()


def broadcast_bytes(data: bytes | None) -> bytes:
    """Process 0's ``data`` on every process (others pass anything, e.g. None); one process: ``data``.

    Two collectives (``multihost_utils.broadcast_one_to_all``): the length, then the bytes as uint8 [n].
    """
    import jax
    import numpy as np
    from jax.experimental import multihost_utils

    if jax.process_count() == 1:
        return data
    source = jax.process_index() == 0
    length = np.array(len(data) if source else 0, np.int32)
    length = int(multihost_utils.broadcast_one_to_all(length))
    buf = np.frombuffer(data, np.uint8) if source else np.zeros(length, np.uint8)
    if length == 0:
        return b""
    return np.asarray(multihost_utils.broadcast_one_to_all(buf)).tobytes()


def barrier(name: str) -> None:
    """Wait until every process reaches the barrier ``name`` (nothing with one process)."""
    import jax
    from jax.experimental import multihost_utils

    if jax.process_count() > 1:
        multihost_utils.sync_global_devices(name)


def core_shares(parts: int) -> list[set[int] | None]:
    """This process's CPU cores split into ``parts`` disjoint, near-equal sets (for ``os.sched_setaffinity`` of
    child processes); [None] * parts when there are fewer cores than parts or no affinity support."""
    if not hasattr(os, "sched_getaffinity"):
        return [None] * parts
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < parts:
        return [None] * parts
    size = len(cores) // parts
    return [set(cores[i * size:(i + 1) * size]) for i in range(parts)]


def format_cores(cores: set[int] | None) -> str:
    """``"0,1"`` for a core set (``""`` for None: no pinning), the form ``pin_cores`` reads."""
    return ",".join(str(c) for c in sorted(cores)) if cores else ""


def pin_cores(spec: str | None) -> None:
    """Run this process on the cores listed in ``spec`` (``"0,1"``; empty or None: leave it).  Call it before jax
    starts: XLA sizes its CPU thread pool from the cores it may use."""
    if spec and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(c) for c in spec.split(",")})


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host`` (for a coordinator on localhost)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


__all__ = ["Cluster", "wanted", "initialize", "current", "fail", "peer_lost", "shutdown", "broadcast_bytes",
           "barrier", "core_shares", "format_cores", "pin_cores", "free_port"]
