"""Helpers shared by several test modules (on the path through pytest's ``pythonpath = ["tests"]``)."""

from __future__ import annotations

import time


class ScriptedInput:
    """A binary rfile whose lines arrive after given delays: [(seconds to wait, b"line\\n"), ...]."""

    def __init__(self, script):
        self.script = list(script)

    def readline(self, limit=-1):
        if not self.script:
            return b""
        delay, line = self.script.pop(0)
        time.sleep(delay)
        return line


# A GTP engine for match tests.  Its genmove behaviour (``mode``): "pass"; "first" (A1, B1, ... E2, then pass);
# "slow" (as first, 0.4 s a move); "garbage" (not GTP); "crash" (exit status 3); "illegal" (always A1).
# final_status_list empty, final_score 0, everything else an empty success (``fake_gtp_engine`` fills in the mode);
# ``replies`` {command: reply} come first ("? ..." a failure), and every command is appended to ``log`` if set.
FAKE_GTP_ENGINE = r'''#!{python}
import sys
mode = {mode}
replies = {replies}
log = {log}
moves = iter(["A1", "B1", "C1", "D1", "E1", "A2", "B2", "C2", "D2", "E2"])
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if log:
        with open(log, "a") as f:
            f.write(line)
    if words[0] == "quit":
        print("=\n", flush=True)
        break
    if words[0] in replies:
        reply = replies[words[0]]
        print((reply if reply.startswith("?") else "= " + reply) + "\n", flush=True)
        continue
    if words[0] == "genmove":
        if mode == "garbage":
            print("hello there\n", flush=True)
        elif mode == "crash":
            sys.exit(3)
        elif mode == "illegal":
            print("= A1\n", flush=True)
        elif mode in ("first", "slow"):
            if mode == "slow":
                import time
                time.sleep(0.4)
            print("= " + next(moves, "pass") + "\n", flush=True)
        else:
            print("= pass\n", flush=True)
    elif words[0] == "final_status_list":
        print("= \n", flush=True)
    elif words[0] == "final_score":
        print("= 0\n", flush=True)
    else:
        print("= \n", flush=True)
'''


def fake_gtp_engine(path, plays_if: str | None = None, replies: dict | None = None, log=None) -> str:
    """Write ``FAKE_GTP_ENGINE`` as an executable file at ``path`` (a pathlib.Path); its path as a string.
    ``plays_if``: the argument that makes it play stones ("first"), else it passes; without ``plays_if`` its
    first argument is the mode (none: "pass").  ``replies``: {command: reply body, or "? message"} answered
    before anything else; ``log``: a file every command is appended to."""
    import stat
    import sys

    if plays_if is None:
        mode = 'sys.argv[1] if len(sys.argv) > 1 else "pass"'
    else:
        mode = f'"first" if {plays_if!r} in sys.argv[1:] else "pass"'
    text = (FAKE_GTP_ENGINE.replace("{python}", sys.executable).replace("{mode}", mode)
            .replace("{replies}", repr(dict(replies or {}))).replace("{log}", repr(str(log) if log else None)))
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)



class FakeClock:
    """A stand-in for ``time.perf_counter`` that moves ``tick`` seconds forward at every reading, so a search on a
    time budget runs as many steps as its own clock readings allow, whatever the machine's speed or load:
    ``monkeypatch.setattr(time, "perf_counter", FakeClock(0.05))``.  ``readings`` counts the calls."""

    def __init__(self, tick: float):
        self.tick, self.now, self.readings = tick, 0.0, 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += self.tick
        return self.now
