"""A ``jaxgo serve`` process measured as its users meet it (``jaxgo bench serve --first-analysis / --flood /
--soak MINUTES``); each prints one JSON line.

* ``first_analysis``: seconds from starting the process to the first answer on a ``size`` board, a second
  query there, the first after a change to ``other`` (a new board size compiles its shapes), and a second one
  there -- what a GUI user waits for after opening the engine.
* ``flood``: one client sends KaTrain-like queries (reports every 0.01 s, ownership and policy) and never reads
  its replies; meanwhile another client's 16-visit queries are timed, and the server's log shows when and why
  the flooder was dropped.
* ``soak``: mixed queries (KaTrain-like with reports, small ones, terminated pondering, garbage lines, vanishing
  clients) for ``minutes``; the server's resident memory is sampled every few seconds and its slope after the
  first quarter (warm-up) is printed in MB per 10 minutes, with the counts of answers, errors and lost queries.

Everything runs on 127.0.0.1 against a ``jaxgo serve --tcp PORT`` child process; only its own processes are
started and stopped.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import threading
import time


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int, extra: list[str], log_path: str | None = None) -> subprocess.Popen:
    """``jaxgo serve --tcp PORT EXTRA`` as a child process (its log to ``log_path``); returns once it listens."""
    log = open(log_path or os.devnull, "w")
    proc = subprocess.Popen([sys.executable, "-m", "jaxgo", "serve", "--tcp", str(port), *extra],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"jaxgo serve exited with status {proc.returncode}")
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError("jaxgo serve did not start listening")


def stop_server(proc: subprocess.Popen) -> int:
    proc.terminate()
    try:
        return proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(10)


def resident_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def query(ident: str, size: int, visits: int, **extra) -> dict:
    moves = [["B", "D4" if size >= 9 else "C3"]]
    out = {"id": ident, "moves": moves, "rules": "japanese", "komi": 6.5, "boardXSize": size, "boardYSize": size,
           "maxVisits": visits}
    out.update(extra)
    return out


def ask(port: int, obj: dict, timeout: float = 600.0) -> tuple[float, dict]:
    """(seconds, final response) of one query on a fresh connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        began = time.monotonic()
        sock.sendall((json.dumps(obj) + "\n").encode())
        for line in sock.makefile("rb"):
            if not line.strip():
                continue
            response = json.loads(line)
            if "error" in response or ("turnNumber" in response and not response.get("isDuringSearch")):
                return time.monotonic() - began, response
    raise ConnectionError("connection closed before the answer")


def first_analysis(size: int, other: int, visits: int, extra: list[str]) -> dict:
    """Seconds to the first answers after start and after a board-size change (see the module docstring)."""
    port = free_port()
    began = time.monotonic()
    proc = start_server(port, extra)
    try:
        listening = time.monotonic() - began
        first, _ = ask(port, query("first", size, visits))
        second, _ = ask(port, query("second", size, visits))
        changed, _ = ask(port, query("changed", other, visits))
        again, _ = ask(port, query("again", other, visits))
    finally:
        status = stop_server(proc)
    return {"probe": "first_analysis", "size": size, "other_size": other, "visits": visits, "options": extra,
            "listening_s": round(listening, 2), "first_after_start_s": round(listening + first, 2),
            "first_query_s": round(first, 2), "second_query_s": round(second, 3),
            "first_after_size_change_s": round(changed, 2), "second_after_size_change_s": round(again, 3),
            "exit_status": status}


def _flooder(port: int, count: int, size: int, stop: threading.Event, sent: threading.Event) -> threading.Thread:
    """A client that sends ``count`` KaTrain-like queries, 10 a second, and never reads a reply; ``sent`` is
    set when it has sent them all (or the server closed it)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)

    def run():
        try:
            for i in range(count):
                if stop.is_set():
                    break
                sock.sendall((json.dumps(query(f"flood{i}", size, 500, reportDuringSearchEvery=0.01,
                                               includeOwnership=True, includePolicy=True)) + "\n").encode())
                time.sleep(0.1)
        except OSError:
            pass
        sent.set()
        stop.wait()
        sock.close()

    thread = threading.Thread(target=run, daemon=True, name="flooder")
    thread.start()
    return thread


def flood(size: int, count: int, every: float, extra: list[str], log_path: str) -> dict:
    """Latencies of 16-visit queries, one every ``every`` seconds from 5 s into the flood until 10 s after its
    last query, while one client floods without reading (see the module docstring)."""
    port = free_port()
    proc = start_server(port, extra, log_path)
    stop, sent = threading.Event(), threading.Event()
    try:
        ask(port, query("warm-up", size, 16))
        rss_before = resident_mb(proc.pid)
        thread = _flooder(port, count, size, stop, sent)
        time.sleep(5.0)
        latencies, rss_peak, ends = [], rss_before, None
        while ends is None or time.monotonic() < ends:
            seconds, response = ask(port, query(f"probe{len(latencies)}", size, 16), timeout=300)
            latencies.append(round(seconds, 3) if response.get("rootInfo", {}).get("visits") == 16 else None)
            rss_peak = max(rss_peak, resident_mb(proc.pid))
            if ends is None and sent.is_set():
                ends = time.monotonic() + 10.0
            time.sleep(every)
        stop.set()
        thread.join(30)
    finally:
        status = stop_server(proc)
    with open(log_path) as handle:
        dropped = [line.strip() for line in handle if "dropped" in line or "not reading" in line]
    return {"probe": "flood", "size": size, "flood_queries": count, "options": extra, "probe_latency_s": latencies,
            "max_probe_latency_s": max((x for x in latencies if x is not None), default=None),
            "rss_mb_before": round(rss_before), "rss_mb_peak": round(rss_peak), "server_log": dropped[:4],
            "exit_status": status}


def _soak_client(port: int, rng: random.Random, stop: threading.Event, counts: dict, lock: threading.Lock):
    """One connection after another, each one of: a KaTrain-like query with reports, a few small queries, a
    pondering query terminated after a while, garbage lines, or a client that leaves without reading."""
    while not stop.is_set():
        kind = rng.choice(["katrain", "small", "ponder", "garbage", "vanish"])
        size = rng.choice([9, 13, 19])
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=300) as sock:
                if kind == "katrain":
                    lines = [query(f"k{rng.random()}", size, 200, reportDuringSearchEvery=0.25, includeOwnership=True,
                                   includePolicy=True, maxTime=8.0)]
                elif kind == "small":
                    lines = [query(f"s{i}", size, 32) for i in range(rng.randint(1, 4))]
                elif kind == "ponder":
                    lines = [query("p", size, 10_000_000, reportDuringSearchEvery=0.5)]
                elif kind == "garbage":
                    lines = ["{not json", "[]", query("g", 99, 1)]
                else:
                    lines = [query("v", size, 10_000)]
                data = "".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines).encode()
                sock.sendall(data)
                if kind == "vanish":
                    time.sleep(rng.uniform(0.1, 1.0))
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    with lock:
                        counts["vanished"] += 1
                    continue
                if kind == "ponder":
                    time.sleep(rng.uniform(1.0, 5.0))
                    sock.sendall(b'{"id":"t","action":"terminate","terminateId":"p"}\n')
                sock.shutdown(socket.SHUT_WR)
                expected = sum(1 for x in lines if isinstance(x, dict) and x["boardXSize"] <= 19)
                finals = errors = 0
                for line in sock.makefile("rb"):
                    if not line.strip():
                        continue
                    response = json.loads(line)
                    if "error" in response:
                        errors += 1
                    elif "turnNumber" in response and not response.get("isDuringSearch"):
                        finals += 1
                with lock:
                    counts["answered"] += finals
                    counts["errors"] += errors
                    counts["lost"] += max(0, expected - finals)
        except (OSError, ValueError) as exc:
            with lock:
                counts["client_failures"] += 1
                counts["last_failure"] = repr(exc)


def soak(minutes: float, clients: int, extra: list[str], sample_seconds: float = 5.0) -> dict:
    """Mixed load for ``minutes``; the server's RSS slope after warm-up (see the module docstring)."""
    port = free_port()
    proc = start_server(port, extra)
    stop, lock = threading.Event(), threading.Lock()
    counts = {"answered": 0, "errors": 0, "lost": 0, "vanished": 0, "client_failures": 0}
    threads = [threading.Thread(target=_soak_client, args=(port, random.Random(i), stop, counts, lock),
                                daemon=True) for i in range(clients)]
    began = time.monotonic()
    samples = []
    for thread in threads:
        thread.start()
    try:
        while time.monotonic() - began < minutes * 60:
            time.sleep(sample_seconds)
            samples.append((time.monotonic() - began, resident_mb(proc.pid)))
            if proc.poll() is not None:
                break
    finally:
        stop.set()
        for thread in threads:
            thread.join(300)
        crashed = proc.poll() is not None
        status = stop_server(proc)
    warm = [(t, m) for t, m in samples if t >= minutes * 60 / 4]
    return {"probe": "soak", "minutes": minutes, "clients": clients, "options": extra, **counts,
            "crashed": crashed, "exit_status": status, "rss_mb_start": round(samples[0][1]) if samples else None,
            "rss_mb_end": round(samples[-1][1]) if samples else None,
            "rss_mb_per_10_min_after_warmup": round(slope(warm) * 600, 2) if len(warm) >= 2 else None}


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (x, y) points (y per unit of x)."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / var if var else 0.0
