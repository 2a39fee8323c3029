"""The GTP read loop with streamed analysis responses (``lz-analyze`` & co.).

``serve(engine, rfile, out)`` reads lines on a reader thread into a queue and answers each with
``engine.handle(line)`` (a ``jaxgo.gtp.protocol.Dispatcher``); when a handler left an ``AnalysisStream`` in
``engine.session.analysis_stream`` it writes ``=[id]`` and then the stream's lines until the next input line
arrives (interruptible streams) or the stream ends, then the empty line that ends the response.  Undecodable
bytes are replaced, so a stray byte never ends the session.  At the end the session's analysis connection is
closed.
"""

from __future__ import annotations

import queue
import threading

MAX_LINE = 1 << 16  # a longer GTP line is cut (the rest is read and dropped)


def _ends_line(raw) -> bool:
    return raw.endswith(b"\n" if isinstance(raw, bytes) else "\n")


def _reader(rfile, lines: queue.Queue) -> None:
    """Put every input line (decoded) on ``lines``, then None at the end of input."""
    try:
        while True:
            raw = rfile.readline(MAX_LINE + 1)
            if not raw:
                break
            if len(raw) > MAX_LINE and not _ends_line(raw):
                while True:
                    more = rfile.readline(MAX_LINE + 1)
                    if not more or _ends_line(more):
                        break
            lines.put(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)
    except (OSError, ValueError):
        pass
    lines.put(None)


def run_stream(stream, out, lines: queue.Queue) -> None:
    """Write the stream's lines until it ends or (interruptible) input is waiting; then close it."""
    try:
        for line in stream.lines:
            if line is not None:
                out.write(line + "\n")
                out.flush()
            if stream.interruptible and not lines.empty():
                break
    finally:
        stream.close()
    out.write("\n")
    out.flush()


def answer(engine, line: str, out, lines: queue.Queue) -> None:
    """Answer one input line, streaming the analysis a handler left behind."""
    session = engine.session
    session.analysis_stream = None
    response = engine.handle(line)
    stream, session.analysis_stream = session.analysis_stream, None
    if stream is not None and response is not None and response.startswith("="):
        out.write(response.rstrip("\n").rstrip() + "\n")
        out.flush()
        run_stream(stream, out, lines)
        return
    if stream is not None:
        stream.close()
    if response is not None:
        out.write(response)
        out.flush()


def serve(engine, rfile, out) -> int:
    """Run a GTP session: commands from the binary (or text) stream ``rfile``, responses to text ``out``."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(rfile, lines), daemon=True, name="gtp-reader").start()
    while True:
        line = lines.get()
        if line is None:
            break
        answer(engine, line, out, lines)
        if engine.quit:
            break
    engine.session.close()
    return 0
