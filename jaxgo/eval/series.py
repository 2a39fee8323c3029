"""The logs and game records of strength series against GNU Go or Pachi (``jaxgo eval strength``).

A series is the games of one configuration: (board size, label, strategy, playouts per move, clock, opponent), its
``series_key`` (the opponent as ``opponent_tag`` names it: ``gnugo``, ``pachi``, ``pachi =5000`` where Pachi's
playouts differ from jaxgo's, `` H3`` added for three handicap stones). Its log holds one JSON line per game, plain
or gzip-compressed (``X.jsonl`` or ``X.jsonl.gz``, either name finds the other: ``resolve``); its SGFs are the
folders ``STRATEGY_BUDGET_FIRST/game_K.sgf`` that ``run --sgf-dir`` writes, or tars of them (``sgf_sources``).
``add_series_arguments`` / ``series_selection`` pick one series and its SGFs for the commands that read a finished
series (``jaxgo.eval.strength_audit``)."""

from __future__ import annotations

import gzip
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from jaxgo.go.gtp_client import find_gnugo
from jaxgo.match import sgf_files

DEFAULT_ENGINE = f"{shlex.quote(sys.executable)} -m jaxgo gtp"
OPPONENTS = ("gnugo", "pachi")
PACHI_MIN_PLAYOUTS = 500  # Pachi refuses `-t =N` below this
# Where scripts/pachi.sh builds Pachi (the checkout's git-ignored .peers/pachi); JAXGO_PACHI names another binary.
PACHI_BUILD = Path(__file__).resolve().parents[2] / ".peers" / "pachi" / "pachi"


def engine_command(strategy: str, playouts: int | None, extra: str = "", engine: str = DEFAULT_ENGINE,
                   size: int = 9) -> str:
    """The jaxgo GTP command of one configuration (``playouts`` None: the budget comes from the clock)."""
    budget = f"--playouts {playouts} " if playouts else ""
    return (f"{engine} --quiet --size {size} --komi 7.5 --strategy {strategy} "
            f"{budget}--seed {{seed}} {extra}").strip()


def series_key(rec: dict) -> tuple:
    """(size, label, strategy, playouts, time, opponent tag) of a game record; records from before sizes, clocks
    and opponents were logged are 9x9 games against GNU Go without a clock."""
    return (rec.get("size", 9), rec.get("label", ""), rec["strategy"], rec.get("playouts"), rec.get("time"),
            opponent_tag(rec))


def opponent_tag(rec: dict) -> str:
    """The opponent of a game record in a word or two: ``gnugo`` (also for old records), ``pachi``, ``pachi =N``
    where Pachi played N playouts per move against jaxgo's other number, and `` Hn`` after it for n handicap
    stones given by jaxgo."""
    name = rec.get("opponent") or "gnugo"
    own = rec.get("opponent_playouts")
    tag = f"{name} ={own}" if own and own != rec.get("playouts") else name
    return tag + (f" H{rec['handicap']}" if rec.get("handicap") else "")


def resolve(log: Path) -> Path:
    """The file a log name refers to: the name itself, else its ``.gz`` twin (X.jsonl <-> X.jsonl.gz)."""
    if log.exists():
        return log
    twin = log.with_suffix("") if log.suffix == ".gz" else log.with_name(log.name + ".gz")
    return twin if twin.exists() else log


def open_log(log: Path, mode: str):
    """Open a log as text, through gzip when its name ends in ``.gz`` (append mode adds a gzip member)."""
    if log.suffix == ".gz":
        return gzip.open(log, mode + "t", encoding="utf-8")
    return log.open(mode, encoding="utf-8")


def load(log: Path) -> list[dict]:
    log = resolve(log)
    if not log.exists():
        return []
    with open_log(log, "r") as f:
        return [json.loads(line) for line in f.read().splitlines() if line.strip()]


def gnugo_command(level: int) -> str | None:
    """The GNU Go opponent's command at ``level`` (Chinese rules), or None (with a message) if it is missing."""
    gnugo = find_gnugo()
    if gnugo is None:
        print("gnugo not found (apt-get install -y gnugo)", file=sys.stderr)
        return None
    return f"{gnugo} --mode gtp --chinese-rules --level {level}"


def find_pachi() -> str | None:
    """The Pachi binary: ``$JAXGO_PACHI``, else the one ``scripts/pachi.sh`` built (``PACHI_BUILD``), else
    ``pachi`` on the PATH; None when there is none."""
    named = os.environ.get("JAXGO_PACHI")
    if named:
        return named if os.access(named, os.X_OK) else None
    if os.access(PACHI_BUILD, os.X_OK):
        return str(PACHI_BUILD)
    return shutil.which("pachi")


def pachi_command(binary: str, playouts: int | None, threads: int = 2, seed: int = 0, options: str = "") -> str:
    """Pachi's GTP command: ``playouts`` per move (``-t =N``; None: the GTP clock the referee sends), on
    ``threads`` threads, random seed ``seed``, without board diagrams on stderr (Chinese rules are its default;
    komi and handicap come by GTP); ``options``: more of its engine options (``name=value,...``)."""
    budget = f"-t ={playouts} " if playouts else ""
    extra = f",{options}" if options else ""
    return f"{shlex.quote(binary)} -D -d 0 -s {seed} {budget}threads={threads}{extra}"


def opponent_command(name: str, level: int = 10, playouts: int | None = None, threads: int = 2,
                     seed: int = 0) -> str | None:
    """The GTP command of the opponent ``name`` (``OPPONENTS``): GNU Go at ``level``, or Pachi at ``playouts``
    per move on ``threads`` threads; None (with a message on stderr) when it is missing."""
    if name == "gnugo":
        return gnugo_command(level)
    if name != "pachi":
        raise ValueError(f"unknown opponent {name!r}; one of {OPPONENTS}")
    binary = find_pachi()
    if binary is None:
        print("pachi not found: build it with `bash scripts/pachi.sh` (from ../shared/peers/pachi) or name a "
              "binary in JAXGO_PACHI", file=sys.stderr)
        return None
    return pachi_command(binary, playouts, threads, seed)


def budget_text(playouts, time) -> str:
    return f"{playouts} playouts" if playouts else f"clock {time}"


def sgf_sources(path: Path, folder: str | None = None) -> dict:
    """{(strategy, budget text, game number): [SGF bytes, ...]} of a ``run --sgf-dir`` folder or a tar of
    one or more (``STRATEGY_BUDGET_FIRST/game_K.sgf`` holds game FIRST + K of its series; series with other labels
    kept in other folders give more than one candidate, told apart by ``series_game``, or by ``folder``: only the
    tar's members under that top folder)."""
    import re

    pattern = re.compile(r"([a-z0-9]+)_([^/_]+)_(\d{4})/game_(\d{4})\.sgf$")
    found = {}
    for name, data in sgf_files(path, folder or None).items():
        match = pattern.search(name)
        if match:
            strategy, budget, first, index = match.groups()
            found.setdefault((strategy, budget, int(first) + int(index)), []).append(data)
    return found


def series_game(candidates: list, moves: int):
    """The one game record among ``candidates`` (SGF bytes) with ``moves`` moves; ValueError if none or more."""
    from jaxgo.go.sgf import load_sgf

    records = [record for record in (load_sgf(data) for data in candidates) if len(record.moves) == moves]
    if len(records) != 1:
        raise ValueError(f"{len(records)} of {len(candidates)} SGF files have the logged {moves} moves")
    return records[0]


def add_series_arguments(parser) -> None:
    """The options that pick one series and its SGFs (``audit``, ``ladders``, ``swings``)."""
    parser.add_argument("--log", required=True, help="the series' log (.jsonl or .jsonl.gz)")
    parser.add_argument("--size", type=int, default=9, help="the series' board size (default 9)")
    parser.add_argument("--sgf-dir", required=True, help="the series' --sgf-dir folder, or a tar of it")
    parser.add_argument("--sgf-folder", default=None, help="in a tar of several series: the series' top folder")
    parser.add_argument("--label", default="")
    parser.add_argument("--strategy", default="rave")
    parser.add_argument("--playouts", type=int, default=None, help="the series' playouts per move")
    parser.add_argument("--time", default=None, help="the series' clock (MAIN:BYOYOMI:STONES)")
    parser.add_argument("--series-opponent", default="gnugo", metavar="TAG",
                        help="the series' opponent as the report names it: gnugo (default), pachi, 'pachi =5000'")


def series_selection(args) -> tuple[dict, list, str]:
    """(SGF sources, the series' log records, its budget as the SGF folders name it) of ``add_series_arguments``."""
    sources = sgf_sources(Path(args.sgf_dir), args.sgf_folder)
    wanted = (args.size, args.label, args.strategy, args.playouts, args.time, args.series_opponent)
    series = [r for r in load(Path(args.log)) if series_key(r) == wanted]
    budget = str(args.playouts) if args.playouts else args.time.replace(":", "-")
    return sources, series, budget
