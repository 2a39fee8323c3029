"""Host device splitting is asked for through XLA_FLAGS, only before jax starts, and never overrides the user."""

import os
import sys

from jaxgo.util.devices import configure_host_devices


def test_flag_added_before_jax_starts(monkeypatch):
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    configure_host_devices(3)
    assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/x --xla_force_host_platform_device_count=3"
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    configure_host_devices(8)
    assert os.environ["XLA_FLAGS"] == "--xla_force_host_platform_device_count=2"


def test_nothing_once_jax_is_imported(monkeypatch):
    import jax  # noqa: F401

    monkeypatch.delenv("XLA_FLAGS", raising=False)
    configure_host_devices(4)
    assert "XLA_FLAGS" not in os.environ
