"""Libego (Łukasz Lew's C++ playout library), run as a peer to time against -- never linked or imported.

``engines(folder)`` builds Libego's engine for 9x9 and 19x19 once with the peer's own ``build.sh`` (source in
``<shared>/peers/libego``, ``JAXGO_LIBEGO_SOURCE`` to point elsewhere) into ``folder`` (default
``~/.cache/jaxgo/libego``) and returns the binaries; ``benchmark`` runs its GTP command ``benchmark_light N``
(uniform light playouts) or ``benchmark N`` (its 3x3-gamma sampler) in one or more processes at once and reads
the rate it reports (playouts per second of its process's user CPU time).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jaxgo.util.paths import data_dir

SIZES = (9, 19)


def source_dir() -> Path:
    """Libego's source folder: ``JAXGO_LIBEGO_SOURCE``, else ``peers/libego`` beside the shared data."""
    env = os.environ.get("JAXGO_LIBEGO_SOURCE")
    return Path(env) if env else data_dir().parent / "peers" / "libego"


def engines(folder: str | None = None) -> dict[int, Path] | str:
    """{size: engine binary} for 9 and 19, built on first use; or the reason there are none (a string)."""
    out = Path(folder or Path.home() / ".cache" / "jaxgo" / "libego")
    found = {size: out / f"engine{size}" for size in SIZES}
    if all(path.is_file() for path in found.values()):
        return found
    source = source_dir()
    if not (source / "build.sh").is_file():
        return f"no Libego source at {source} (set JAXGO_LIBEGO_SOURCE)"
    missing = [tool for tool in ("cmake", "g++", "make") if shutil.which(tool) is None]
    if missing:
        return f"cannot build Libego: {', '.join(missing)} not found"
    out.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["bash", str(source / "build.sh"), str(out)], capture_output=True, text=True)
    if result.returncode != 0 or not all(path.is_file() for path in found.values()):
        return f"Libego build failed: {result.stderr.strip()[-300:]}"
    return found


def playouts_for(size: int, policy: str) -> int:
    """Playouts per Libego run: about a second of one core."""
    light = policy == "light"
    return (80000 if light else 40000) if size <= 9 else (20000 if light else 10000)


def parse_report(text: str) -> dict:
    """Libego's benchmark report -> {"playouts", "seconds", "mean_moves", "black_wins", "white_wins"}."""
    head = re.search(r"(\d+) playouts in ([\d.e+-]+) seconds", text)
    wins = re.search(r"(\d+)/(\d+) \(black wins / white wins\)", text)
    moves = re.search(r"AVG moves/playout = ([\d.e+-]+)", text)
    if not (head and wins and moves):
        raise ValueError(f"unexpected Libego report: {text[-300:]!r}")
    return {"playouts": int(head.group(1)), "seconds": float(head.group(2)), "mean_moves": float(moves.group(1)),
            "black_wins": int(wins.group(1)), "white_wins": int(wins.group(2))}


def run_once(engine: Path, policy: str, playouts: int) -> dict:
    """One Libego process: its parsed report (the light benchmark for ``light``, the 3x3 sampler otherwise)."""
    command = f"benchmark_light {playouts}" if policy == "light" else f"benchmark {playouts}"
    gammas = source_dir() / "bin"  # the 3x3 sampler reads 3x3.gamma from the working folder
    cwd = gammas if (gammas / "3x3.gamma").is_file() else engine.parent
    result = subprocess.run([str(engine), command, "quit"], capture_output=True, text=True, cwd=cwd, timeout=600)
    return parse_report(result.stdout + result.stderr)


def benchmark(engine: Path, policy: str, playouts: int, processes: int = 1) -> dict:
    """A ``jaxgo bench playouts`` record of ``processes`` Libego processes run at once (their rates added)."""
    with ThreadPoolExecutor(processes) as pool:
        reports = list(pool.map(lambda _: run_once(engine, policy, playouts), range(processes)))
    size = int(re.search(r"engine(\d+)", engine.name).group(1))
    total = sum(r["playouts"] for r in reports)
    rate = sum(r["playouts"] / max(r["seconds"], 1e-9) for r in reports)
    mean_moves = sum(r["mean_moves"] * r["playouts"] for r in reports) / total
    black = sum(r["black_wins"] for r in reports) / max(1, sum(r["black_wins"] + r["white_wins"] for r in reports))
    return {"system": "libego", "device": "cpu", "devices": 1, "size": size, "batch": total, "compile_s": 0.0,
            "playouts_per_s": round(rate, 1), "moves_per_s": round(rate * mean_moves, 1),
            "mean_moves": round(mean_moves, 2), "black_win_rate": round(black, 4),
            "policy": "light" if policy == "light" else "3x3-gamma", "threads": processes}
