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
