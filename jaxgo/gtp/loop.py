"""The GTP read loop: commands in, responses out, streamed analysis, interrupts and a clean end.

``serve(engine, rfile, out)`` answers each input line with ``engine.handle(line)`` (a
``jaxgo.gtp.protocol.Dispatcher``).  When a handler left an ``AnalysisStream`` in
``engine.session.analysis.stream`` the response is written as a ``protocol.StreamedReply``: ``=[id]``, the
stream's lines until the next input line arrives (interruptible streams) or the stream ends, then the empty
line ending the response.  Undecodable bytes are replaced, so a stray byte never ends the session; a line
longer than ``MAX_LINE`` bytes is cut.

Input.  A real file descriptor (stdin of ``jaxgo gtp``) is read on the calling thread with ``select`` and
``os.read``: no reader thread, so nothing can hold the stdin lock at interpreter shutdown (a daemon reader
thread made every ``quit`` abort with SIGABRT).  Other file objects (tests) are read by a helper thread that
ends at their end of input.  GoGui's interrupt line ``# interrupt`` is taken out of the input when a running
search asks (``session.interrupted``).

The end.  ``quit``, the end of input, a broken output pipe, SIGTERM and SIGINT (``install_signal_handlers``)
all end the loop the same way: the running stream is closed, ``session.close()`` stops the warm-up and the
in-process analysis engine, and ``serve`` returns 0.
"""

from __future__ import annotations

import collections
import os
import select
import signal
import threading

from jaxgo.gtp.protocol import StreamedReply

MAX_LINE = 1 << 16  # a longer GTP line is cut (the rest is read and dropped)
READ_CHUNK = 1 << 16
INTERRUPT_LINE = "# interrupt"


class Shutdown(Exception):
    """Raised in the main thread by SIGTERM / SIGINT: end the session cleanly."""


def install_signal_handlers() -> None:
    """SIGTERM and SIGINT end ``serve`` cleanly (exit status 0) instead of killing the process; only the first
    signal interrupts, later ones are ignored while the session closes.  Call from the main thread."""
    received = []

    def handler(signum, frame):
        if not received:
            received.append(signum)
            raise Shutdown(signal.Signals(signum).name)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, handler)


# -- input ----------------------------------------------------------------------------------------------------
class LineBuffer:
    """Complete input lines (bytes) from chunks, overlong lines cut to ``MAX_LINE`` bytes."""

    def __init__(self):
        self.partial = b""
        self.dropping = False  # inside an overlong line: drop until its end
        self.lines: collections.deque[bytes] = collections.deque()

    def feed(self, chunk: bytes) -> None:
        parts = (self.partial + chunk).split(b"\n")
        self.partial = parts.pop()
        for part in parts:
            if not self.dropping:
                self.lines.append(part[:MAX_LINE] + b"\n")
            self.dropping = False
        if len(self.partial) > MAX_LINE:
            if not self.dropping:
                self.lines.append(self.partial[:MAX_LINE] + b"\n")
            self.partial, self.dropping = b"", True

    def finish(self) -> None:
        """End of input: a last line without a newline still counts."""
        if self.partial and not self.dropping:
            self.lines.append(self.partial)
        self.partial = b""


def decode(raw) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw


def take_interrupt_lines(lines: collections.deque) -> bool:
    """Remove GoGui's ``# interrupt`` lines from ``lines``; whether there was one."""
    kept = [line for line in lines if decode(line).strip() != INTERRUPT_LINE]
    found = len(kept) != len(lines)
    if found:
        lines.clear()
        lines.extend(kept)
    return found


class FdLines:
    """Lines from a file descriptor, read on the calling thread (``select`` + ``os.read``)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = LineBuffer()
        self.eof = False

    def _read(self, timeout: float | None) -> None:
        """Read what arrives within ``timeout`` seconds (None: wait for something)."""
        if self.eof:
            return
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self.fd, READ_CHUNK)
        except OSError:
            chunk = b""
        if chunk:
            self.buffer.feed(chunk)
        else:
            self.eof = True
            self.buffer.finish()

    def next_line(self) -> str | None:
        """The next line, waiting for it; None at the end of input."""
        while not self.buffer.lines and not self.eof:
            self._read(None)
        return decode(self.buffer.lines.popleft()) if self.buffer.lines else None

    def pending(self) -> bool:
        """Whether a line (or the end of input) is waiting."""
        self._read(0)
        return bool(self.buffer.lines) or self.eof

    def take_interrupt(self) -> bool:
        self._read(0)
        return take_interrupt_lines(self.buffer.lines)

    def close(self) -> None:
        pass


class ThreadLines:
    """Lines from any object with ``readline``, read by a helper thread (it ends at the end of input)."""

    def __init__(self, rfile):
        self.rfile = rfile
        self.lines: collections.deque = collections.deque()
        self.eof = False
        self.ready = threading.Condition()
        self.thread = threading.Thread(target=self._run, daemon=True, name="gtp-reader")
        self.thread.start()

    def _run(self) -> None:
        try:
            while True:
                raw = self.rfile.readline(MAX_LINE + 1)
                if not raw:
                    break
                if len(raw) > MAX_LINE and not raw.endswith(b"\n" if isinstance(raw, bytes) else "\n"):
                    while True:  # drop the rest of an overlong line
                        more = self.rfile.readline(MAX_LINE + 1)
                        if not more or more.endswith(b"\n" if isinstance(more, bytes) else "\n"):
                            break
                with self.ready:
                    self.lines.append(raw)
                    self.ready.notify_all()
        except (OSError, ValueError):
            pass
        with self.ready:
            self.eof = True
            self.ready.notify_all()

    def next_line(self) -> str | None:
        with self.ready:
            while not self.lines and not self.eof:
                self.ready.wait()
            return decode(self.lines.popleft()) if self.lines else None

    def pending(self) -> bool:
        with self.ready:
            return bool(self.lines) or self.eof

    def take_interrupt(self) -> bool:
        with self.ready:
            return take_interrupt_lines(self.lines)

    def close(self) -> None:
        pass


def line_source(rfile):
    """``FdLines`` for a real file descriptor on POSIX, else ``ThreadLines``."""
    try:
        fd = rfile.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None and os.name == "posix":
        return FdLines(fd)
    return ThreadLines(rfile)


# -- output ---------------------------------------------------------------------------------------------------
def run_stream(stream, reply: StreamedReply, source) -> None:
    """Write the stream's lines until it ends or (interruptible) input is waiting; then close it."""
    try:
        for line in stream.lines:
            reply.write(line)
            if stream.interruptible and source.pending():
                break
    finally:
        stream.close()


def answer(engine, line: str, out, source) -> None:
    """Answer one input line, streaming the analysis a handler left behind."""
    session = engine.session
    session.analysis.stream = None
    session.ponder.stop()  # every command is answered with the ponder search stopped
    response = engine.handle(line)
    stream, session.analysis.stream = session.analysis.stream, None
    if stream is not None and response is not None and response.startswith("="):
        reply = StreamedReply(out, response.split("\n", 1)[0].rstrip())
        reply.start()
        try:
            run_stream(stream, reply, source)
        finally:
            reply.finish()
        session.start_pondering()
        return
    if stream is not None:
        stream.close()
    if response is not None:
        out.write(response)
        out.flush()
    session.start_pondering()  # after our genmove, when pondering is on: think until the next command


def serve(engine, rfile, out) -> int:
    """Run a GTP session: commands from the binary (or text) stream ``rfile``, responses to text ``out``.
    Returns 0 however it ends (quit, end of input, broken pipe, ``Shutdown``, KeyboardInterrupt)."""
    source = line_source(rfile)
    session = engine.session
    session.quit = False  # a new session on this engine
    session.interrupt_check = source.take_interrupt
    try:
        while not engine.quit:
            line = source.next_line()
            if line is None:
                break
            answer(engine, line, out, source)
    except (Shutdown, KeyboardInterrupt, BrokenPipeError):
        pass
    except OSError as exc:  # the client's end of a pipe or socket is gone
        session.debug(f"gtp: {exc!r}")
    finally:
        session.interrupt_check = None
        try:
            session.close()
        except (Shutdown, KeyboardInterrupt):  # a signal during the close: once more, then give up
            session.close()
        source.close()
    return 0
