"""Stream SGF game records straight out of tar.gz archives (no unpacking), skipping and counting bad ones.

A damaged archive is read up to the damage point and no further, never fatally: a cut file (the compressed data
ends early), corrupt compressed data, a failed gzip CRC or length check, or an invalid tar header each end that
archive's records with an ``ArchiveDamage`` in ``SkipStats.damaged`` (records read before the damage point,
records dropped there, bytes and records lost after it), and ``SkipStats.complete`` turns False, so no caller
reports a damaged source as read in full.  (Python's tarfile alone raises EOFError on a cut file and stops
silently at a header garbled by flipped bytes; the CRC failure then goes unseen.)

What was skipped is counted in ``skips.SkipStats``; the train/test split is ``jaxgo.data.split``.  Originals:
u-go.net KGS archives (via godmoves/Standard_Computer_Go_Dataset) and featurecat/go-dataset for Fox.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import stat
import tarfile
import zlib
from pathlib import Path
from typing import Callable, Iterator

from jaxgo.data.skips import DAMAGED_MEMBER, NOT_REGULAR, OVERSIZED, ArchiveDamage, SkipStats
from jaxgo.go.sgf import GameRecord, SGFError, load_sgf

MAX_RECORD_BYTES = 8 << 20  # an SGF record larger than this (archive member or file) is skipped unread, counted


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return re.sub(r"\d+", "N", text.split(":")[0])[:60]


def iter_archive(path, stats: SkipStats | None = None, *, size: int | None = 19,
                 accept: Callable[[bytes], bool] | None = None,
                 limit: int | None = None) -> Iterator[tuple[str, GameRecord]]:
    """Yield ``(member name, GameRecord)`` for every ``.sgf`` member of a tar archive (gzipped or not), in
    archive order.

    Records that fail to parse, have another board size than ``size`` (None: any), or are rejected by
    ``accept(raw_bytes)`` are skipped and counted in ``stats``.  A damaged archive (a cut file, corrupt
    compressed data, a failed CRC, an invalid tar header) ends the iteration at the damage point and is recorded
    in ``stats.damaged`` with what was lost (``iter_members``), so ``stats.complete`` turns False; nothing raises
    except a missing archive (FileNotFoundError).  ``limit`` stops after that many kept records (counted in
    ``stats`` over all calls that share it).
    """
    stats = stats if stats is not None else SkipStats()
    if limit is not None and stats.kept >= limit:
        return
    for name, data in iter_members(path, stats):
        if accept is not None and not accept(data):
            stats.skip("not accepted by filter")
            continue
        record = _accepted_record(data, stats, size)
        if record is not None:
            yield name, record
            if limit is not None and stats.kept >= limit:
                return


class _Damaged(Exception):
    """Raised by ``_ArchiveStream`` where the file's data cannot be read on (corrupt compressed data, a CRC or
    length check that fails)."""


class _Cut(_Damaged):
    """Raised by ``_ArchiveStream`` where the file ends inside the compressed data (what came before is good)."""


class _ArchiveStream:
    """The data of an archive file (gunzipped when it is gzip), read forward, as the file object of a tarfile
    opened with mode ``'r:'`` (which seeks forward and reads; a backward seek within the last few blocks works).

    Unlike ``gzip.GzipFile`` it says how far into the file it has read (``compressed``), reads the file in small
    chunks so that figure is close, and raises ``_Damaged`` for a cut file as well as for corrupt data and
    failed CRC / length checks (zlib checks each gzip member's trailer).  Several gzip members and zero padding
    after the last one are read as gzip does.
    """

    CHUNK = 4096
    WINDOW = 4 * tarfile.RECORDSIZE  # bytes kept for backward seeks

    def __init__(self, handle, gzipped: bool):
        self.handle = handle
        self.gzipped = gzipped
        self.decompressor = None  # the current gzip member's; None between members
        self.carry = b""  # bytes read from the file but not yet given to a decompressor
        self.pending = bytearray()  # data not yet delivered
        self.window = bytearray()  # the last data delivered
        self.position = 0  # data delivered so far
        self.compressed = 0  # bytes of the file read so far
        self.finished = False
        self.error: _Damaged | None = None  # raised by the next ``_fill`` (after the data before it is read)

    def _fill(self) -> bool:
        """Read one more chunk of the file into ``pending``; False at the clean end of the data."""
        if self.error is not None:
            raise self.error
        if self.finished:
            return False
        chunk = self.handle.read(self.CHUNK)
        self.compressed += len(chunk)
        if not chunk:
            self.finished = True
            if self.gzipped and (self.decompressor is not None or self.carry):
                raise _Cut(f"truncated: the file ends inside the compressed data after {self.compressed} bytes")
            return False
        if not self.gzipped:
            self.pending += chunk
            return True
        data = self.carry + chunk
        self.carry = b""
        while data:
            if self.decompressor is None:  # between gzip members: zero padding, or the next member
                data = data.lstrip(b"\0")
                if len(data) < 2:
                    self.carry = data
                    break
                if data[:2] != b"\x1f\x8b":
                    raise _Damaged("corrupt compressed data: bytes after a gzip member are not gzip")
                self.decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
            saved = self.decompressor.copy()
            try:
                self.pending += self.decompressor.decompress(data)
            except zlib.error as exc:  # keep the data decoded before the error: decode again in small steps
                self.error = _Damaged(f"corrupt compressed data: {_zlib_message(exc)}")
                for start in range(0, len(data), 64):
                    try:
                        self.pending += saved.decompress(data[start:start + 64])
                    except zlib.error:
                        break
                return True
            if self.decompressor.eof:
                data, self.decompressor = self.decompressor.unused_data, None
            else:
                data = b""
        return True

    def read(self, size: int = -1) -> bytes:
        while (size < 0 or len(self.pending) < size) and self._fill():
            pass
        size = len(self.pending) if size < 0 else min(size, len(self.pending))
        out = bytes(self.pending[:size])
        del self.pending[:size]
        self.window += out
        del self.window[:max(0, len(self.window) - self.WINDOW)]
        self.position += size
        return out

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        target = offset if whence == 0 else self.position + offset
        if whence not in (0, 1):
            raise io.UnsupportedOperation("seek from the end of an archive stream")
        back = self.position - target
        if 0 < back <= len(self.window):
            self.pending[:0] = self.window[-back:]
            del self.window[-back:]
            self.position = target
        elif back > 0:
            raise io.UnsupportedOperation(f"seek {back} bytes back in an archive stream")
        while self.position < target and self.read(min(target - self.position, 1 << 16)):
            pass
        return self.position


def _zlib_message(exc: zlib.error) -> str:
    """zlib's reason without the 'Error -3 while decompressing data' prefix; CRC failures named as such."""
    text = str(exc).split(": ", 1)[-1]
    return {"incorrect data check": "CRC check failed (incorrect data check)",
            "incorrect length check": "length check failed (incorrect length check)"}.get(text, text)


def _count_sgf_headers(stream: _ArchiveStream) -> tuple[int, bool, _Damaged | None]:
    """Read ``stream`` to its end: (tar headers of ``.sgf`` members found at any byte offset, whether any byte
    was not zero, the damage that stopped the reading or None)."""
    found, nonzero, carry, base, counted_until = 0, False, b"", 0, 0
    try:
        while True:
            chunk = stream.read(1 << 16)
            if not chunk:
                return found, nonzero, None
            nonzero = nonzero or chunk.count(0) != len(chunk)
            buf = carry + chunk
            for match in re.finditer(b"ustar", buf):
                start = match.start() - 257
                if start < 0 or start + tarfile.BLOCKSIZE > len(buf) or base + start < counted_until:
                    continue
                if _is_sgf_header(buf[start:start + tarfile.BLOCKSIZE]):
                    found += 1
                    counted_until = base + start + 1
            keep = min(len(buf), 2 * tarfile.BLOCKSIZE)
            base += len(buf) - keep
            carry = buf[len(buf) - keep:]
    except _Damaged as damage:
        return found, nonzero, damage


def _is_sgf_header(block: bytes) -> bool:
    """True for a valid tar header (checksum) of a regular ``.sgf`` member."""
    try:
        info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return info.isfile() and info.name.lower().endswith(".sgf")


def iter_members(path, stats: SkipStats | None = None,
                 max_bytes: int | None = None) -> Iterator[tuple[str, bytes]]:
    """Yield ``(member name, bytes)`` for every ``.sgf`` member of a tar archive (gzipped or not), in order,
    counting each in ``stats.read``.  A member larger than ``max_bytes`` is skipped without being read and
    counted (``OVERSIZED``): a small archive may hold a member of gigabytes.

    A damaged archive never raises: reading stops at the damage point, an ``ArchiveDamage`` is appended to
    ``stats.damaged`` and the iteration ends as if the archive ended there.  A member is yielded only once the
    header after it was read (or the archive's end was checked), so the member just before an invalid header or
    a failed CRC, whose bytes may be garbled, is dropped and counted instead; after a clean cut (a truncated
    file) the members before the cut are good and are all yielded.  Only a missing file raises
    (FileNotFoundError).
    """
    stats = stats if stats is not None else SkipStats()
    max_bytes = MAX_RECORD_BYTES if max_bytes is None else max_bytes
    path = os.fspath(path)
    with open(path, "rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
        handle.seek(0)
        stream = _ArchiveStream(handle, gzipped)
        try:
            archive = tarfile.open(fileobj=stream, mode="r:")
        except (_Damaged, tarfile.TarError) as exc:
            reason = str(exc) if isinstance(exc, _Damaged) else f"not a tar archive ({exc})"
            stats.damaged.append(ArchiveDamage(path, reason, 0, 0, 0, os.path.getsize(path), None).as_dict())
            return
        held, read, before, damage = None, 0, 0, None  # ``held``: the last member read, yielded once the header
        # after it is read; ``read``: members read from this archive; ``before``: members yielded
        while damage is None:
            try:
                member = archive.next()
            except (_Damaged, tarfile.TarError, OSError) as exc:  # the header after ``held`` is unreadable
                damage = _Found(_damage_reason(exc), stream.position, stream.compressed, None,
                                garbled=not _is_cut(exc), cut=_is_cut(exc))
                break
            if member is None:
                damage = _end_damage(stream, archive.offset)
                break
            if held is not None:
                yield held
                before, held = before + 1, None
            if not member.isfile() or not member.name.lower().endswith(".sgf"):
                continue
            stats.read += 1
            if member.size > max_bytes:  # never read: tarfile steps over its data in bounded chunks
                stats.skip(OVERSIZED)
                continue
            read += 1
            try:
                held = (member.name, archive.extractfile(member).read())
            except (_Damaged, tarfile.TarError, OSError) as exc:  # the member's data is cut or garbled
                damage = _Found(_damage_reason(exc), stream.position, stream.compressed, None, garbled=True,
                                cut=_is_cut(exc))
        if held is not None and (damage is None or not damage.garbled):
            yield held
            before, held = before + 1, None
        if damage is None:
            return
        dropped = read - before
        for _ in range(dropped):
            stats.skip(DAMAGED_MEMBER)
        estimate = _estimate_lost(handle, damage, len(archive.members), read / max(1, len(archive.members)))
        records_lost = None if damage.found is None and estimate is None else max(damage.found or 0, estimate or 0)
        size = os.path.getsize(path)
        stats.damaged.append(ArchiveDamage(path, damage.reason, before, dropped, damage.offset,
                                           max(0, size - damage.offset), records_lost).as_dict())


@dataclasses.dataclass
class _Found:
    """A damage point: reason, archive data offset and file offset where reading stopped, valid ``.sgf`` tar
    headers found after it (None: the data after it was not read), whether the data before it may be garbled,
    whether the file was cut (it ends early)."""

    reason: str
    stop: int
    offset: int
    found: int | None
    garbled: bool
    cut: bool


def _is_cut(exc: Exception) -> bool:
    """True for a file that ends early (the data before the cut is good)."""
    return isinstance(exc, _Cut) or (isinstance(exc, tarfile.ReadError) and "unexpected end of data" in str(exc))


def _damage_reason(exc: Exception) -> str:
    if isinstance(exc, _Damaged):
        return str(exc)
    if _is_cut(exc):
        return "truncated: the archive data ends inside a member"
    return f"invalid tar data: {exc}"


def _end_damage(stream: _ArchiveStream, stop: int) -> _Found | None:
    """After tarfile's listing ended at data offset ``stop`` (it stops silently at an invalid header): None when
    the rest is zeros (the end-of-archive blocks) and the compressed data passes its checks, else the damage."""
    offset = stream.compressed
    stream.seek(stop)  # (tarfile read the block at ``stop``: it is still in the stream's window)
    block = bytes(stream.pending[:tarfile.BLOCKSIZE])
    found, nonzero, damage = _count_sgf_headers(stream)
    if damage is None and not nonzero:
        return None
    where = f"byte {stop} of the archive data"
    invalid = block.count(0) != len(block)
    listing = f"invalid tar header at {where}" if invalid else f"data after the tar end-of-archive marker at {where}"
    if damage is None:
        reason = listing
    elif invalid:
        reason = f"{damage}; the listing stopped at an {listing}"
    else:
        reason = str(damage)
    cut = isinstance(damage, _Cut)
    found += invalid  # the invalid header was most likely a member's
    return _Found(reason, stop, offset, None if cut and not found else found, garbled=damage is not None and not cut,
                  cut=cut)


def _estimate_lost(handle, damage: _Found, members: int, sgf_share: float) -> int | None:
    """``.sgf`` members after the damage point estimated from the gzip trailer's size field (the archive data's
    length mod 2**32): (length - ``damage.stop`` - the end-of-archive blocks and half a record of padding) /
    the mean member size before the damage point.  None for a cut file (its trailer is gone), a file that is not
    gzip, or no members read."""
    if damage.cut or not members or damage.stop <= 0:
        return None
    handle.seek(0)
    if handle.read(2) != b"\x1f\x8b":
        return None
    handle.seek(-4, os.SEEK_END)
    length = int.from_bytes(handle.read(4), "little")
    rest = length - damage.stop - 2 * tarfile.BLOCKSIZE - tarfile.RECORDSIZE // 2
    if rest <= 0:
        return 0 if length >= damage.stop else None
    return round(rest / (damage.stop / members) * sgf_share)


def iter_records(paths, stats: SkipStats | None = None, **kwargs) -> Iterator[tuple[str, GameRecord]]:
    """``iter_path`` over several archives / SGF files / folders in turn (``limit`` counts over all of them)."""
    stats = stats if stats is not None else SkipStats()
    for path in paths:
        yield from iter_path(path, stats, **kwargs)
        if kwargs.get("limit") is not None and stats.kept >= kwargs["limit"]:
            return


def iter_path(path, stats: SkipStats | None = None, *, size: int | None = 19,
              accept: Callable[[bytes], bool] | None = None,
              limit: int | None = None) -> Iterator[tuple[str, GameRecord]]:
    """Records from an SGF file, a folder (its ``*.sgf`` files, recursively, sorted) or a tar.gz archive, with
    the filters of ``iter_archive``.  A missing path raises FileNotFoundError."""
    stats = stats if stats is not None else SkipStats()
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    if path.is_file() and (path.name.endswith((".tar.gz", ".tgz", ".tar"))):
        yield from iter_archive(path, stats, size=size, accept=accept, limit=limit)
        return
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() == ".sgf") if path.is_dir() else [path]
    for file in files:
        if limit is not None and stats.kept >= limit:
            return
        stats.read += 1
        try:
            data = read_regular_file(file)
        except ValueError as exc:
            stats.skip(str(exc))
            continue
        except OSError as exc:
            stats.skip(f"unreadable file: {type(exc).__name__}")
            continue
        if accept is not None and not accept(data):
            stats.skip("not accepted by filter")
            continue
        record = _accepted_record(data, stats, size)
        if record is not None:
            yield str(file), record


def read_regular_file(path, max_bytes: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes``; ValueError (``NOT_REGULAR`` or
    ``OVERSIZED``) otherwise, without opening it: a FIFO would block the reader for good, a device or a huge
    file would never end.  The read itself stops at ``max_bytes + 1`` (a file that grew meanwhile).
    ``max_bytes`` defaults to ``MAX_RECORD_BYTES``."""
    max_bytes = MAX_RECORD_BYTES if max_bytes is None else max_bytes
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(NOT_REGULAR)
    if info.st_size > max_bytes:
        raise ValueError(OVERSIZED)
    with open(path, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(OVERSIZED)
    return data


def _accepted_record(data: bytes, stats: SkipStats, size: int | None) -> GameRecord | None:
    """The parsed record of one SGF, counted as kept, or None with the reason counted as a skip (never fatal:
    sgfmill can raise odd things on garbage)."""
    try:
        record = load_sgf(data)
    except SGFError as exc:
        stats.skip(_reason(exc))
        return None
    except Exception as exc:
        stats.skip(f"parser crash: {type(exc).__name__}")
        return None
    if size is not None and record.size != size:
        stats.skip(f"board size {record.size}")
        return None
    if not record.moves:
        stats.skip("no moves")
        return None
    stats.kept += 1
    return record
