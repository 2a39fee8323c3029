"""``Client``: the sending side of one connection to the analysis engine, with its own writer thread."""

from __future__ import annotations

import itertools
import queue
import threading
import time

from jaxgo.server import responses


class Client:
    """The sending side of one connection: ``send(obj)`` queues a response; a writer thread writes it.

    ``write(line)`` is called with one JSON line (no newline) on the writer thread; an OSError or ValueError
    from it marks the client closed and calls ``on_close``.  ``outstanding`` counts requests not yet answered
    (queries until their last turn, actions until their acknowledgement is queued), so a connection that ends
    waits for every answer before it closes.

    Output is bounded: ``backlog`` counts the responses queued and not yet written.  While it is above
    ``report_backlog`` the client is *congested*: the engine builds no during-search reports for it (final
    responses still go out), and a transport stops reading its requests while it is above
    ``read_backlog`` (``wait_writable``), so a client that does not read its replies cannot make the server
    queue more for it.  Above ``max_backlog`` (only reachable by a client that sent that many queries before it
    stopped reading) the client is dropped with a logged reason (``close_reason``).
    """

    _ids = itertools.count()
    report_backlog = 4  # responses waiting to be written above which during-search reports are skipped
    read_backlog = 64  # ... above which a transport stops reading this client's requests
    max_backlog = 4096  # ... above which the client is dropped

    def __init__(self, write, name: str = "", on_close=None):
        self.name = name or f"client-{next(self._ids)}"
        self._write = write
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self.closed = threading.Event()
        self.on_close = on_close
        self.close_reason: str | None = None
        self.outstanding = 0
        self.backlog = 0
        self.reports_skipped = 0
        self._lock = threading.Lock()
        self.idle = threading.Condition(self._lock)
        self._drained = threading.Condition(threading.Lock())
        self._thread = threading.Thread(target=self._run, name=f"writer-{self.name}", daemon=True)
        self._thread.start()

    KEEPALIVE = object()  # queued by keepalive(): an empty line

    def send(self, obj: dict) -> None:
        if self.closed.is_set():
            return
        with self._drained:
            self.backlog += 1
            over = self.backlog > self.max_backlog
        if over:
            self.mark_closed(f"{self.backlog} responses waiting to be written: the client does not read them")
            return
        self._queue.put(obj)

    @property
    def congested(self) -> bool:
        """Whether responses are piling up unwritten (the peer reads slowly or not at all)."""
        return self.backlog > self.report_backlog

    def wait_writable(self, timeout: float | None = None) -> bool:
        """Block while more than ``read_backlog`` responses wait to be written (the transport's read loop calls
        this before reading the next request).  False when ``timeout`` ran out first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._drained:
            while self.backlog > self.read_backlog and not self.closed.is_set():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._drained.wait(0.25 if left is None else min(left, 0.25))
        return True

    def keepalive(self) -> None:
        """Queue an empty line: a socket whose peer is gone fails on it (TCP at the second one, after the
        peer's reset), which is how a client that left without reading its answers is noticed."""
        if not self.closed.is_set():
            self._queue.put(self.KEEPALIVE)

    def _run(self) -> None:
        while True:
            obj = self._queue.get()
            if obj is None:
                return
            if not self.closed.is_set():
                try:
                    self._write("" if obj is self.KEEPALIVE else responses.dumps(obj))
                except Exception as exc:  # a broken or stalled connection (OSError), a failing writer: gone
                    self.mark_closed(f"write failed: {exc!r}")
            if obj is not self.KEEPALIVE:
                with self._drained:
                    self.backlog -= 1
                    self._drained.notify_all()

    def mark_closed(self, reason: str | None = None) -> None:
        if not self.closed.is_set():
            self.close_reason = reason
            self.closed.set()
            with self._drained:
                self._drained.notify_all()
            if self.on_close is not None:
                self.on_close(self)

    def close(self, flush_timeout: float = 5.0) -> None:
        """Stop the writer after the queued responses are written (at most ``flush_timeout`` seconds)."""
        self._queue.put(None)
        self._thread.join(flush_timeout)

    def add_outstanding(self, delta: int) -> None:
        with self._lock:
            self.outstanding += delta
            if self.outstanding <= 0:
                self.idle.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every query of this client is answered (or the client closed)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self.outstanding > 0 and not self.closed.is_set():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.idle.wait(0.1 if left is None else min(left, 0.1))
        return True
