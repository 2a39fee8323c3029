"""What a read of game records skipped and why: ``SkipStats`` (counts by reason) and ``ArchiveDamage`` (where a
damaged archive stopped being readable and what was lost there)."""

from __future__ import annotations

import collections
import dataclasses

OVERSIZED = "record over the size cap"
NOT_REGULAR = "not a regular file"


@dataclasses.dataclass
class ArchiveDamage:
    """Where a damaged archive stopped being readable, and what was lost there.

    reason: what was found ("truncated: ...", "corrupt compressed data: ... incorrect data check" = a CRC
    failure, "invalid tar header ...", "not a tar archive"); records_before: ``.sgf`` members read from this
    archive before the damage point; records_dropped: members whose header was read but whose data was cut or
    may hold damaged bytes (the member just before an invalid header or a CRC failure), skipped and counted;
    offset: bytes of the file consumed when reading stopped (to within 4 KiB); bytes_lost: the file's bytes after
    that point; records_lost: ``.sgf`` members found in the data after the damage point (their tar headers,
    checksums valid) or None when nothing after it can be read (a cut file, a compressed stream that cannot be
    decoded further; then the count is unknown).
    """

    path: str
    reason: str
    records_before: int
    records_dropped: int
    offset: int
    bytes_lost: int
    records_lost: int | None

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def describe(self) -> str:
        """One line for a log: the archive, the reason and the counts."""
        lost = ("the records after it cannot be read (how many is unknown)" if self.records_lost is None
                else f"about {self.records_lost} records ({self.bytes_lost} bytes of the file) after it lost")
        return (f"{self.path}: {self.reason}; {self.records_before} records read before the damage point, "
                f"{self.records_dropped} dropped there; {lost}")


# Skip reasons that are choices of the caller (filters), not broken records.
FILTER_REASONS = ("not accepted by filter", "board size", "no moves")
DAMAGED_MEMBER = "archive member cut or next to damage"


@dataclasses.dataclass
class SkipStats:
    """Counts of records read and skipped, by reason (the reason is the first words of the error), and the
    damaged archives met (``ArchiveDamage.as_dict()`` each).

    ``complete`` is False as soon as one archive was damaged: its records after the damage point were not read.
    """

    read: int = 0
    kept: int = 0
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    damaged: list = dataclasses.field(default_factory=list)
    cut: int = 0  # kept records used only up to an illegal move (counted by the code that replays them)

    @property
    def num_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def broken(self) -> int:
        """Records skipped because they could not be read or parsed (not because a filter rejected them)."""
        return sum(n for reason, n in self.skipped.items() if not reason.startswith(FILTER_REASONS))

    @property
    def lost(self) -> int:
        """Records known to be lost after damage points (members found there; a cut file adds none: unknown)."""
        return sum(d["records_lost"] or 0 for d in self.damaged)

    @property
    def complete(self) -> bool:
        """True when every archive was read to its end (no damage)."""
        return not self.damaged

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def summary(self) -> dict:
        """JSON-ready counts: read, kept, skipped (by reason), broken, cut, lost, complete, damaged."""
        return {"read": self.read, "kept": self.kept, "skipped": dict(self.skipped), "broken": self.broken,
                "cut": self.cut, "lost": self.lost, "complete": self.complete, "damaged": list(self.damaged)}
