"""Local XLA devices: splitting a CPU host into several devices (read once, when JAX starts its backends) and
sharding a batch over a list of devices with ``shard_map`` (the playout benchmark and the sharded Evaluator)."""

from __future__ import annotations

import os
import sys

BATCH_AXIS = "batch"  # the one mesh axis of ``shard_batch``: inside the mapped function, ``axis_index(BATCH_AXIS)``


def configure_host_devices(requested: int | None) -> bool:
    """Split the CPU into ``requested`` XLA devices (None: one per core); False when it came too late.

    Before jax is imported this adds ``xla_force_host_platform_device_count`` to ``XLA_FLAGS`` (one already
    there wins); after the import but before JAX starts its backends (the first array or device query) it sets
    ``jax_num_cpu_devices``.  Once the backends are running nothing changes and the result is False.  Only the
    CPU platform is affected: GPUs are used as they are.
    """
    count = requested or os.cpu_count() or 1
    flags = os.environ.get("XLA_FLAGS", "")
    if "jax" not in sys.modules:
        if "xla_force_host_platform_device_count" not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={count}".strip()
        return True
    if "xla_force_host_platform_device_count" in flags:
        return True
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", count)
    except RuntimeError:  # the backends have started
        return False
    return True


def visible_devices(count: int) -> list:
    """The first ``count`` devices of JAX's default backend; ValueError naming what is there when fewer are."""
    import jax

    devices = jax.devices()
    if count < 1 or count > len(devices):
        raise ValueError(f"{count} devices asked for; JAX sees {len(devices)} {devices[0].platform} device(s) "
                         "(a CPU host is split into N devices only when that is asked for before JAX starts)")
    return devices[:count]


def shard_batch(fn, devices, split: tuple[bool, ...]):
    """``jit(shard_map(fn))`` over a one-axis mesh (``BATCH_AXIS``) of ``devices``.

    Positional argument i of the result is cut along its leading axis into equal consecutive blocks, one per
    device, when ``split[i]`` (its length must be a multiple of the device count), else every device gets all
    of it (e.g. a key or tables; any pytree).  ``fn`` runs once per device on its block; every output is
    concatenated back along its leading axis in device order.  Inside ``fn``,
    ``jax.lax.axis_index(BATCH_AXIS)`` is the device's position in ``devices``.
    """
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(list(devices)), (BATCH_AXIS,))
    specs = tuple(PartitionSpec(BATCH_AXIS) if cut else PartitionSpec() for cut in split)
    mapped = jax.shard_map(fn, mesh=mesh, in_specs=specs, out_specs=PartitionSpec(BATCH_AXIS), check_vma=False)
    return jax.jit(mapped, in_shardings=tuple(NamedSharding(mesh, spec) for spec in specs))


__all__ = ["BATCH_AXIS", "configure_host_devices", "shard_batch", "visible_devices"]
