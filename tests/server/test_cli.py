"""``jaxgo serve`` as a process: stdin end of input, SIGTERM and SIGINT all end it cleanly with status 0; on a CPU
split into 2 devices (`--devices 2 --device-batch 64`) it answers as on one."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

TIMEOUT = 240
SERVE = [sys.executable, "-m", "jaxgo", "serve", "--quiet", "--playout-policy", "light", "--bias", "0",
         "--max-boards", "64"]
QUERY = {"id": "q", "moves": [["B", "C3"]], "rules": "chinese", "komi": 0.5, "boardXSize": 5, "boardYSize": 5,
         "maxVisits": 32}


def environment():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("JAXGO_NO_CACHE", None)
    return env


def test_stdin_end_of_input_flushes_every_answer_and_exits_0():
    # The input: `echo '{"id":"cc","action":"clear_cache"}' | jaxgo serve` printed nothing.
    lines = ['{"id":"cc","action":"clear_cache"}', json.dumps(QUERY), '{"id":"ta","action":"terminate_all"}']
    proc = subprocess.run(SERVE, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=TIMEOUT,
                          env=environment())
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stderr
    assert out[0] == {"id": "cc", "action": "clear_cache"}
    assert {"id": "ta", "action": "terminate_all"} in out
    assert [r["turnNumber"] for r in out if r.get("id") == "q"] == [1]


@pytest.mark.parametrize("number", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow)])
def test_a_signal_stops_a_busy_stdin_server_with_status_0(number):
    proc = subprocess.Popen(SERVE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=environment())
    try:
        proc.stdin.write(json.dumps(dict(QUERY, maxVisits=10_000_000, reportDuringSearchEvery=0.1)) + "\n")
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())  # a report: the search is running
        assert first["isDuringSearch"] is True
        proc.send_signal(number)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_sigterm_stops_a_socket_server_with_status_0_and_removes_its_socket(tmp_path):
    path = str(tmp_path / "serve.sock")
    proc = subprocess.Popen(SERVE + ["--unix", path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=environment())
    try:
        deadline = time.time() + TIMEOUT
        while not os.path.exists(path):
            assert time.time() < deadline and proc.poll() is None
            time.sleep(0.1)
        import socket

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        sock.sendall((json.dumps(dict(QUERY, maxVisits=10_000_000, reportDuringSearchEvery=0.1)) + "\n").encode())
        reader = sock.makefile("rb")
        assert json.loads(reader.readline())["isDuringSearch"] is True  # a client is connected and searching
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=TIMEOUT)
        sock.close()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert not os.path.exists(path)


@pytest.mark.slow
def test_serve_sharded_over_two_cpu_devices_answers_and_exits_0_at_end_of_input():
    env = environment()
    env.pop("XLA_FLAGS", None)
    query = dict(QUERY, maxVisits=64, includeOwnership=True)
    proc = subprocess.run(SERVE + ["--devices", "2", "--device-batch", "64"], input=json.dumps(query) + "\n",
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, proc.stderr
    (response,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert response["id"] == "q" and response["isDuringSearch"] is False
    assert response["rootInfo"]["visits"] >= 64 and 0 <= response["rootInfo"]["winrate"] <= 1
    assert sum(info["visits"] for info in response["moveInfos"]) >= 64
    assert len(response["ownership"]) == 25 and all(-1 <= v <= 1 for v in response["ownership"])


@pytest.mark.parametrize("options, message", [
    (["--devices", "3", "--device-batch", "64"], "not a multiple of devices 3"),
    (["--devices", "0"], "must be positive"),
])
def test_a_device_batch_that_does_not_split_is_refused(options, message):
    proc = subprocess.run(SERVE + options, input="", capture_output=True, text=True, timeout=TIMEOUT,
                          env=environment())
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


# -- issue 61 ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_serve_leaves_when_the_shell_that_started_it_is_killed():
    """KaTrain SIGTERMs the ``/bin/sh -c`` it started; jaxgo serve kept the pipes open and KaTrain hung."""
    command = " ".join(SERVE) + "; true"  # the trailing command keeps sh from exec'ing jaxgo
    proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=environment())
    proc.stdin.write(b'{"id":"v","action":"query_version"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == "v"  # the server is up
    proc.send_signal(signal.SIGTERM)  # the shell only
    assert proc.wait(TIMEOUT) != 0
    reader = subprocess.run(["timeout", "60", "cat"], stdin=proc.stdout, capture_output=True)
    assert reader.returncode == 0, "jaxgo serve kept its stdout open after its parent died"
    proc.stdin.close()


def test_serve_help_does_not_import_jax():
    code = ("import sys\nfrom jaxgo.cli import main\ntry:\n    main(['serve', '--help'])\nexcept SystemExit:\n"
            "    pass\nprint('jax' in sys.modules, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT,
                          env=environment())
    assert "--unix PATH" in proc.stdout and proc.stderr.strip() == "False", proc.stderr


def test_serve_unix_refuses_a_path_that_is_a_regular_file(tmp_path, capsys):
    """``--unix PATH`` replaced a regular file with its socket and removed it at exit."""
    from jaxgo.server import cli

    precious = tmp_path / "notes.txt"
    precious.write_text("keep me\n")
    assert cli.main(["--unix", str(precious), "--quiet"]) == 2
    assert "is not a socket; not replacing it" in capsys.readouterr().err
    assert precious.read_text() == "keep me\n"


def test_the_unix_listener_removes_only_its_own_socket(tmp_path):
    from jaxgo.server import transports

    class NoEngine:
        def client_closed(self, client) -> None:
            pass

    precious = tmp_path / "regular"
    precious.write_text("keep me\n")
    with pytest.raises(OSError, match="not a socket"):
        transports.UnixServer(NoEngine(), str(precious))
    assert precious.read_text() == "keep me\n"
    path = tmp_path / "sock"
    server = transports.UnixServer(NoEngine(), str(path))
    os.unlink(path)
    path.write_text("someone else's file\n")  # our socket was replaced while we ran
    server.server_close()
    assert path.read_text() == "someone else's file\n"
    server = transports.UnixServer(NoEngine(), str(path.with_name("sock2")))
    server.server_close()
    assert not path.with_name("sock2").exists()
