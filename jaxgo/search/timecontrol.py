"""The GTP clock: time settings, time left per colour, and the seconds to spend on the next move.

``Clock`` holds what ``time_settings`` / ``kgs-time_settings`` / ``time_left`` said (KataGo's ``TimeControls``);
``move_seconds`` turns it into a budget.  Rule: in main time, the time left over max(20, empty points / 2)
expected own moves (plus 80% of one byo-yomi period's per-stone time when byo-yomi exists); in byo-yomi, 80% of
the time left over the stones left; never more than 80% of the time left, and at least 0.05 s.
"""

from __future__ import annotations

import dataclasses
import math

MIN_SECONDS = 0.05


@dataclasses.dataclass
class Clock:
    main: float = 0.0  # main time in seconds
    byo_time: float = 0.0  # byo-yomi period in seconds (Canadian: for byo_stones stones)
    byo_stones: int = 0
    limited: bool = False  # False: no time limit (the engine's own budget applies)
    left: dict = dataclasses.field(default_factory=dict)  # colour -> (seconds, stones) from time_left
    # K of every tree search on a time budget: the batch shape compiled for this clock (GTP warm-up), else the
    # first such search's choice; kept across games, so no move's time goes to compiling a new shape.
    leaves: int | None = None

    def set(self, main: float, byo_time: float, byo_stones: int) -> None:
        """GTP ``time_settings``: byo-yomi time with 0 stones, or no time at all, means no limit.  ValueError
        for negative or non-finite values."""
        if not all(math.isfinite(v) for v in (main, byo_time)) or main < 0 or byo_time < 0 or byo_stones < 0:
            raise ValueError("time settings must be finite and non-negative")
        self.main, self.byo_time, self.byo_stones = float(main), float(byo_time), int(byo_stones)
        self.limited = not ((byo_time > 0 and byo_stones == 0) or (main <= 0 and byo_time <= 0))
        self.left = {}

    def set_left(self, colour: int, seconds: float, stones: int) -> None:
        """GTP ``time_left``; ValueError for a negative or non-finite time."""
        if not math.isfinite(seconds) or seconds < 0 or stones < 0:
            raise ValueError("time left must be finite and non-negative")
        self.left[colour] = (float(seconds), int(stones))

    def move_seconds(self, colour: int, empty_points: int) -> float | None:
        """Seconds for ``colour``'s next move, or None without a time limit."""
        if not self.limited:
            return None
        in_main = self.main > 0
        left, stones = self.left.get(colour, (self.main if in_main else self.byo_time,
                                              0 if in_main else self.byo_stones))
        if stones > 0:
            budget = 0.8 * left / stones
        else:
            budget = left / max(20, empty_points / 2)
            if self.byo_time > 0 and self.byo_stones > 0:
                budget += 0.8 * self.byo_time / self.byo_stones
        return max(MIN_SECONDS, min(budget, 0.8 * left if left > 0 else MIN_SECONDS))
