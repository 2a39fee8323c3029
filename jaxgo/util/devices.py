"""Host (CPU) device splitting, which XLA reads once, when jax starts."""

from __future__ import annotations

import os
import sys


def configure_host_devices(requested: int | None) -> None:
    """Split the CPU into ``requested`` XLA devices (None: one per core).

    Must run before jax is imported (afterwards it does nothing); an ``xla_force_host_platform_device_count``
    already in ``XLA_FLAGS`` wins.  Only the CPU platform is affected: GPUs are used as they are.
    """
    if "jax" in sys.modules:
        return
    count = requested or os.cpu_count() or 1
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={count}".strip()


__all__ = ["configure_host_devices"]
