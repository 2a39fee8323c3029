"""The referee's clock: a time control for both sides (``TimeControl``: main time, Canadian byo-yomi, grace)
and each side's clock under it (``GameClock``), sent to the engines over GTP and enforced on the wall clock.
The engine's own share of its time per move is ``jaxgo.search.timecontrol.Clock``."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class TimeControl:
    """A game clock for each side: ``main`` seconds, then Canadian byo-yomi periods of ``byoyomi`` seconds for
    ``stones`` moves (``byoyomi`` 0: sudden death when the main time is spent).  The referee sends it to both
    engines (``time_settings``, and ``time_left`` before every ``genmove``), times every ``genmove`` on the wall
    clock and gives a side that overruns its clock by more than ``grace`` seconds a loss on time."""

    main: float = 0.0
    byoyomi: float = 0.0
    stones: int = 1
    grace: float = 1.0

    def __post_init__(self):
        if self.main < 0 or self.byoyomi < 0 or self.stones < 1 or self.grace < 0:
            raise ValueError("time control: main, byoyomi and grace must be >= 0 and stones >= 1")
        if self.main == 0 and self.byoyomi == 0:
            raise ValueError("time control: give main time, byo-yomi or both")

    @classmethod
    def parse(cls, text: str) -> "TimeControl":
        """``MAIN[:BYOYOMI[:STONES]]`` in seconds, e.g. ``60`` (sudden death) or ``0:5:1`` (5 s per move)."""
        parts = text.split(":")
        try:
            if not 1 <= len(parts) <= 3:
                raise ValueError
            numbers = [float(p) for p in parts]
            return cls(numbers[0], numbers[1] if len(numbers) > 1 else 0.0,
                       int(numbers[2]) if len(numbers) > 2 else 1)
        except ValueError as exc:
            raise ValueError(f"time control {text!r}: expected MAIN[:BYOYOMI[:STONES]] in seconds ({exc})") from None

    def gtp_settings(self) -> str:
        return f"time_settings {self.main:g} {self.byoyomi:g} {self.stones if self.byoyomi else 0}"


class GameClock:
    """One side's clock under a ``TimeControl``."""

    def __init__(self, control: TimeControl):
        self.control = control
        self.main_left = control.main
        self.in_byoyomi = control.main == 0
        self.period_left = control.byoyomi
        self.stones_left = control.stones

    def allowance(self) -> float:
        """Seconds the next move may take before the clock runs out (grace not included)."""
        if self.in_byoyomi:
            return max(0.0, self.period_left)
        return self.main_left + self.control.byoyomi

    def gtp_time_left(self, colour: str) -> str:
        if self.in_byoyomi:
            return f"time_left {colour} {max(0, int(self.period_left))} {self.stones_left}"
        return f"time_left {colour} {int(self.main_left)} 0"

    def spend(self, seconds: float) -> bool:
        """Charge one move's ``seconds``; False when the side overran its clock by more than the grace."""
        control = self.control
        if not self.in_byoyomi:
            if seconds <= self.main_left:
                self.main_left -= seconds
                return True
            seconds -= self.main_left
            self.main_left = 0.0
            if control.byoyomi == 0:
                return seconds <= control.grace
            self.in_byoyomi = True
            self.period_left, self.stones_left = control.byoyomi, control.stones
        self.period_left -= seconds
        if self.period_left < -control.grace:
            return False
        self.stones_left -= 1
        if self.stones_left == 0:
            self.period_left, self.stones_left = control.byoyomi, control.stones
        return True
