"""Leave when the parent process dies.

A GUI that starts jaxgo through ``/bin/sh -c "jaxgo serve ..."`` (KaTrain) and later ends it with SIGTERM
kills only the shell: jaxgo, re-parented to init (or a sub-reaper), would keep the GUI's pipes open and the GUI
would wait for it forever.  ``exit_with_parent`` watches ``os.getppid()`` from a daemon thread and, once the
parent is gone, sends this process SIGTERM, which ``jaxgo gtp`` and ``jaxgo serve`` handle as a clean stop
(exit status 0).  Polling ``getppid`` is used rather than Linux's ``PR_SET_PDEATHSIG``, which fires when the
parent *thread* that started us ends (a GUI that starts its engine from a worker thread would lose it).

Only a process that talks to its parent through pipes or sockets (stdin or stdout a FIFO or a socket, as under a
GUI) is watched: a server started in the background with its output in a file (``nohup jaxgo serve --tcp 6464
> log &``) outlives the shell that started it, as before.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import threading

POLL_SECONDS = 1.0


class ParentWatch:
    """The watcher thread of ``exit_with_parent``; ``stop()`` ends it (before a clean exit)."""

    def __init__(self, parent: int, period: float, log=None):
        self.parent = parent
        self.period = period
        self.log = log
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="jaxgo-parent-watch", daemon=True)

    def _watch(self) -> None:
        while os.getppid() == self.parent:
            if self._stop.wait(self.period):
                return
        if self.log is not None:
            print(f"jaxgo: parent process {self.parent} ended; stopping", file=self.log, flush=True)
        os.kill(os.getpid(), signal.SIGTERM)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(2 * self.period + 1)


def talks_through_pipes(fds=(0, 1)) -> bool:
    """Whether one of ``fds`` (default stdin, stdout) is a pipe or a socket."""
    for fd in fds:
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            return True
    return False


def exit_with_parent(period: float = POLL_SECONDS, log=sys.stderr) -> ParentWatch | None:
    """Start the watcher, from the main thread of a process that handles SIGTERM as a clean stop.  None
    (nothing watched) outside the main thread, when the parent is already init (pid 1), or when neither stdin
    nor stdout is a pipe or a socket (``talks_through_pipes``)."""
    parent = os.getppid()
    if parent <= 1 or threading.current_thread() is not threading.main_thread() or not talks_through_pipes():
        return None
    watch = ParentWatch(parent, period, log)
    watch.thread.start()
    return watch


__all__ = ["ParentWatch", "exit_with_parent", "talks_through_pipes", "POLL_SECONDS"]
