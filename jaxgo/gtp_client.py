"""Talking GTP to another engine (GNU Go, a second jaxgo) over a subprocess's stdin/stdout."""

from __future__ import annotations

import os
import shutil
import subprocess


class GtpFailure(RuntimeError):
    """The engine answered ``? message``."""


def find_gnugo() -> str | None:
    """Path of the gnugo binary (Debian installs it in /usr/games, often not on PATH), or None."""
    found = shutil.which("gnugo")
    if found:
        return found
    return "/usr/games/gnugo" if os.access("/usr/games/gnugo", os.X_OK) else None


class GtpProcess:
    """One engine process; ``send`` writes a command and returns the reply text without ``=``."""

    def __init__(self, argv: list[str]):
        self.argv = argv
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def send(self, command: str) -> str:
        """Send one command; return the reply body, raise GtpFailure on ``?``."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command.strip() + "\n")
        self.process.stdin.flush()
        lines = []
        while True:
            line = self.process.stdout.readline()
            if line == "":
                raise GtpFailure(f"{self.argv[0]} exited while answering {command!r}")
            line = line.rstrip("\r\n")
            if line == "" and lines:
                break
            if line or lines:
                lines.append(line)
        status, body = lines[0][:1], "\n".join([lines[0][1:].lstrip()] + lines[1:])
        if status == "?":
            raise GtpFailure(body)
        if status != "=":
            raise GtpFailure(f"malformed reply {lines!r}")
        return body.strip()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("quit")
            except (GtpFailure, BrokenPipeError, OSError):
                pass
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()

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
    engine.send(f"boardsize {size}")
    engine.send("clear_board")
    engine.send(f"komi {komi}")
    return engine
