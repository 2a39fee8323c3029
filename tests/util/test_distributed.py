"""The jax.distributed helpers outside a multi-process run: one process of one, nothing started unless asked
for, cores split into disjoint shares, collective failures told apart from other errors.  (Two real processes:
tests/learn/test_distributed.py.)"""

import os
import socket

import pytest

from jaxgo.util import distributed


def test_a_single_process_is_process_zero_of_one():
    cluster = distributed.current()
    assert cluster == distributed.Cluster(0, 1, None) and cluster.is_writer and cluster.prefix() == ""
    other = distributed.Cluster(1, 4, "h:1")
    assert other.prefix() == "process 1/4: " and not other.is_writer
    assert distributed.broadcast_bytes(b"state") == b"state"
    distributed.barrier("nothing to wait for")
    distributed.shutdown()  # nothing was started: nothing happens


def test_multi_process_only_when_asked(monkeypatch):
    monkeypatch.delenv("JAX_COORDINATOR_ADDRESS", raising=False)
    assert not distributed.wanted()
    assert distributed.wanted(process_id=0) and distributed.wanted(force=True)
    assert distributed.wanted("10.0.0.1:1234", 2, 1)
    monkeypatch.setenv("JAX_COORDINATOR_ADDRESS", "10.0.0.1:1234")
    assert distributed.wanted()


def test_core_shares_are_disjoint_and_even(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 5}, raising=False)
    shares = distributed.core_shares(2)
    assert shares == [{0, 1}, {2, 3}]
    assert distributed.core_shares(6) == [None] * 6  # more parts than cores: no pinning
    assert distributed.format_cores({3, 1}) == "1,3" and distributed.format_cores(None) == ""


def test_pin_cores_restricts_this_process(monkeypatch):
    calls = []
    monkeypatch.setattr(os, "sched_setaffinity", lambda pid, cores: calls.append(cores), raising=False)
    distributed.pin_cores("0,2")
    distributed.pin_cores("")
    distributed.pin_cores(None)
    assert calls == [{0, 2}]


def test_free_port_can_be_bound():
    port = distributed.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


@pytest.mark.parametrize("message,lost", [
    ("UNKNOWN: Gloo all-reduce failed: Connection closed by peer [127.0.0.1]:4242", True),
    ("Read error [127.0.0.1]:46278: Connection reset by peer", True),
    ("checkpoint /x belongs to another run", False),
    ("batch of 7 positions does not divide over 2 devices", False),
])
def test_peer_loss_is_told_apart_from_other_errors(message, lost):
    assert distributed.peer_lost(ValueError(message)) is lost
