"""Training with several jax.distributed processes (``jaxgo gammas train --coordinator ...``): two processes on
localhost (one CPU device each, gloo collectives) give the one-process gammas; when one process is killed the
other stops with a clear message instead of waiting, and both restarted resume from process 0's checkpoint."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from jaxgo.features import gammas as gm
from jaxgo.learn import train
from jaxgo.learn.synthetic import random_shards
from jaxgo.util.distributed import free_port

RUNS = {"lmp": ["--passes", "2", "--batch", "8"], "mm": ["--iterations", "2", "--batch", "16"],
        "sgd": ["--passes", "1", "--batch", "8", "--lr", "0.05"]}
KWARGS = {"lmp": {"passes": 2, "batch": 8}, "mm": {"iterations": 2, "batch": 16},
          "sgd": {"passes": 1, "batch": 8, "lr": 0.05}}
WAIT_S = 240  # no process of these tests may take longer: a hang fails the test instead of the suite


def start(shards, out, method, args, logs, processes=2, only=None, timeout=60):
    """Start ``processes`` ``jaxgo gammas train`` processes on a fresh localhost port (``only``: just those ids);
    stdout and stderr go to files in ``logs``.  Returns the Popen objects by process id."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    port = free_port()
    procs = {}
    for i in range(processes) if only is None else only:
        cmd = [sys.executable, "-m", "jaxgo.learn.cli", "train", "--shards", str(shards), "--method", method,
               "--out", str(out), *args, "--coordinator", f"127.0.0.1:{port}", "--num-processes", str(processes),
               "--process-id", str(i), "--init-timeout", str(timeout), "--heartbeat-timeout", "20"]
        with open(logs / f"out{i}.txt", "w") as so, open(logs / f"err{i}.txt", "w") as se:
            procs[i] = subprocess.Popen(cmd, stdout=so, stderr=se, env=env)
    return procs


def finish(procs, logs) -> dict:
    """Wait for every process; {id: (returncode, stdout, stderr)}."""
    done = {}
    for i, p in procs.items():
        try:
            p.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        done[i] = (p.returncode, (logs / f"out{i}.txt").read_text(), (logs / f"err{i}.txt").read_text())
    return done


def wait_for_line(path, text, proc, timeout=WAIT_S) -> None:
    """Poll the log file ``path`` until a line contains ``text`` (fails if ``proc`` ends first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in path.read_text():
            return
        assert proc.poll() is None, f"process ended before logging {text!r}: {path.read_text()[-2000:]}"
        time.sleep(0.02)
    raise AssertionError(f"no {text!r} in {path} after {timeout} s")


def two_process_run(tmp_path, method):
    """One in-process run and one 2-process CLI run of ``method`` on the same shards; returns both gammas and
    process 0's printed summary."""
    shards = random_shards(tmp_path / "shards")
    train.train(shards, method, tmp_path / "one.npz", **KWARGS[method])
    done = finish(start(shards, tmp_path / "two.npz", method, RUNS[method], tmp_path), tmp_path)
    for i, (code, _, err) in done.items():
        assert code == 0, f"process {i}: {err[-3000:]}"
    summary = json.loads(done[0][1].strip().splitlines()[-1])
    assert not any(line.startswith("{") for line in done[1][1].splitlines())  # printed once, by process 0
    return gm.load(tmp_path / "one.npz").log_gamma, gm.load(tmp_path / "two.npz").log_gamma, summary, done


def test_two_processes_give_the_one_process_lmp_gammas(tmp_path):
    one, two, summary, done = two_process_run(tmp_path, "lmp")
    assert summary["finished"] and summary["processes"] == 2 and summary["devices"] == 2
    assert summary["positions"] == 120
    assert np.abs(one).max() > 0.5  # something was learnt
    np.testing.assert_allclose(two, one, atol=1e-4)  # gamma files are read at 4 decimals in log space
    assert "process 1/2: lmp pass 2/2 shard 3/3" in done[1][2]
    assert not (tmp_path / "two.npz.ckpt" / "factors-shard-00000.next.npy").exists()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["mm", "sgd"])
def test_two_processes_give_the_one_process_mm_and_sgd_gammas(tmp_path, method):
    one, two, summary, done = two_process_run(tmp_path, method)
    np.testing.assert_allclose(two, one, atol=1e-4)
    if method == "mm":  # the printed log-likelihoods agree to the printed precision
        lines = [line.split(": ", 1)[1] for line in done[0][2].splitlines() if "mm sweep" in line]
        ll = float(lines[-1].rsplit(" ", 1)[1])
        assert len(lines) == 2 and ll == pytest.approx(summary["train_mean_log_likelihood"], abs=1e-4)


@pytest.mark.slow
def test_a_process_that_never_comes_stops_the_other_with_a_clear_error(tmp_path):
    shards = random_shards(tmp_path / "shards", num_shards=1)
    t0 = time.monotonic()
    done = finish(start(shards, tmp_path / "g.npz", "lmp", RUNS["lmp"], tmp_path, only=[0], timeout=3), tmp_path)
    code, _, err = done[0]
    assert code != 0 and time.monotonic() - t0 < 120
    assert "not every process joined 127.0.0.1:" in err and "within 3 s" in err


@pytest.mark.slow
def test_killed_process_stops_the_other_and_both_resume_from_the_checkpoint(tmp_path):
    shards = random_shards(tmp_path / "shards", num_shards=6)
    args = ["--passes", "3", "--batch", "8"]
    train.train(shards, "lmp", tmp_path / "one.npz", passes=3, batch=8)
    procs = start(shards, tmp_path / "two.npz", "lmp", args, tmp_path)
    wait_for_line(tmp_path / "err1.txt", "lmp pass 1/3 shard 3/6", procs[1])
    procs[1].send_signal(signal.SIGKILL)
    t0 = time.monotonic()
    done = finish(procs, tmp_path)
    code, _, err = done[0]
    assert code not in (0, None) and time.monotonic() - t0 < 60, err[-3000:]
    assert "another process stopped" in err and "resume from the last checkpoint" in err, err[-3000:]
    assert not (tmp_path / "two.npz").exists()
    with np.load(tmp_path / "two.npz.ckpt" / "state.npz") as state:
        info = json.loads(str(state["info"]))
    assert (info["pass"], info["shard"]) >= (0, 2)  # shard 3 of process 1 had been dispatched: 2 were committed
    done = finish(start(shards, tmp_path / "two.npz", "lmp", args, tmp_path), tmp_path)
    for i, (code, _, err) in done.items():
        assert code == 0, f"process {i}: {err[-3000:]}"
        assert f"process {i}/2: resuming from checkpoint" in err
    np.testing.assert_allclose(gm.load(tmp_path / "two.npz").log_gamma, gm.load(tmp_path / "one.npz").log_gamma,
                               atol=1e-4)


@pytest.mark.slow
def test_killed_coordinator_stops_the_other_process(tmp_path):
    shards = random_shards(tmp_path / "shards", num_shards=6)
    procs = start(shards, tmp_path / "two.npz", "lmp", ["--passes", "3", "--batch", "8"], tmp_path)
    wait_for_line(tmp_path / "err0.txt", "lmp pass 1/3 shard 3/6", procs[0])
    procs[0].send_signal(signal.SIGKILL)
    t0 = time.monotonic()
    code, _, err = finish(procs, tmp_path)[1]
    assert code not in (0, None) and time.monotonic() - t0 < 60
    assert "another process stopped" in err or "another task died" in err, err[-3000:]


@pytest.mark.slow
def test_bench_prints_one_line_per_process_count(tmp_path, capsys):
    from jaxgo.learn.bench import main

    shards = random_shards(tmp_path / "shards")
    assert main(["--shards", str(shards), "--processes", "1", "2", "--batch-positions", "8", "--lmp-passes", "2",
                 "--timeout", str(WAIT_S)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["processes"], r["devices"]) for r in rows] == [(1, 1), (2, 2)]
    assert all(r["examples_per_s"] > 0 and r["positions"] == 120 and r["passes"] == 2 for r in rows)
    assert rows[0]["ratio_vs_first"] == 1.0 and rows[1]["max_abs_log_gamma_diff_vs_first"] < 1e-4
