"""``jaxgo bench gtp``: how fast ``jaxgo gtp`` answers a GUI after start-up, and its first ``genmove``.

Each run starts a fresh ``jaxgo gtp`` process, as a GUI does, and sends what Sabaki / GoGui send first
(``protocol_version``, ``name``, ``version``, ``list_commands``, ``boardsize``, ``komi``, ``clear_board``, two
``play``), then one of:

    at_once        ``genmove`` right away (a GUI that lets the engine move first);
    after_warmup   ``genmove`` once the warm-up thread reports its search compiled (a user who thinks first);

then ``lz-analyze`` (time to the first ``info`` line), the same after a change of board size (``boardsize``
to the other of 9 and 19, ``clear_board``, one ``play``: what a GUI user meets after opening another game), and
``quit`` with stdin held open (time to exit, exit status).  The compilation cache (``jaxgo.util.jitcache``)
lives in a fresh temporary folder: the first run of each size is ``cold`` (empty cache, a first installation),
the next ones ``warm``.  One JSON line per run:

    {"benchmark": "gtp", "size", "playouts", "mode", "cache", "warmup", "name_s", "list_commands_s",
     "first_play_s", "genmove_s", "genmove_from_start_s", "warmup_rules_s", "warmup_search_s",
     "first_analysis_line_s", "other_size", "first_analysis_after_size_change_s", "quit_s", "exit_status"}

(``*_s`` of a command: seconds from sending it to its answer; ``name_s`` and ``first_play_s`` count from the
process start.)  ``--no-warmup`` measures the engine without the warm-up thread.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time

from jaxgo.search.limits import DEFAULT_PLAYOUTS

START_SCRIPT = ["protocol_version", "name", "version", "list_commands", "boardsize {size}", "komi 7.5",
                "clear_board", "play b {first}", "play w {second}"]
TIMEOUT = 900.0


class Engine:
    """A ``jaxgo gtp`` process driven line by line; stderr lines are kept with their arrival times."""

    def __init__(self, args: list[str], env: dict):
        self.start = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "jaxgo", "gtp", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                                     bufsize=1)
        self.stderr: list[tuple[float, str]] = []
        self.reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.reader.start()

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append((time.perf_counter() - self.start, line.rstrip("\n")))

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def response(self) -> tuple[str, float]:
        """(the response's text, seconds since the process start when its first line arrived)."""
        lines, first_at = [], None
        while True:
            line = self.proc.stdout.readline()
            if first_at is None:
                first_at = time.perf_counter() - self.start
            if line == "":
                raise RuntimeError("jaxgo gtp ended early: " + " | ".join(text for _, text in self.stderr[-5:]))
            if line == "\n":
                return "".join(lines), first_at
            lines.append(line)

    def ask(self, command: str) -> tuple[str, float]:
        """(response, seconds from sending ``command`` to its answer)."""
        sent = time.perf_counter()
        self.send(command)
        text, _ = self.response()
        if not text.startswith("="):
            raise RuntimeError(f"{command}: {text.strip()}")
        return text, time.perf_counter() - sent

    def wait_stderr(self, marker: str, timeout: float = TIMEOUT) -> float | None:
        """Seconds since start at which a stderr line containing ``marker`` arrived (None on timeout)."""
        deadline = time.perf_counter() + timeout
        while True:
            for at, text in list(self.stderr):
                if marker in text:
                    return at
            if self.proc.poll() is not None or time.perf_counter() >= deadline:
                return None
            time.sleep(0.05)


def first_analysis_line(engine: Engine, colour: str) -> float:
    """Seconds from sending ``lz-analyze`` to its first ``info`` line; the analysis is then stopped."""
    sent = time.perf_counter()
    engine.send(f"lz-analyze {colour} 10")
    header = engine.proc.stdout.readline()
    if not header.startswith("="):
        raise RuntimeError(f"lz-analyze: {header.strip()}")
    while True:
        line = engine.proc.stdout.readline()
        if line.startswith("info "):
            seconds = time.perf_counter() - sent
            break
        if line in ("", "\n"):
            raise RuntimeError("lz-analyze ended without a report")
    engine.send("name")  # stops the analysis
    while engine.proc.stdout.readline() != "\n":
        pass
    engine.response()
    return seconds


def run_once(size: int, playouts: int | None, mode: str, cache: str, warmup: bool, cache_dir: str,
             extra: list[str]) -> dict:
    """One session (see the module docstring) -> its JSON record."""
    env = dict(os.environ, JAXGO_CACHE_DIR=cache_dir)
    env.pop("JAXGO_NO_CACHE", None)
    args = ["--size", str(size)] + (["--playouts", str(playouts)] if playouts else []) + extra
    args += [] if warmup else ["--no-warmup"]
    engine = Engine(args, env)
    centre = "ABCDEFGHJKLMNOPQRST"[size // 2] + str(size // 2 + 1)
    corner = "ABCDEFGHJKLMNOPQRST"[1] + str(2)
    record = {"benchmark": "gtp", "size": size, "playouts": playouts, "mode": mode, "cache": cache,
              "warmup": warmup}
    for command in START_SCRIPT:
        text = command.format(size=size, first=centre, second=corner)
        engine.send(text)
        response, at = engine.response()
        if not response.startswith("="):
            raise RuntimeError(f"{text}: {response.strip()}")
        key = {"name": "name_s", "list_commands": "list_commands_s"}.get(text)
        key = key or ("first_play_s" if text.startswith("play b") else None)
        if key:
            record[key] = round(at, 3)
    if mode == "after_warmup" and warmup:
        engine.wait_stderr("warm-up: search ready")
    _, genmove_s = engine.ask("genmove b")
    record["genmove_s"] = round(genmove_s, 3)
    record["genmove_from_start_s"] = round(time.perf_counter() - engine.start, 3)
    for phase in ("rules", "search"):
        at = engine.wait_stderr(f"warm-up: {phase} ready", timeout=0.0) if warmup else None
        record[f"warmup_{phase}_s"] = round(at, 3) if at is not None else None
    record["first_analysis_line_s"] = round(first_analysis_line(engine, "w"), 3)
    other = 9 if size != 9 else 19
    for command in (f"boardsize {other}", "clear_board", f"play b {'ABCDEFGHJKLMNOPQRST'[other // 2]}{other // 2 + 1}"):
        engine.ask(command)
    record["other_size"] = other
    record["first_analysis_after_size_change_s"] = round(first_analysis_line(engine, "w"), 3)
    quit_sent = time.perf_counter()
    engine.send("quit")
    engine.response()
    status = engine.proc.wait(timeout=120)  # stdin is still open, as a GUI leaves it
    record["quit_s"] = round(time.perf_counter() - quit_sent, 3)
    record["exit_status"] = status
    engine.proc.stdin.close()
    record["fatal_errors"] = [text for _, text in engine.stderr if "Fatal" in text or "terminate called" in text]
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo bench gtp", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, nargs="+", default=[9, 19], help="board sizes (default 9 19)")
    parser.add_argument("--playouts", type=int, default=None,
                        help=f"playouts per genmove (default: the engine's default, {DEFAULT_PLAYOUTS})")
    parser.add_argument("--modes", nargs="+", choices=("at_once", "after_warmup"),
                        default=["at_once", "after_warmup"], help="when genmove is sent (default both)")
    parser.add_argument("--warm-runs", type=int, default=1, help="runs with the filled cache per mode (default 1)")
    parser.add_argument("--no-warmup", action="store_true", help="measure without the warm-up thread")
    args = parser.parse_args(argv)
    print(json.dumps({"benchmark": "gtp", "machine": platform.machine(), "cpus": os.cpu_count(),
                      "python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}),
          flush=True)
    for size in args.size:
        with tempfile.TemporaryDirectory(prefix="jaxgo-bench-cache-") as cache_dir:
            runs = [("at_once" if "at_once" in args.modes else args.modes[0], "cold")]
            runs += [(mode, "warm") for mode in args.modes for _ in range(args.warm_runs)]
            for mode, cache in runs:
                record = run_once(size, args.playouts, mode, cache, not args.no_warmup, cache_dir, [])
                print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
