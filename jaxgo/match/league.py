"""Round-robin tournaments of any number of GTP engines (gomill's ringmaster, the everyday part): the TOML
description, the schedule, a resumable results file of JSON lines, the standings with Elo ratings."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from jaxgo.go.coords import BLACK, WHITE
from jaxgo.match.clock import TimeControl
from jaxgo.match.referee import CpuShares, play_game
from jaxgo.match.stats import ELO_METHOD, bradley_terry_elo, wilson_interval

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
TOURNAMENT_KEYS = {"players", "board_size", "size", "komi", "games", "time", "max_moves", "timeout", "results",
                   "sgf_dir", "log_dir", "parallel", "anchor"}
RESULTS_VERSION = 1


@dataclasses.dataclass(frozen=True)
class Entrant:
    """A tournament's entrant (a player of the tournament file, not the engine's ``search.player.Player``): a
    name (letters, digits, ``_.+-``), its command line (``{seed}`` is replaced by the game's number in the
    schedule) and GTP commands sent after ``boardsize``/``clear_board``/``komi``."""

    name: str
    command: str
    setup: tuple = ()


@dataclasses.dataclass(frozen=True)
class Tournament:
    """A round robin: every pair of ``players`` plays ``games`` games, colours alternating (game k of the pair
    (a, b), a listed first, has a as Black when k is even); results go to the JSON-lines file ``results``, one
    SGF per game to ``sgf_dir`` and each engine's stderr to ``log_dir``/NAME.log."""

    players: tuple
    size: int = 9
    komi: float = 7.5
    games: int = 2
    time_control: TimeControl | None = None
    max_moves: int | None = None
    timeout: float = 120.0
    results: str = "jaxgo-match.jsonl"
    sgf_dir: str | None = None
    log_dir: str | None = None
    parallel: int = 1
    anchor: str | None = None

    def __post_init__(self):
        names = [p.name for p in self.players]
        if len(names) < 2:
            raise ValueError("a tournament needs at least two players")
        bad = [n for n in names if not NAME_PATTERN.fullmatch(n)]
        if bad:
            raise ValueError(f"player names may hold letters, digits and _.+- only: {bad}")
        if len(set(names)) != len(names):
            raise ValueError(f"player names must differ: {names}")
        if not 2 <= self.size <= 19:
            raise ValueError(f"board size must be in 2..19, got {self.size}")
        if not abs(self.komi) <= 150:
            raise ValueError(f"komi must be in [-150, 150], got {self.komi}")
        if self.games < 1 or self.parallel < 1 or self.timeout <= 0:
            raise ValueError("games and parallel must be at least 1 and timeout positive")
        if self.anchor is not None and self.anchor not in names:
            raise ValueError(f"anchor {self.anchor!r} is not a player ({names})")

    def schedule(self) -> list[dict]:
        """Every game in play order: round k holds game k of every pairing."""
        pairs = list(itertools.combinations([p.name for p in self.players], 2))
        return [{"id": f"{a}:{b}:{k}", "pair": [a, b], "index": k, "black": a if k % 2 == 0 else b,
                 "white": b if k % 2 == 0 else a} for k in range(self.games) for a, b in pairs]

    def settings(self) -> dict:
        """What the results depend on (the results file's first line; a rerun with other settings is refused)."""
        control = dataclasses.asdict(self.time_control) if self.time_control else None
        return {"size": self.size, "komi": self.komi, "time": control, "max_moves": self.max_moves}

    def player(self, name: str) -> Entrant:
        return next(p for p in self.players if p.name == name)


def load_tournament(path, **overrides) -> Tournament:
    """A ``Tournament`` from a TOML file::

        board_size = 7            # (or size)
        komi = 7.5
        games = 4                 # per pairing
        time = "60:5:1"           # MAIN[:BYOYOMI[:STONES]] seconds, or a table {main, byoyomi, stones, grace}
        results = "league.jsonl"  # default: the file's name with .jsonl; sgf_dir / log_dir: NAME-games / NAME-logs
        [players]
        gnugo = "gnugo --mode gtp --level 0"
        random = {command = "jaxgo gtp --strategy random --seed {seed}", setup = ["komi 7.5"]}

    Relative paths are relative to the file's folder; ``overrides`` (Tournament fields, None = keep) win over
    the file.  Unknown keys raise ValueError (a typo should not silently change a tournament)."""
    import tomllib

    path = Path(path)
    with open(path, "rb") as handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: {exc}") from None
    unknown = sorted(set(data) - TOURNAMENT_KEYS)
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown} (known: {sorted(TOURNAMENT_KEYS)})")
    players = _players_of(data.get("players"), path)
    folder = path.parent
    fields = {"players": players, "size": data.get("board_size", data.get("size", 9)), "komi": data.get("komi", 7.5),
              "games": data.get("games", 2), "time_control": _time_of(data.get("time")),
              "max_moves": data.get("max_moves"), "timeout": data.get("timeout", 120.0),
              "results": str(folder / data.get("results", path.with_suffix(".jsonl").name)),
              "sgf_dir": str(folder / data.get("sgf_dir", f"{path.stem}-games")),
              "log_dir": str(folder / data.get("log_dir", f"{path.stem}-logs")),
              "parallel": data.get("parallel", 1), "anchor": data.get("anchor")}
    fields.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Tournament(**fields)
    except TypeError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _players_of(table, path) -> tuple:
    """Entrants from the TOML ``[players]`` table (name = command, or name = {command, setup})."""
    if not isinstance(table, dict) or not table:
        raise ValueError(f"{path}: a [players] table with name = \"command\" lines is needed")
    players = []
    for name, value in table.items():
        if isinstance(value, str):
            players.append(Entrant(name, value))
        elif isinstance(value, dict) and isinstance(value.get("command"), str):
            setup = value.get("setup", [])
            if not isinstance(setup, list) or not all(isinstance(s, str) for s in setup):
                raise ValueError(f"{path}: players.{name}.setup must be a list of GTP commands")
            players.append(Entrant(name, value["command"], tuple(setup)))
        else:
            raise ValueError(f"{path}: players.{name} must be a command string or a table with 'command'")
    return tuple(players)


def _time_of(value) -> TimeControl | None:
    if value is None:
        return None
    if isinstance(value, str):
        return TimeControl.parse(value)
    if isinstance(value, dict):
        try:
            return TimeControl(**value)
        except TypeError as exc:
            raise ValueError(f"time control table: {exc} (keys: main, byoyomi, stones, grace)") from None
    raise ValueError(f"time control: expected \"MAIN[:BYOYOMI[:STONES]]\" or a table, got {value!r}")


def parse_players(items: list[str]) -> tuple:
    """``--player NAME=COMMAND`` options -> Entrants."""
    players = []
    for item in items:
        name, sep, command = item.partition("=")
        if not sep or not command.strip():
            raise ValueError(f"--player {item!r}: expected NAME=COMMAND")
        players.append(Entrant(name.strip(), command.strip()))
    return tuple(players)


def read_results(path, settings: dict) -> list[dict]:
    """The game records of a results file (none when it does not exist yet).  Its first line holds the
    tournament settings: a file written for others raises ValueError.  A last line cut by an interruption is
    ignored (that game is played again)."""
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            obj = json.loads(line)
        except ValueError:
            if number == len(lines):
                break  # an interrupted write
            raise ValueError(f"{path}:{number}: not a JSON line") from None
        if number == 1:
            if obj.get("settings") != settings:
                raise ValueError(f"{path} holds results of a tournament with other settings ({obj.get('settings')}, "
                                 f"now {settings}); use another results file")
            continue
        records.append(obj)
    return records


class ResultsFile:
    """The JSON-lines results file: a settings line, then one line per finished game, each flushed to disk when
    the game ends, so an interrupted tournament loses only the games in progress."""

    def __init__(self, path, settings: dict):
        self.path = Path(path)
        self.lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists() or self.path.stat().st_size == 0:
            self._append({"settings": settings, "version": RESULTS_VERSION})
        else:
            self._end_cleanly()

    def _end_cleanly(self) -> None:
        """Drop a last line cut by an interruption, so the next record starts on its own line."""
        data = self.path.read_bytes()
        if not data.endswith(b"\n"):
            self.path.write_bytes(data[:data.rfind(b"\n") + 1])

    def _append(self, obj: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(obj) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def add(self, record: dict) -> None:
        with self.lock:
            self._append(record)


def run_tournament(tournament: Tournament, progress=None, pin: bool = True) -> dict:
    """Play the games of ``tournament`` that its results file does not hold yet (a rerun continues), then
    return ``tournament_summary`` of all of them.  Games are recorded by this (the main) thread as they finish,
    so on KeyboardInterrupt no further game starts and the games in progress, whose engines got the interrupt
    too, are not recorded: a rerun plays them again."""
    settings = tournament.settings()
    done = read_results(tournament.results, settings)
    _check_commands(tournament, done)
    results = ResultsFile(tournament.results, settings)
    finished = {r["id"] for r in done}
    todo = [(number, game) for number, game in enumerate(tournament.schedule()) if game["id"] not in finished]
    new = []
    shares = CpuShares(tournament.parallel, pin)
    pool = ThreadPoolExecutor(max_workers=tournament.parallel)
    try:
        futures = [pool.submit(play_scheduled, tournament, game, number, shares) for number, game in todo]
        for future in as_completed(futures):
            record = future.result()
            results.add(record)
            new.append(record)
            if progress:
                print(json.dumps({k: record.get(k) for k in ("id", "black", "white", "result", "reason", "moves")}),
                      file=progress, flush=True)
    except KeyboardInterrupt:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    return tournament_summary(tournament, done + new)


def _check_commands(tournament: Tournament, done: list[dict]) -> None:
    """A player whose command changed since its recorded games would mix two engines under one name."""
    for record in done:
        for name, command in record.get("commands", {}).items():
            if any(p.name == name for p in tournament.players) and tournament.player(name).command != command:
                raise ValueError(f"player {name}'s command changed since game {record['id']} of {tournament.results} "
                                 f"({command!r} -> {tournament.player(name).command!r}); rename the player or use "
                                 "another results file")


def play_scheduled(tournament: Tournament, game: dict, number: int, shares: CpuShares | None = None) -> dict:
    """Play one game of the schedule (``number``: its place, given to ``{seed}``) on a CPU share of ``shares``;
    the results-file record."""
    black, white = tournament.player(game["black"]), tournament.player(game["white"])
    sgf = None
    if tournament.sgf_dir:
        sgf = str(Path(tournament.sgf_dir) / f"{game['id'].replace(':', '_')}.sgf")
    logs = {}
    try:
        if tournament.log_dir:
            Path(tournament.log_dir).mkdir(parents=True, exist_ok=True)
            for colour, player in ((BLACK, black), (WHITE, white)):
                logs[colour] = open(Path(tournament.log_dir) / f"{player.name}.log", "a", encoding="utf-8")
        start = time.time()
        with (shares.take() if shares else contextlib.nullcontext()) as cpus:
            record = play_game(black.command.replace("{seed}", str(number)),
                               white.command.replace("{seed}", str(number)), tournament.size, tournament.komi,
                               tournament.max_moves, tournament.timeout, sgf, black.name, white.name, logs or None,
                               tournament.time_control, {BLACK: black.setup, WHITE: white.setup}, cpus=cpus)
    finally:
        for handle in logs.values():
            handle.close()
    winner = {BLACK: black.name, WHITE: white.name}.get(record["winner"])
    out = dict(game, winner=winner, result=record.get("result"), reason=record.get("reason"),
               moves=record.get("moves"), seconds=round(time.time() - start, 1), sgf=sgf,
               commands={black.name: black.command, white.name: white.command})
    for key in ("forfeit", "exit_status", "engine_scores", "score"):
        if key in record:
            out[key] = record[key]
    return out


def tournament_summary(tournament: Tournament, records: list[dict]) -> dict:
    """Standings (games, wins, losses, draws, forfeits, time losses, crashes, Elo with its 95% interval), every
    pairing's score with its Wilson interval, and the number of games still to play."""
    names = [p.name for p in tournament.players]
    records = [r for r in records if r["black"] in names and r["white"] in names]
    pairs = list(itertools.combinations(names, 2))
    ratings = bradley_terry_elo(names, [(r["black"], r["white"], r["winner"]) for r in records], pairs,
                                anchor=tournament.anchor)
    standings = []
    for name in names:
        mine = [r for r in records if name in (r["black"], r["white"])]
        wins = sum(r["winner"] == name for r in mine)
        draws = sum(r["winner"] is None for r in mine)
        standings.append({"player": name, "games": len(mine), "wins": wins, "losses": len(mine) - wins - draws,
                          "draws": draws, "forfeits": sum(r.get("forfeit") == name for r in mine),
                          "time_losses": sum(r.get("forfeit") == name and "+Time" in (r.get("result") or "")
                                             for r in mine),
                          "crashes": sum(name in r.get("exit_status", {}) for r in mine), **ratings[name]})
    pairings = []
    for a, b in pairs:
        games = [r for r in records if {r["black"], r["white"]} == {a, b}]
        a_wins = sum(r["winner"] == a for r in games)
        b_wins = sum(r["winner"] == b for r in games)
        draws = len(games) - a_wins - b_wins
        low, high = wilson_interval(a_wins + 0.5 * draws, len(games))
        pairings.append({"a": a, "b": b, "games": len(games), "a_wins": a_wins, "b_wins": b_wins, "draws": draws,
                         "a_score": (a_wins + 0.5 * draws) / len(games) if games else None, "a_ci95": [low, high]})
    return {"players": standings, "pairings": pairings, "games": len(records),
            "remaining": len(tournament.schedule()) - len({r["id"] for r in records}),
            "size": tournament.size, "komi": tournament.komi, "results": tournament.results,
            "elo_method": ELO_METHOD}


def standings_table(summary: dict) -> str:
    """The standings as text (for stderr)."""
    width = max(6, *(len(p["player"]) for p in summary["players"]))
    lines = [f"{'player':<{width}}  games  wins  losses  draws  forfeits  crashes      Elo   95% interval"]
    for p in sorted(summary["players"], key=lambda p: -p["elo"]):
        low, high = p["elo_ci95"]
        lines.append(f"{p['player']:<{width}}  {p['games']:>5}  {p['wins']:>4}  {p['losses']:>6}  {p['draws']:>5}  "
                     f"{p['forfeits']:>8}  {p['crashes']:>7}  {p['elo']:>+7.0f}   [{low:+.0f}, {high:+.0f}]")
    lines.append(f"{summary['games']} games played, {summary['remaining']} to play; results in {summary['results']}")
    return "\n".join(lines)
