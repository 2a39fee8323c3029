"""A small client for ``jaxgo serve`` sockets: send queries, receive responses by id (used by the GTP front
end, the benchmark, ``jaxgo analyze --server`` and the tests).

A reader thread files every response line under its ``id``; ``query(obj)`` sends one request and returns a
``Stream`` whose ``get()`` yields that query's responses in order until its last turn is answered.
"""

from __future__ import annotations

import itertools
import json
import queue
import socket
import threading
import time

from jaxgo.server.transports import parse_address


class ServerClosed(ConnectionError):
    pass


class Stream:
    """The responses to one query (``turns`` final responses expected)."""

    def __init__(self, client: "ServerClient", ident: str, turns: int):
        self.client, self.id, self.turns = client, ident, turns
        self.queue: queue.Queue = queue.Queue()

    def get(self, timeout: float | None = None) -> dict:
        item = self.queue.get(timeout=timeout)
        if item is None:
            raise ServerClosed("server connection closed")
        return item

    def results(self, timeout: float | None = None) -> list[dict]:
        """All final responses (errors included), in arrival order."""
        out = []
        while len([r for r in out if _is_final(r)]) < self.turns:
            response = self.get(timeout)
            out.append(response)
            if "error" in response:
                break
        return [r for r in out if _is_final(r) or "error" in r]

    def terminate(self) -> None:
        self.client.send({"id": f"{self.id}-stop", "action": "terminate", "terminateId": self.id})


def _is_final(response: dict) -> bool:
    return "turnNumber" in response and not response.get("isDuringSearch", False)


class ServerClient:
    """One connection to a ``jaxgo serve`` socket (``tcp:HOST:PORT``, ``PORT`` or ``unix:PATH``).  When the
    server has closed it (``jaxgo serve --idle-timeout``: a GTP front end waiting for a human's move), the next
    request connects again."""

    def __init__(self, address: str, timeout: float = 10.0):
        self.address, self.timeout = address, timeout
        self._lock = threading.Lock()
        self._streams: dict[str, Stream] = {}
        self._other: queue.Queue = queue.Queue()  # responses without a known id (actions, stray errors)
        self._ids = itertools.count()
        self._shut = False  # close() was called: no new connection
        self._connect()

    def _connect(self) -> None:
        """Open the socket and start its reader thread (ConnectionError, OSError when the server is not there)."""
        family, target = parse_address(self.address)
        timeout = self.timeout
        deadline = time.monotonic() + timeout
        while True:  # a Unix socket with a full accept backlog answers EAGAIN: retry until the timeout
            self.sock = socket.socket(family, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            try:
                self.sock.connect(target)
                break
            except (BlockingIOError, InterruptedError):
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.sock.settimeout(None)
        self._file = self.sock.makefile("rb")
        self.closed = False
        self._reader = threading.Thread(target=self._read, args=(self._file,), daemon=True, name="server-client")
        self._reader.start()

    def _read(self, file) -> None:
        try:
            for line in file:
                try:
                    response = json.loads(line)
                except ValueError:
                    continue
                stream = self._streams.get(str(response.get("id")))
                (stream.queue if stream is not None else self._other).put(response)
        except (OSError, ValueError):
            pass
        self.closed = True
        for stream in list(self._streams.values()):
            stream.queue.put(None)
        self._other.put(None)

    def send(self, obj: dict) -> None:
        data = (json.dumps(obj) + "\n").encode("utf-8")
        with self._lock:
            if self.closed and not self._shut:  # the server closed an idle connection: open a new one
                self._reader.join(5.0)
                self.sock.close()
                self._other = queue.Queue()  # the old connection's end marker stays with the old queue
                self._connect()
            self.sock.sendall(data)

    def query(self, obj: dict) -> Stream:
        """Send an analysis query (an ``id`` is made up when missing); its responses arrive on the Stream."""
        obj = dict(obj)
        ident = str(obj.setdefault("id", f"q{next(self._ids)}"))
        turns = len(set(obj.get("analyzeTurns", [0])))
        stream = Stream(self, ident, turns)
        self._streams[ident] = stream
        self.send(obj)
        return stream

    def other(self, timeout: float | None = None) -> dict:
        item = self._other.get(timeout=timeout)
        if item is None:
            raise ServerClosed("server connection closed")
        return item

    def close(self) -> None:
        self._shut = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class LocalConnection:
    """The ``ServerClient`` interface over an in-process ``AnalysisEngine`` (GTP analysis without a server)."""

    def __init__(self, engine=None):
        from jaxgo.server.connection import Client
        from jaxgo.server.engine import AnalysisEngine
        from jaxgo.server.engine_config import EngineConfig

        self.engine = engine if engine is not None else AnalysisEngine(EngineConfig()).start()
        self._streams: dict[str, Stream] = {}
        self._other: queue.Queue = queue.Queue()
        self._ids = itertools.count()
        self.closed = False
        self.client = Client(self._deliver, "local")

    def _deliver(self, line: str) -> None:
        response = json.loads(line)
        stream = self._streams.get(str(response.get("id")))
        (stream.queue if stream is not None else self._other).put(response)

    def send(self, obj: dict) -> None:
        self.engine.submit(self.client, json.dumps(obj))

    def query(self, obj: dict) -> Stream:
        obj = dict(obj)
        ident = str(obj.setdefault("id", f"local{next(self._ids)}"))
        stream = Stream(self, ident, len(set(obj.get("analyzeTurns", [0]))))
        self._streams[ident] = stream
        self.send(obj)
        return stream

    def other(self, timeout: float | None = None) -> dict:
        return self._other.get(timeout=timeout)

    def close(self) -> None:
        self.client.close()
