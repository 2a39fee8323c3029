"""``jaxgo serve --http PORT``: a small local web board over the analysis engine (stdlib http.server).

Routes:
    GET  /                 the page (``static/index.html`` + ``static/board.js``)
    GET  /static/NAME      static files
    GET  /api/stream?q=Q   Q is a URL-encoded JSON analysis query; the responses come back as server-sent
                           events (one ``data:`` line each), then ``event: done``.  Closing the stream (the
                           page's EventSource) drops the query in the engine at once: the handler watches the
                           socket for the browser's close and sends an SSE comment (``: keepalive``) every
                           ``KEEPALIVE_SECONDS`` while no response is due.
    POST /api/query        a JSON query in the body; the final responses as a JSON list
    POST /api/sgf          SGF text in the body -> {"size", "komi", "initialStones", "initialPlayer", "moves"}
                           (at most ``MAX_BODY`` bytes, ``jaxgo.go.sgf.MAX_SGF_NODES`` nodes and ``MAX_SGF_MOVES``
                           main-line moves: a larger record is refused before it is parsed)
    GET  /api/version      the query_version answer
    GET  /favicon.ico      204 No Content (browsers ask for it)

Hostile clients: a whole request (request line, headers and body) must arrive within ``--stall-timeout``
seconds of its first read -- a deadline per request, not per read, so a client that sends one header line a
second (slowloris) is cut off at the deadline.  Beyond ``--max-connections`` a new connection is answered
``503 Service Unavailable`` with a JSON body (read for at most ``REFUSAL_SECONDS``, on a bounded number of
short-lived threads; beyond ``MAX_REFUSING`` at once it is closed at once).
"""

from __future__ import annotations

import io
import json
import os
import queue
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from jaxgo.go.coords import BLACK, WHITE, colour_letter, gtp_moves
from jaxgo.server import protocol
from jaxgo.server.connection import Client
from jaxgo.server.engine import AnalysisEngine
from jaxgo.server.transports import KEEPALIVE_SECONDS, ConnectionLimits, ConnectionTracking, peer_closed

STATIC_DIR = os.path.join(os.path.dirname(__file__), "static")
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".png": "image/png"}
MAX_BODY = 4 << 20
REFUSAL_SECONDS = 1.0  # how long a refused connection's request may take to arrive before its 503
MAX_REFUSING = 32  # refusals answered at once; more connections beyond the cap are closed without a reply


class DeadlineReader(io.RawIOBase):
    """A socket's input with a deadline for the whole request: each read waits at most until ``deadline``
    (``time.monotonic()``; None: ``idle`` seconds per read) and raises TimeoutError after it.  The socket's
    timeout is set back to ``idle`` after each read, so writes keep their own stall timeout."""

    def __init__(self, sock, idle: float):
        self.sock = sock
        self.idle = idle
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        wait = self.idle if self.deadline is None else self.deadline - time.monotonic()
        if wait <= 0:
            raise TimeoutError("the request did not arrive within its deadline")
        self.sock.settimeout(wait)
        try:
            return self.sock.recv_into(buffer)
        finally:
            self.sock.settimeout(self.idle)


def sgf_to_query_fields(text: bytes) -> dict:
    """SGF bytes -> the position fields of an analysis query (GTP vertices)."""
    from jaxgo.go.sgf import load_sgf

    record = load_sgf(text)
    size = record.size
    return {
        "size": size, "komi": record.komi,
        "initialStones": gtp_moves([(BLACK, p) for p in record.setup_black]
                                   + [(WHITE, p) for p in record.setup_white], size),
        "initialPlayer": colour_letter(record.first_to_play()),
        "moves": record.gtp_moves(),
    }


def recv_before(sock, deadline: float) -> bytes:
    """Up to 4 KiB from ``sock``, waiting at most until ``deadline``; b"" at end of input, on an error or after
    the deadline."""
    wait = deadline - time.monotonic()
    if wait <= 0:
        return b""
    try:
        sock.settimeout(wait)
        return sock.recv(4096)
    except OSError:
        return b""


class _Handler(BaseHTTPRequestHandler):
    server_version = "jaxgo-serve"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args) -> None:  # quiet: the engine logs what matters
        pass

    def setup(self) -> None:
        """A whole request must arrive within ``stall_seconds`` of its first read (a half-sent or trickled
        request does not hold its thread), and a write that makes no progress that long ends the connection
        (a page that stopped reading its stream)."""
        self.timeout = self.server.limits.stall_seconds
        super().setup()
        self._reader = DeadlineReader(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        self._reader.deadline = time.monotonic() + self.server.limits.stall_seconds
        try:
            super().handle_one_request()
        finally:
            self._reader.deadline = None

    # -- helpers ----------------------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj).encode("utf-8"))

    def _body(self) -> bytes | None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._json(413, protocol.error_object("request body missing or too large"))
            return None
        return self.rfile.read(length)

    # -- routes -----------------------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        url = urllib.parse.urlsplit(self.path)
        if url.path in ("/", "/index.html"):
            return self._static("index.html")
        if url.path.startswith("/static/"):
            return self._static(url.path[len("/static/"):])
        if url.path == "/api/version":
            from jaxgo import __version__

            return self._json(200, {"version": __version__, "protocol": "katago-analysis-json"})
        if url.path == "/api/stream":
            params = urllib.parse.parse_qs(url.query)
            return self._stream(params.get("q", [""])[0])
        if url.path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        self._json(404, protocol.error_object("not found"))

    def do_POST(self) -> None:  # noqa: N802
        url = urllib.parse.urlsplit(self.path)
        body = self._body()
        if body is None:
            return
        if url.path == "/api/sgf":
            from jaxgo.go.sgf import SGFError

            try:
                return self._json(200, sgf_to_query_fields(body))
            except (SGFError, ValueError) as exc:
                return self._json(400, protocol.error_object(f"cannot read SGF: {exc}", "sgf"))
        if url.path == "/api/query":
            return self._query(body)
        self._json(404, protocol.error_object("not found"))

    def _static(self, name: str) -> None:
        path = os.path.normpath(os.path.join(STATIC_DIR, name))
        if not path.startswith(STATIC_DIR + os.sep) or not os.path.isfile(path):
            return self._json(404, protocol.error_object("not found"))
        with open(path, "rb") as handle:
            data = handle.read()
        self._send(200, data, CONTENT_TYPES.get(os.path.splitext(path)[1], "application/octet-stream"))

    def _collect(self, text, on_response) -> Client:
        """Submit one query line for a fresh client whose responses go to ``on_response``."""
        client = Client(on_response, "http", on_close=self.server.engine.client_closed)
        self.server.engine.submit(client, text)
        return client

    def _query(self, body: bytes) -> None:
        responses: queue.Queue = queue.Queue()
        client = self._collect(body, lambda line: responses.put(json.loads(line)))
        deadline = time.monotonic() + 600
        while not client.wait_idle(KEEPALIVE_SECONDS) and time.monotonic() < deadline:
            if peer_closed(self.connection):
                client.mark_closed()  # the caller went away: drop its query
        client.close()
        out = []
        while not responses.empty():
            out.append(responses.get())
        self._json(200, out)

    def _stream(self, text: str) -> None:
        """Server-sent events: the client's writer thread writes each response to the socket itself, so a page
        that stops reading makes the client congested (no more reports for it) and, after ``stall_seconds``
        without progress, dropped -- nothing piles up in between."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        lock = threading.Lock()

        def write(line: str) -> None:
            event = b"data: " + line.encode("utf-8") + b"\n\n" if line else b": keepalive\n\n"  # SSE comment
            with lock:
                self.wfile.write(event)
                self.wfile.flush()

        client = self._collect(text, write)
        while not client.wait_idle(KEEPALIVE_SECONDS):
            if peer_closed(self.connection):
                client.mark_closed()  # the page closed the stream: drop its query at once
                break
            client.keepalive()
        client.close(flush_timeout=self.server.limits.stall_seconds)
        if not client.closed.is_set():
            try:
                write_done = b"event: done\ndata: {}\n\n"
                with lock:
                    self.wfile.write(write_done)
                    self.wfile.flush()
            except OSError:
                pass


class WebServer(ConnectionTracking, ThreadingHTTPServer):
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, engine: AnalysisEngine, port: int, host: str = "127.0.0.1",
                 limits: ConnectionLimits | None = None, log=None):
        self.engine = engine
        self.init_tracking(limits, log)
        self._refusing = threading.BoundedSemaphore(MAX_REFUSING)
        super().__init__((host, port), _Handler)

    def refuse(self, request, text: str) -> None:
        """Answer a connection beyond the cap with a real HTTP ``503`` (after reading its request for at most
        ``REFUSAL_SECONDS``, so the reply is not lost to a reset), on a short-lived thread."""
        if not self._refusing.acquire(blocking=False):
            self.shutdown_request(request)
            return
        threading.Thread(target=self._refuse_http, args=(request, text), daemon=True, name="refuse").start()

    def _refuse_http(self, request, text: str) -> None:
        body = json.dumps(protocol.error_object(text)).encode("utf-8")
        head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n")
        deadline = time.monotonic() + REFUSAL_SECONDS
        try:
            seen = b""
            while b"\r\n\r\n" not in seen:
                chunk = recv_before(request, deadline)
                if not chunk:
                    break
                seen = (seen + chunk)[-65536:]
            request.settimeout(REFUSAL_SECONDS)
            request.sendall(head.encode("ascii") + body)
            request.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + REFUSAL_SECONDS
            while recv_before(request, deadline):  # lingering close: the reply is not lost to a reset
                pass
        except OSError:
            pass
        finally:
            self.shutdown_request(request)
            self._refusing.release()

    def handle_error(self, request, client_address) -> None:
        """A browser that leaves early (broken pipe, reset) is normal: no traceback; other errors: one line."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            print(f"jaxgo serve: web request from {client_address!r}: {error!r}", file=sys.stderr)
