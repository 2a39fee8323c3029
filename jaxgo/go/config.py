"""Static rules configuration: hashable, passed to jitted code as a static argument, never a global."""

from __future__ import annotations

import dataclasses

KO_RULES = ("simple", "positional", "situational")


@dataclasses.dataclass(frozen=True)
class Rules:
    """Board size, komi and the rule variants.

    ``ko_rule``: ``simple`` (only the immediate recapture is forbidden), ``positional`` superko (no move may
    recreate an earlier board) or ``situational`` superko (no move may recreate an earlier board with the same
    player to move).  Jitted code always applies simple ko; superko is checked on the host against the hash
    history (``jaxgo.go.game``).  ``suicide``: whether a multi-stone suicide is a legal move.
    Scoring is always Tromp-Taylor area scoring with komi.
    """

    size: int = 19
    komi: float = 7.5
    ko_rule: str = "positional"
    suicide: bool = False

    def __post_init__(self):
        if not 2 <= self.size <= 19:
            raise ValueError(f"board size must be 2..19, got {self.size}")
        if self.ko_rule not in KO_RULES:
            raise ValueError(f"ko_rule must be one of {KO_RULES}, got {self.ko_rule!r}")

    @property
    def num_points(self) -> int:
        return self.size * self.size

    @property
    def pass_move(self) -> int:
        return self.size * self.size
