"""The GTP read loop with streamed analysis responses (``lz-analyze`` & co.).

``serve(engine, rfile, out)`` reads lines on a reader thread into a queue, answers each with
``engine.handle(line)``; when a handler left an ``AnalysisStream`` in ``engine.analysis_stream`` it writes
``=[id]`` and then the stream's lines until the next input line arrives (interruptible streams) or the stream
ends, then the empty line that ends the response.  Undecodable bytes are replaced, so a stray byte never ends
the session.
"""

from __future__ import annotations

import queue
import threading

MAX_LINE = 1 << 16  # a longer GTP line is cut (the rest is read and dropped)


def _reader(rfile, lines: queue.Queue) -> None:
    try:
        while True:
            raw = rfile.readline(MAX_LINE + 1)
            if not raw:
                break
            if len(raw) > MAX_LINE and not raw.endswith(b"\n" if isinstance(raw, bytes) else "\n"):
                while True:
                    more = rfile.readline(MAX_LINE + 1)
                    if not more or more.endswith(b"\n" if isinstance(more, bytes) else "\n"):
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


def serve(engine, rfile, out) -> int:
    """Run a GTP session: commands from the binary (or text) stream ``rfile``, responses to text ``out``."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(rfile, lines), daemon=True, name="gtp-reader").start()
    while True:
        line = lines.get()
        if line is None:
            break
        engine.analysis_stream = None
        response = engine.handle(line)
        stream = getattr(engine, "analysis_stream", None)
        engine.analysis_stream = None
        if stream is not None and response is not None and response.startswith("="):
            out.write(response.rstrip("\n").rstrip() + "\n")
            out.flush()
            run_stream(stream, out, lines)
        elif response is not None:
            if stream is not None:
                stream.close()
            out.write(response)
            out.flush()
        if engine.quit:
            break
    conn = getattr(engine, "analysis", None)
    if conn is not None:
        conn.close()
    return 0
