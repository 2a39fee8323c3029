"""Training shards: packed candidate codes of many positions in memory-mappable ``.npy`` files + a manifest.

A shard ``shard-NNNNN`` is three files in the shard folder:

    shard-NNNNN.codes.npy  uint32 [N, P+1]  per-candidate codes (``jaxgo.features.codes``); uint32 [N, P+1, 2]
                                            with a large-pattern dictionary (base code, large-pattern level)
    shard-NNNNN.meta.npy   int16  [N, 4]    played move, previous move, the move before, move number (0-based)
    shard-NNNNN.games.npy  int32  [g+1]     first position of each game (and N at the end)

``manifest.json`` lists finished shards; every file is written atomically (``jaxgo.util.files``), and the
manifest is rewritten (atomically) after each shard, so an interrupted ``extract`` resumes where it stopped:
shard k always holds kept games [k * shard_games, (k + 1) * shard_games) of the source stream.
A folder extracted with a large-pattern dictionary keeps it as ``large.npz`` (``large_dictionary(folder)``).
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Iterator

import numpy as np

from jaxgo.data.archives import iter_records
from jaxgo.data.skips import SkipStats
from jaxgo.data.split import is_pro_vs_pro
from jaxgo.util.files import save_npy_atomic, write_json_atomic

MANIFEST = "manifest.json"
LARGE_FILE = "large.npz"
VERSION = 2  # the feature layout: 2 added capture level 3 (a capture that saves an own chain in atari)
META_MOVE, META_PREV, META_PREV2, META_NUMBER = range(4)


def read_manifest(folder) -> dict | None:
    """The manifest of a shard folder, or None if there is none yet.  Shards of another feature layout
    (``VERSION``) are refused: their codes index other features."""
    path = Path(folder) / MANIFEST
    if not path.exists():
        return None
    manifest = json.loads(path.read_text())
    if manifest.get("version") != VERSION:
        raise ValueError(f"{folder} holds shards of feature layout version {manifest.get('version')}; this jaxgo "
                         f"uses version {VERSION}: extract them again into a new folder")
    return manifest


def write_shard(folder, name: str, games: list) -> dict:
    """Write one shard from ``games`` = [(codes uint32 [T, P+1], moves int16 [T])]; returns its manifest entry."""
    from jaxgo.features.games import previous_moves

    folder = Path(folder)
    codes = np.concatenate([c for c, _ in games]) if games else np.zeros((0, 362), np.uint32)
    metas, starts = [], [0]
    for c, m in games:
        prev, prev2 = previous_moves(m)
        metas.append(np.stack([m.astype(np.int16), prev, prev2, np.arange(len(m), dtype=np.int16)], 1))
        starts.append(starts[-1] + len(m))
    meta = np.concatenate(metas) if metas else np.zeros((0, 4), np.int16)
    save_npy_atomic(folder / f"{name}.codes.npy", codes.astype(np.uint32))
    save_npy_atomic(folder / f"{name}.meta.npy", meta.astype(np.int16))
    save_npy_atomic(folder / f"{name}.games.npy", np.asarray(starts, np.int32))
    return {"name": name, "games": len(games), "positions": int(len(meta))}


def extract_settings(sources, shard_games: int, pro_only: bool, size: int, large) -> dict:
    """The settings a shard folder is tied to (its manifest's ``settings``)."""
    settings = {"sources": [str(s) for s in sources], "shard_games": shard_games, "pro_only": pro_only}
    if size != 19:
        settings["size"] = size
    if large is not None:
        settings["large"] = {"fingerprint": large.fingerprint(), "entries": len(large)}
    return settings


def _open_manifest(folder: Path, settings: dict) -> dict:
    """The folder's manifest, or a new empty one; a manifest of other settings that lists shards is refused."""
    manifest = read_manifest(folder)
    if manifest is None or manifest.get("settings") != settings:  # (read_manifest refuses other versions)
        if manifest is not None and manifest.get("shards"):
            raise ValueError(f"{folder} holds shards made with other settings ({manifest.get('settings')}); "
                             "use another folder")
        manifest = {"version": VERSION, "settings": settings, "shards": [], "complete": False, "skipped": {},
                    "read": 0}
    return manifest


def extract(folder, sources, *, games: int | None = None, shard_games: int = 250, pro_only: bool = False,
            batch: int = 16, progress: bool = True, stop_after: int | None = None, size: int = 19,
            large=None) -> dict:
    """Extract shards from the archives ``sources`` into ``folder`` (created), resuming from its manifest.

    games: how many kept games in all (None: every game; a larger number later extends the folder);
    shard_games: games per shard; pro_only: keep only pro-vs-pro even games (``is_pro_vs_pro``); size: board
    size kept; stop_after: write at most this many new shards, then return (tests of resumption); large: a
    ``jaxgo.features.large.LargeDictionary`` whose levels are stored next to the codes.
    Returns the manifest.
    """
    from jaxgo.features.games import cut_games, games_codes

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    settings = extract_settings(sources, shard_games, pro_only, size, large)
    manifest = _open_manifest(folder, settings)
    if manifest["complete"]:
        return manifest
    if large is not None and not (folder / LARGE_FILE).exists():
        large.save(folder / LARGE_FILE)
    if manifest["shards"] and manifest["shards"][-1]["games"] < shard_games:
        manifest["shards"].pop()  # a short last shard (an earlier, smaller limit): redo it
    total = sum(s["games"] for s in manifest["shards"])
    if games is not None and total >= games:
        return manifest
    done = len(manifest["shards"])
    stats = SkipStats()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=games, initial=done * shard_games, unit="game", desc="extract")
    skipped_games = 0
    written = 0
    stream = iter_records(sources, stats, limit=games, size=size,
                          accept=is_pro_vs_pro if pro_only else None)
    pending: list = []
    t0 = time.time()

    def flush():
        nonlocal pending, written
        index = len(manifest["shards"])
        coded = games_codes(pending, batch=batch, large_dictionary=large)
        entry = write_shard(folder, f"shard-{index:05d}", coded)
        entry["cut_games"] = cut_games(pending, coded)  # records used only up to an illegal move
        entry["seconds"] = round(time.time() - t0, 2)
        manifest["shards"].append(entry)
        manifest["skipped"] = dict(stats.skipped)
        manifest["read"] = stats.read
        write_json_atomic(folder / MANIFEST, manifest)
        if bar is not None:
            bar.update(len(pending))
            bar.set_postfix(positions=sum(s["positions"] for s in manifest["shards"]))
        pending = []
        written += 1

    for _, record in stream:
        if skipped_games < done * shard_games:  # finished in an earlier run
            skipped_games += 1
            continue
        pending.append(record)
        if len(pending) == shard_games or (games is not None and total + len(pending) >= games):
            total += len(pending)
            flush()
            if stop_after is not None and written >= stop_after:
                if bar is not None:
                    bar.close()
                return manifest
    if pending:
        flush()
    # the sources ran out, every archive read to its end (a damaged one was read up to its damage point)
    manifest["complete"] = (games is None or stats.kept < games) and stats.complete
    manifest["damaged"] = stats.damaged
    manifest["skipped"] = dict(stats.skipped)
    manifest["read"] = stats.read
    write_json_atomic(folder / MANIFEST, manifest)
    if bar is not None:
        bar.close()
    return manifest


# ---------------------------------------------------------------------------------------------- several workers

def worker_file(folder, worker: int, workers: int) -> Path:
    """The resumption record of worker ``worker`` of ``workers`` in a shard folder."""
    return Path(folder) / f"worker-{worker}-of-{workers}.json"


def extract_worker(folder, sources, *, worker: int, workers: int, games: int | None = None,
                   shard_games: int = 250, pro_only: bool = False, batch: int = 16, stop_after: int | None = None,
                   size: int = 19, large=None, log=None) -> dict:
    """Worker ``worker`` of ``workers`` of a split extraction: the shards k with k % workers == worker.

    Every worker reads the whole record stream (parsing is a small part of the cost) so that it counts kept
    games exactly as ``extract`` does, and computes features only for the games of its own shards; shard k holds
    kept games [k * shard_games, (k + 1) * shard_games), so the files are those of a one-process ``extract``, byte
    for byte.  Progress is recorded in ``worker_file`` after each shard (a re-run skips finished shards; full
    shards already in the folder's manifest are skipped too).  Arguments as in ``extract``; ``stop_after``: at
    most this many new shards.  Returns the worker record: settings, games, shards (entries with their index),
    done, read, kept, skipped.  ``merge_workers`` writes the manifest once every worker is done.
    """
    from jaxgo.features.games import cut_games, games_codes

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    settings = extract_settings(sources, shard_games, pro_only, size, large)
    manifest = _open_manifest(folder, settings)
    if manifest["complete"] or (games is not None and sum(e["games"] for e in manifest["shards"]) >= games):
        return {"settings": settings, "games": games, "shards": [], "done": True, "merged": True}
    if large is not None and not (folder / LARGE_FILE).exists():
        large.save(folder / LARGE_FILE)
    path = worker_file(folder, worker, workers)
    record = _read_worker(path, settings, games, shard_games)
    if record["done"]:
        return record
    finished = {i for i, e in enumerate(manifest["shards"]) if e["games"] == shard_games}
    finished |= {e["index"] for e in record["shards"]}
    stats = SkipStats()
    pending, index, written, t0 = [], None, 0, time.time()

    def flush():
        nonlocal pending, written
        coded = games_codes(pending, batch=batch, large_dictionary=large)
        entry = write_shard(folder, f"shard-{index:05d}", coded)
        entry["cut_games"] = cut_games(pending, coded)  # records used only up to an illegal move
        record["shards"].append(dict(entry, index=index, seconds=round(time.time() - t0, 2)))
        write_json_atomic(path, record)
        if log:
            log(f"worker {worker}/{workers}: shard {index} ({len(pending)} games)")
        pending, written = [], written + 1

    stream = iter_records(sources, stats, limit=games, size=size, accept=is_pro_vs_pro if pro_only else None)
    for number, (_, game) in enumerate(stream):
        k = number // shard_games
        if k % workers != worker or k in finished:
            continue
        index = k
        pending.append(game)
        if len(pending) == shard_games or (games is not None and number + 1 >= games):
            flush()
            if stop_after is not None and written >= stop_after:
                return record
    if pending:
        flush()
    record.update(done=True, read=stats.read, kept=stats.kept, skipped=dict(stats.skipped), damaged=stats.damaged)
    write_json_atomic(path, record)
    return record


def _read_worker(path: Path, settings: dict, games: int | None, shard_games: int) -> dict:
    """A worker's record, fresh when missing or made with other settings; of a run with another ``games`` limit
    only the full shards are kept (the short last one depends on the limit)."""
    fresh = {"settings": settings, "games": games, "shards": [], "done": False}
    if not path.exists():
        return fresh
    record = json.loads(path.read_text())
    if record.get("settings") != settings:
        return fresh
    if record.get("games") != games:
        full = [e for e in record["shards"] if e["games"] == shard_games]
        return dict(fresh, shards=full)
    return record


def merge_workers(folder, workers: int) -> dict | None:
    """Write the folder's ``manifest.json`` from the records of all ``workers`` (and the full shards of an earlier
    manifest) once every worker is done, then remove the records.  Returns the manifest, or None while a worker
    is missing or unfinished.  Raises ValueError if the records disagree or a shard is missing."""
    folder = Path(folder)
    records = []
    for w in range(workers):
        try:  # a record may vanish under us: another worker has just merged
            records.append(json.loads(worker_file(folder, w, workers).read_text()))
        except FileNotFoundError:
            return None
    if not all(r["done"] for r in records):
        return None
    settings, games = records[0]["settings"], records[0]["games"]
    counts = {(r["read"], r["kept"]) for r in records}
    if any(r["settings"] != settings or r["games"] != games for r in records) or len(counts) != 1:
        raise ValueError(f"the worker records in {folder} come from different runs; remove worker-*.json and "
                         "extract again")
    manifest = _open_manifest(folder, settings)
    shard_games = settings["shard_games"]
    entries = {i: e for i, e in enumerate(manifest["shards"]) if e["games"] == shard_games}
    for r in records:
        entries.update({e["index"]: {k: v for k, v in e.items() if k != "index"} for e in r["shards"]})
    kept = records[0]["kept"]
    needed = -(-kept // shard_games)
    missing = [i for i in range(needed) if i not in entries]
    if missing:
        raise ValueError(f"shards {missing} of {folder} were written by no worker")
    manifest.update(shards=[entries[i] for i in range(needed)], skipped=records[0]["skipped"],
                    read=records[0]["read"], damaged=records[0].get("damaged", []),
                    complete=(games is None or kept < games) and not records[0].get("damaged"))
    write_json_atomic(folder / MANIFEST, manifest)
    for w in range(workers):
        worker_file(folder, w, workers).unlink(missing_ok=True)
    return manifest


class Shard:
    """One shard, memory-mapped: ``codes`` uint32 [N, P+1], ``meta`` int16 [N, 4], ``games`` int32 [g+1]."""

    def __init__(self, folder, name: str, mmap: bool = True):
        mode = "r" if mmap else None
        folder = Path(folder)
        self.name = name
        self.codes = np.load(folder / f"{name}.codes.npy", mmap_mode=mode)
        self.meta = np.load(folder / f"{name}.meta.npy", mmap_mode=mode)
        self.games = np.load(folder / f"{name}.games.npy")

    def __len__(self) -> int:
        return len(self.meta)


def large_dictionary(folder):
    """The ``LargeDictionary`` a shard folder was extracted with, or None."""
    from jaxgo.features.large import LargeDictionary

    manifest = read_manifest(folder)
    wanted = (manifest or {}).get("settings", {}).get("large")
    if wanted is None:
        return None
    large = LargeDictionary.load(Path(folder) / LARGE_FILE)
    if large.fingerprint() != wanted["fingerprint"]:
        raise ValueError(f"{folder}/{LARGE_FILE} is not the dictionary the shards were extracted with")
    return large


def shard_names(folder) -> list[str]:
    manifest = read_manifest(folder)
    if manifest is None:
        raise FileNotFoundError(f"no {MANIFEST} in {folder} (run `jaxgo gammas extract` first)")
    return [s["name"] for s in manifest["shards"]]


def iter_shards(folder, mmap: bool = True) -> Iterator[Shard]:
    for name in shard_names(folder):
        yield Shard(folder, name, mmap=mmap)


def batches(codes, meta, batch_size: int, rows: tuple[int, int] | None = None):
    """Split one shard into fixed-size batches (last one padded): (codes uint32 [nb, B, P+1(, 2)], meta int16
    [nb, B, 4], valid bool [nb, B]); with ``rows=(lo, hi)`` only rows [lo, hi) of every batch (B = hi - lo)."""
    return batches_of([(codes, meta)], len(meta), batch_size, rows)


def batches_of(parts, total: int, batch_size: int, rows: tuple[int, int] | None = None):
    """``batches`` over the concatenation of ``parts`` = iterable of (codes, meta) holding ``total`` positions,
    copied straight into the padded arrays (no concatenated copy; a generator of memory maps is read one at a
    time).  Padding rows: move = pass, no previous moves, valid False.

    rows=(lo, hi): keep only rows [lo, hi) of every batch (one process's share of a multi-process run,
    ``jaxgo.learn.parallel.process_rows``): the arrays are then [nb, hi - lo, ...] and only those rows of the
    parts are read.
    """
    lo, hi = rows if rows is not None else (0, batch_size)
    width = hi - lo
    parts = iter(parts)
    first = next(parts, None)
    trailing = first[0].shape[1:] if first is not None else (362,)
    nb = max(1, -(-total // batch_size))
    c = np.zeros((nb * width,) + trailing, np.uint32)
    m = np.zeros((nb * width, 4), np.int16)
    m[:, META_MOVE] = trailing[0] - 1
    m[:, META_PREV:META_PREV2 + 1] = -1
    at = 0
    for codes, meta in itertools.chain([first] if first is not None else [], parts):
        n = len(meta)
        if width == batch_size:
            c[at:at + n] = codes
            m[at:at + n] = meta
        else:
            src, dst = _share(at, n, batch_size, lo, hi)
            c[dst] = codes[src]
            m[dst] = meta[src]
        at += n
    if at != total:
        raise ValueError(f"parts hold {at} positions, expected {total}")
    index = np.arange(nb)[:, None] * batch_size + np.arange(lo, hi)[None, :]  # global position of each row
    valid = index < total
    return (c.reshape((nb, width) + trailing), m.reshape(nb, width, 4), valid)


def _share(start: int, n: int, batch_size: int, lo: int, hi: int):
    """(source rows in a part, destination rows in the share) for the part holding global positions
    [start, start + n): the positions whose row in their batch is in [lo, hi)."""
    pos = np.arange(start, start + n)
    row = pos % batch_size
    keep = (row >= lo) & (row < hi)
    src = np.flatnonzero(keep)
    dst = pos[keep] // batch_size * (hi - lo) + row[keep] - lo
    return src, dst
