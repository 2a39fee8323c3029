"""Talking GTP to another engine (GNU Go, a second jaxgo, anything) over a subprocess's stdin/stdout.

``GtpProcess`` is the one client used everywhere (match runner, GNU Go labels, tests): a reader thread feeds a
queue of lines so every command has a timeout; ``? message`` raises ``GtpFailure``; a crash, a timeout or a
reply that is not GTP raises ``GtpError``.
"""

from __future__ import annotations

import os
import queue
import shlex
import shutil
import subprocess
import threading
import time


class GtpError(RuntimeError):
    """The engine crashed, timed out or answered something that is not GTP."""


class GtpFailure(RuntimeError):
    """The engine answered ``? message``."""


def find_gnugo() -> str | None:
    """Path of the gnugo binary (Debian installs it in /usr/games, often not on PATH), or None."""
    found = shutil.which("gnugo")
    if found:
        return found
    return "/usr/games/gnugo" if os.access("/usr/games/gnugo", os.X_OK) else None


def pinned_argv(argv: list[str], cpus) -> list[str]:
    """``argv`` started through ``taskset -c CPUS`` (the affinity holds before the program starts any thread);
    ``argv`` unchanged where ``taskset`` is missing.  ValueError for an empty CPU set."""
    cpus = sorted(int(c) for c in cpus)
    if not cpus:
        raise ValueError("an empty CPU set")
    taskset = shutil.which("taskset")
    return [taskset, "-c", ",".join(map(str, cpus)), *argv] if taskset else list(argv)


class GtpProcess:
    """A GTP engine subprocess; ``send`` returns a reply's body (without ``=``) within a per-command timeout.

    ``command`` is a shell-style string or an argv list; the engine's stderr goes to ``stderr`` (default: discarded).
    ``cpus``: run the engine (and every thread it starts) on these CPU numbers only (``taskset``; Linux).
    """

    def __init__(self, command: str | list[str], timeout: float = 120.0, stderr=None, cpus=None):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.command = command if isinstance(command, str) else shlex.join(self.argv)
        self.timeout = timeout
        argv = pinned_argv(self.argv, cpus) if cpus else self.argv
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=stderr if stderr is not None else subprocess.DEVNULL, text=True,
                                        bufsize=1, errors="replace")
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(None)

    def send(self, command: str, timeout: float | None = None) -> str:
        """The reply body of one command; GtpFailure on ``?``, GtpError on crash, timeout or garbage."""
        try:
            self.process.stdin.write(command.strip() + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise GtpError(f"cannot write to engine{self._exit_status()}: {exc}") from None
        deadline = time.monotonic() + (timeout or self.timeout)
        lines = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise GtpError(f"timeout answering {command!r}") from None
            if line is None:
                self.lines.put(None)  # stay at end of stream for later calls
                raise GtpError(f"engine exited{self._exit_status()} while answering {command!r}")
            if not lines and line == "":
                continue
            if line == "":
                break
            lines.append(line)
        first = lines[0]
        if first[:1] not in ("=", "?"):
            raise GtpError(f"garbled reply {first[:80]!r} to {command!r}")
        body = "\n".join([first[1:].lstrip()] + lines[1:]).strip()
        if first[0] == "?":
            raise GtpFailure(body)
        return body

    def exit_status(self, wait: float = 0.0) -> int | None:
        """The engine's exit status once it has ended on its own, else None; ``wait``: seconds it is given to finish
        exiting (its output has closed, say)."""
        if wait <= 0:
            return self.process.poll()
        try:
            return self.process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def _exit_status(self) -> str:
        """" (status N)" once the process has ended, with a hint for 126 and 127 (``taskset`` or a shell could
        not run the program), else ""."""
        status = self.exit_status(wait=1.0)
        if status is None:
            return ""
        hint = f": cannot run {self.argv[0]!r}" if status in (126, 127) else ""
        return f" (status {status}{hint})"

    def try_send(self, command: str, timeout: float | None = None) -> str | None:
        """``send``, with None instead of an exception."""
        try:
            return self.send(command, timeout)
        except (GtpError, GtpFailure):
            return None

    def set_position(self, size: int, komi: float, moves=()) -> None:
        """``boardsize``, ``clear_board`` and ``komi``, then ``play COLOUR VERTEX`` for each (colour, vertex) of
        ``moves`` (GTP text: "B"/"W" or "black"/"white", "D4"/"pass"); GtpFailure names the first refused one."""
        for command in (f"boardsize {size}", "clear_board", f"komi {komi}"):
            self.send(command)
        for colour, vertex in moves:
            self.send(f"play {colour} {vertex}")

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
                self.process.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def gnugo(size: int, komi: float, chinese_rules: bool = True, level: int = 10) -> GtpProcess:
    """A GNU Go GTP process set up for an N x N game."""
    binary = find_gnugo()
    if binary is None:
        raise FileNotFoundError("gnugo not found (install it with: apt-get install -y gnugo)")
    argv = [binary, "--mode", "gtp", "--level", str(level)]
    if chinese_rules:
        argv.append("--chinese-rules")
    engine = GtpProcess(argv)
    engine.set_position(size, komi)
    return engine
