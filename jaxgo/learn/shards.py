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

from jaxgo.data.archives import SkipStats, is_pro_vs_pro, iter_records
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
    from jaxgo.features.games import games_codes

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"sources": [str(s) for s in sources], "shard_games": shard_games, "pro_only": pro_only}
    if size != 19:
        settings["size"] = size
    if large is not None:
        settings["large"] = {"fingerprint": large.fingerprint(), "entries": len(large)}
    manifest = read_manifest(folder)
    if manifest is None or manifest.get("settings") != settings:  # (read_manifest refuses other versions)
        if manifest is not None and manifest.get("shards"):
            raise ValueError(f"{folder} holds shards made with other settings ({manifest.get('settings')}); "
                             "use another folder")
        manifest = {"version": VERSION, "settings": settings, "shards": [], "complete": False, "skipped": {},
                    "read": 0}
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
        entry = write_shard(folder, f"shard-{index:05d}", games_codes(pending, batch=batch,
                                                                             large_dictionary=large))
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
    manifest["complete"] = games is None or stats.kept < games  # the sources ran out
    manifest["skipped"] = dict(stats.skipped)
    manifest["read"] = stats.read
    write_json_atomic(folder / MANIFEST, manifest)
    if bar is not None:
        bar.close()
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


def batches(codes, meta, batch_size: int):
    """Split one shard into fixed-size batches (last one padded): (codes uint32 [nb, B, P+1(, 2)], meta int16
    [nb, B, 4], valid bool [nb, B])."""
    return batches_of([(codes, meta)], len(meta), batch_size)


def batches_of(parts, total: int, batch_size: int):
    """``batches`` over the concatenation of ``parts`` = iterable of (codes, meta) holding ``total`` positions,
    copied straight into the padded arrays (no concatenated copy; a generator of memory maps is read one at a
    time).  Padding rows: move = pass, no previous moves, valid False."""
    parts = iter(parts)
    first = next(parts, None)
    trailing = first[0].shape[1:] if first is not None else (362,)
    nb = max(1, -(-total // batch_size))
    c = np.zeros((nb * batch_size,) + trailing, np.uint32)
    m = np.zeros((nb * batch_size, 4), np.int16)
    at = 0
    for codes, meta in itertools.chain([first] if first is not None else [], parts):
        c[at:at + len(meta)] = codes
        m[at:at + len(meta)] = meta
        at += len(meta)
    if at != total:
        raise ValueError(f"parts hold {at} positions, expected {total}")
    m[total:, META_MOVE] = trailing[0] - 1
    m[total:, META_PREV:META_PREV2 + 1] = -1
    valid = np.arange(nb * batch_size) < total
    return (c.reshape((nb, batch_size) + trailing), m.reshape(nb, batch_size, 4),
            valid.reshape(nb, batch_size))
