"""Transports for the JSON-lines protocol: stdin/stdout, TCP on 127.0.0.1, Unix socket.

Every connection is one ``connection.Client``: its request lines go to ``AnalysisEngine.submit`` from the reading
thread; responses are written by the client's own writer thread, so a slow or dead connection never blocks the
device thread or other clients.  At end of input the connection waits until every request is answered --
queries and action acknowledgements alike (KataGo's stdin behaviour; a half-closed socket still gets all its
answers) -- and the writer flushes them before the connection closes.

A socket peer that closed (or crashed) looks like a half-close from here: both end our input.  So while a
socket connection waits at end of input it writes an empty line every ``KEEPALIVE_SECONDS``: a half-closed peer
reads and skips it (JSON-lines readers skip blank lines; ``jaxgo.server.client`` does), a vanished peer answers
with a reset and the next write fails, which cancels the connection's searches at once instead of at their
next response.  Lines longer than ``protocol.MAX_LINE_BYTES`` are answered with an error object and skipped.

Servers track their connections: ``server_close`` shuts every open connection down and joins its thread, so a
stopped server leaves no thread behind.

Limits (``ConnectionLimits``, ``jaxgo serve --max-connections / --idle-timeout / --stall-timeout``): beyond
``max_connections`` open connections a new one gets one error line and is closed; a connection with nothing
outstanding that sends nothing for ``idle_seconds`` is closed; a write that makes no progress for
``stall_seconds`` (a peer that does not read its replies) drops the connection and its searches.  Backpressure:
a connection's requests are read only while few of its responses wait to be written (``Client.wait_writable``),
so a client that never reads cannot make the server queue more and more for it; while its responses wait it
gets no during-search reports (``Client.congested``).  Every such close is logged with its reason.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import socket
import socketserver
import stat
import sys
import threading
import time
from typing import TYPE_CHECKING

from jaxgo.server.protocol import MAX_LINE_BYTES

if TYPE_CHECKING:  # the engine and the responses import JAX; `jaxgo serve --help` must not
    from jaxgo.server.connection import Client
    from jaxgo.server.engine import AnalysisEngine

KEEPALIVE_SECONDS = 0.25  # empty-line probe period while a socket connection waits for answers at end of input
READ_TICK_SECONDS = 1.0  # how often a reading connection looks at its idle time


@dataclasses.dataclass(frozen=True)
class ConnectionLimits:
    """Per-server connection limits (``jaxgo serve`` options)."""

    max_connections: int = 128  # open connections (each holds two threads); more are refused with an error line
    idle_seconds: float = 1800.0  # a connection with no request outstanding and no input this long is closed
    stall_seconds: float = 30.0  # a write that makes no progress this long: the peer is not reading; dropped

    def __post_init__(self):
        if self.max_connections < 1 or self.idle_seconds <= 0 or self.stall_seconds <= 0:
            raise ValueError("connection limits must be positive")


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


def socket_lines(sock, client: Client, idle_seconds: float, limit: int = MAX_LINE_BYTES, log=None):
    """Request lines (bytes) from a connected socket, read only while ``client`` can take more answers
    (``Client.wait_writable``: TCP flow control then holds a client that does not read its replies).  Ends at
    end of input, on an error, when ``client`` is closed, or after ``idle_seconds`` without input while the
    client has nothing outstanding.  An oversized line is yielded cut at ``limit + 1`` bytes (which the
    protocol rejects) and the rest of it skipped."""
    buffer = bytearray()
    skipping = False
    last_input = time.monotonic()
    while not client.closed.is_set():
        client.wait_writable()
        try:
            readable, _, _ = select.select([sock], [], [], READ_TICK_SECONDS)
            data = sock.recv(65536) if readable else None
        except (OSError, ValueError):
            return
        if data is None:
            if client.outstanding <= 0 and time.monotonic() - last_input >= idle_seconds:
                if log is not None:
                    print(f"jaxgo serve: {client.name} closed: idle for {idle_seconds:g} s", file=log, flush=True)
                return
            continue
        if not data:
            if buffer and not skipping:
                yield bytes(buffer)
            return
        last_input = time.monotonic()
        buffer += data
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                break
            line = bytes(buffer[:end + 1])
            del buffer[:end + 1]
            if skipping:
                skipping = False
            else:
                yield line
        if len(buffer) > limit and not skipping:
            yield bytes(buffer[:limit + 1])
            skipping = True
        if skipping:
            buffer.clear()


def serve_socket(engine: AnalysisEngine, sock, name: str, limits: "ConnectionLimits", log=None) -> Client:
    """Serve one socket connection (TCP or Unix) under ``limits``: requests read with backpressure, replies
    written with a stall timeout, empty keep-alive lines while it waits for answers at end of input."""
    from jaxgo.server.connection import Client

    sock.settimeout(limits.stall_seconds)  # sendall: no progress for this long raises (the peer is not reading)
    lock = threading.Lock()

    def write(line: str) -> None:
        data = line.encode("utf-8") + b"\n"
        with lock:
            try:
                sock.sendall(data)
            except socket.timeout:
                raise TimeoutError(f"the peer read none of its replies for {limits.stall_seconds:g} s") from None

    client = Client(write, name, on_close=engine.client_closed)
    try:
        for line in socket_lines(sock, client, limits.idle_seconds, log=log):
            engine.submit(client, line)
        wait_answers(client, None, keepalive=True)
    finally:
        client.close(flush_timeout=60.0)
        engine.client_closed(client)
    return client


def serve_stream(engine: AnalysisEngine, rfile, write, name: str = "", wait_timeout: float | None = None,
                 keepalive: bool = False) -> Client:
    """Serve one connection: submit every line of ``rfile``; at EOF wait until every request is answered (or
    the peer is gone: with ``keepalive`` an empty line probes a socket peer every ``KEEPALIVE_SECONDS``), then
    flush the answers and close."""
    from jaxgo.server.connection import Client

    client = Client(write, name, on_close=engine.client_closed)
    try:
        for line in read_lines(rfile):
            client.wait_writable()  # a reader of our output that stalls holds its own requests back
            if client.closed.is_set():
                break
            engine.submit(client, line)
        wait_answers(client, wait_timeout, keepalive)
    finally:
        client.close(flush_timeout=60.0)  # the writer thread writes what is queued, then ends
        engine.client_closed(client)
    return client


def wait_answers(client: Client, timeout: float | None = None, keepalive: bool = False) -> bool:
    """Wait until ``client`` has no request outstanding or is closed; with ``keepalive`` probe the peer with an
    empty line every ``KEEPALIVE_SECONDS``.  Returns False when ``timeout`` ran out first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        step = KEEPALIVE_SECONDS if keepalive else 1.0
        if deadline is not None:
            step = min(step, max(0.0, deadline - time.monotonic()))
        if client.wait_idle(step):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        if keepalive:
            client.keepalive()


def peer_closed(sock) -> bool:
    """Whether the peer of ``sock`` closed its side (for a connection on which it sends nothing more, such as
    an HTTP request being answered): readable with no data, or an error."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


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


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        serve_socket(self.server.engine, self.request, f"sock-{self.client_address!r}", self.server.limits,
                     self.server.log)


class ConnectionTracking:
    """Mixin for threading socket servers: remembers each open connection and its thread; ``server_close``
    shuts the connections down (each reader sees end of input, its searches are cancelled) and joins the
    threads.  The threads stay daemons, so a process that never calls ``server_close`` still exits."""

    daemon_threads = True
    join_timeout = 10.0

    def init_tracking(self, limits: "ConnectionLimits | None" = None, log=None) -> None:
        self._open: dict = {}  # request socket -> its thread
        self._open_lock = threading.Lock()
        self.limits = limits or ConnectionLimits()
        self.log = log
        self.refused = 0

    def process_request(self, request, client_address) -> None:
        """Start a connection's thread, or refuse it (one error line, then close) when ``max_connections``
        are open."""
        with self._open_lock:
            full = len(self._open) >= self.limits.max_connections
        if not full:
            super().process_request(request, client_address)
            return
        self.refused += 1
        text = (f"server busy: {self.limits.max_connections} connections open (jaxgo serve --max-connections)")
        if self.log is not None:
            print(f"jaxgo serve: connection {client_address!r} refused: {text}", file=self.log, flush=True)
        self.refuse(request, text)

    def refuse(self, request, text: str) -> None:
        try:
            request.settimeout(1.0)
            request.sendall((json.dumps({"error": text, "field": None, "id": None}) + "\n").encode("utf-8"))
        except OSError:
            pass
        self.shutdown_request(request)

    def process_request_thread(self, request, client_address) -> None:
        with self._open_lock:
            self._open[request] = threading.current_thread()
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._open_lock:
                self._open.pop(request, None)

    def open_connections(self) -> int:
        with self._open_lock:
            return len(self._open)

    def server_close(self) -> None:
        super().server_close()
        with self._open_lock:
            open_now = list(self._open.items())
        for request, _ in open_now:
            try:
                request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for _, thread in open_now:
            thread.join(self.join_timeout)


class TcpServer(ConnectionTracking, socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    request_queue_size = 256  # many front ends may connect at once

    def __init__(self, engine: AnalysisEngine, port: int, host: str = "127.0.0.1",
                 limits: ConnectionLimits | None = None, log=None):
        self.engine = engine
        self.init_tracking(limits, log)
        super().__init__((host, port), _Handler)

    def handle_error(self, request, client_address) -> None:  # a broken connection is not the server's problem
        print(f"jaxgo serve: connection {client_address!r}: {sys.exc_info()[1]!r}", file=sys.stderr)


class UnixServer(ConnectionTracking, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A Unix-socket listener at ``path``.  Only a socket is ever removed there: a stale socket file of a dead
    server before binding, and our own socket (the same inode) at ``server_close``; any other file at ``path``
    is an OSError that leaves it alone."""

    request_queue_size = 256  # a full Unix backlog refuses connections (EAGAIN) instead of queueing them

    def __init__(self, engine: AnalysisEngine, path: str, limits: ConnectionLimits | None = None, log=None):
        self.engine = engine
        self.path = path
        self.init_tracking(limits, log)
        remove_stale_socket(path)
        super().__init__(path, _Handler)
        self._inode = socket_inode(path)

    def handle_error(self, request, client_address) -> None:
        print(f"jaxgo serve: unix connection: {sys.exc_info()[1]!r}", file=sys.stderr)

    def server_close(self) -> None:
        super().server_close()
        if self._inode is not None and socket_inode(self.path) == self._inode:
            try:
                os.unlink(self.path)
            except OSError:
                pass


def socket_inode(path: str) -> tuple[int, int] | None:
    """(device, inode) of the socket at ``path``; None when there is none (nothing, or not a socket)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISSOCK(info.st_mode) else None


def remove_stale_socket(path: str) -> None:
    """Make room for a new socket at ``path``: remove a socket no server listens on; OSError (nothing
    removed) when a server listens there or when ``path`` is something else than a socket."""
    if not os.path.lexists(path):
        return
    if socket_inode(path) is None:
        raise OSError(f"{path} exists and is not a socket; not replacing it (choose another --unix path)")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)  # a stale socket file from a dead server
    else:
        raise OSError(f"{path}: another server is listening there")
    finally:
        probe.close()


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
