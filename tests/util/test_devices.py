"""Host device splitting is asked for through XLA_FLAGS (or jax_num_cpu_devices after the import), only before JAX
starts, and never overrides the user."""

import os
import subprocess
import sys

import pytest

from jaxgo.util.devices import configure_host_devices, visible_devices


def test_flag_added_before_jax_starts(monkeypatch):
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    configure_host_devices(3)
    assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/x --xla_force_host_platform_device_count=3"
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    configure_host_devices(8)
    assert os.environ["XLA_FLAGS"] == "--xla_force_host_platform_device_count=2"


def test_nothing_once_jax_has_started(monkeypatch):
    import jax

    before = len(jax.devices())  # starts the backends
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    assert configure_host_devices(before + 3) is False
    assert "XLA_FLAGS" not in os.environ and len(jax.devices()) == before


def test_after_the_import_and_before_the_start_the_split_still_applies():
    script = ("import jax\nfrom jaxgo.util.devices import configure_host_devices\n"
              "assert configure_host_devices(3)\nprint(len(jax.devices()))")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    proc = subprocess.run([sys.executable, "-c", script], env=dict(env, JAX_PLATFORMS="cpu"), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["3"], proc.stderr


def test_visible_devices_names_what_is_there():
    import jax

    assert visible_devices(1) == jax.devices()[:1]
    with pytest.raises(ValueError, match=f"JAX sees {len(jax.devices())} "):
        visible_devices(len(jax.devices()) + 1)
