"""Transports for the JSON-lines protocol: stdin/stdout, TCP on 127.0.0.1, Unix socket.

Every connection is one ``engine.Client``: its request lines go to ``AnalysisEngine.submit`` from the reading
thread; responses are written by the client's own writer thread, so a slow or dead connection never blocks the
device thread or other clients.  At end of input the connection waits until its queries are answered (KataGo's
stdin behaviour; a half-closed socket still gets its answers); a peer that is gone is noticed at the next write
and its remaining queries are dropped.  Lines longer than ``protocol.MAX_LINE_BYTES`` are answered with an
error object and skipped.
"""

from __future__ import annotations

import os
import socket
import socketserver
import sys
import threading

from jaxgo.server.engine import AnalysisEngine, Client
from jaxgo.server.protocol import MAX_LINE_BYTES


def read_lines(rfile, limit: int = MAX_LINE_BYTES):
    """Request lines (bytes) from a binary stream; an oversized line is yielded cut at ``limit + 1`` bytes
    (which the protocol rejects) and the rest of it is skipped."""
    while True:
        try:
            line = rfile.readline(limit + 1)
        except (OSError, ValueError):
            return
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while True:
                try:
                    more = rfile.readline(limit + 1)
                except (OSError, ValueError):
                    return
                if not more or more.endswith(b"\n"):
                    break
        yield line


def serve_stream(engine: AnalysisEngine, rfile, write, name: str = "", wait_timeout: float | None = None) -> Client:
    """Serve one connection: submit every line of ``rfile``; at EOF wait for the answers (or the peer's end)."""
    client = Client(write, name, on_close=engine.client_closed)
    try:
        for line in read_lines(rfile):
            if client.closed.is_set():
                break
            engine.submit(client, line)
        client.wait_idle(wait_timeout)
    finally:
        if not client.closed.is_set():
            client.close()
        engine.client_closed(client)
    return client


def serve_stdio(engine: AnalysisEngine, stdin=None, stdout=None) -> None:
    """KataGo-style: queries on stdin, results on stdout; at EOF finish every query, then return."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    lock = threading.Lock()

    def write(line: str) -> None:
        with lock:
            stdout.write(line + "\n")
            stdout.flush()

    serve_stream(engine, stdin, write, "stdio")


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        sock = self.connection

        def write(line: str) -> None:
            sock.sendall(line.encode("utf-8") + b"\n")

        serve_stream(self.server.engine, self.rfile, write, f"sock-{self.client_address!r}")

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass


class TcpServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256  # many front ends may connect at once

    def __init__(self, engine: AnalysisEngine, port: int, host: str = "127.0.0.1"):
        self.engine = engine
        super().__init__((host, port), _Handler)

    def handle_error(self, request, client_address) -> None:  # a broken connection is not the server's problem
        print(f"jaxgo serve: connection {client_address!r}: {sys.exc_info()[1]!r}", file=sys.stderr)


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = 256  # a full Unix backlog refuses connections (EAGAIN) instead of queueing them

    def __init__(self, engine: AnalysisEngine, path: str):
        self.engine = engine
        self.path = path
        if os.path.exists(path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(path)
            except OSError:
                os.unlink(path)  # a stale socket file from a dead server
            else:
                probe.close()
                raise OSError(f"{path}: another server is listening there")
        super().__init__(path, _Handler)

    def handle_error(self, request, client_address) -> None:
        print(f"jaxgo serve: unix connection: {sys.exc_info()[1]!r}", file=sys.stderr)

    def server_close(self) -> None:
        super().server_close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


def start_in_thread(server) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True,
                              name=type(server).__name__)
    thread.start()
    return thread


def parse_address(address: str):
    """``tcp:HOST:PORT``, ``HOST:PORT``, ``PORT`` or ``unix:PATH`` (a path with a slash also means Unix) ->
    (family, address) for ``socket.socket`` / ``connect``."""
    text = address.strip()
    if text.startswith("unix:"):
        return socket.AF_UNIX, text[5:]
    if "/" in text and not text.startswith("tcp:"):
        return socket.AF_UNIX, text
    if text.startswith("tcp:"):
        text = text[4:]
    host, _, port = text.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"bad server address {address!r} (tcp:HOST:PORT, PORT or unix:PATH)")
    return socket.AF_INET, (host or "127.0.0.1", int(port))
