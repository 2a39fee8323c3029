"""``jaxgo match``: play GTP engines against each other, refereed by jaxgo's rules: a match of two engines, or a
round-robin tournament of any number (the everyday use of gomill's ringmaster, in Python 3).

Two engines (the default jaxgo against GNU Go, or any two commands)::

    jaxgo match --black "jaxgo gtp --playouts 1000" --white "gnugo --mode gtp --level 10" \\
        --size 9 --komi 7.5 --games 10 --alternate --sgf-dir games/ --parallel 1

Engine A is ``--black`` and engine B ``--white``; with ``--alternate`` they swap colours every other game; a JSON
summary on stdout with the wins of each engine, A's win rate and its 95% Wilson interval.  Without
``--black``/``--white`` the engines are jaxgo (``--playouts``, ``--strategy``) and GNU Go (``--level``).

A tournament (``jaxgo match league.toml``, or ``--player NAME=COMMAND`` two or more times)::

    board_size = 7
    komi = 7.5
    games = 4                      # per pairing; colours alternate
    time = "30:2:1"                # optional: MAIN[:BYOYOMI[:STONES]] seconds (Canadian byo-yomi)
    [players]
    gnugo0 = "gnugo --mode gtp --level 0"
    random = "jaxgo gtp --strategy random --seed {seed}"
    rave = {command = "jaxgo gtp --playouts 500", setup = ["komi 7.5"]}

Every pair of players meets ``games`` times, round by round.  Each finished game is one line of the results file
(JSON lines, default ``league.jsonl`` beside the TOML file; its first line holds the board size, komi, time
control and move limit), so a rerun of the same command plays only the games still missing (an interrupted
run loses only the games in progress; more ``games`` or a new player extend the schedule; other settings, or a
player whose command changed, are refused).  One SGF per game (``league-games/``) and each engine's stderr
(``league-logs/NAME.log``).  The standings go to stderr as a table and to stdout as JSON: per player games,
wins, losses, draws, forfeits, time losses, crashes and the Elo rating with its 95% interval; per pairing the
score with its Wilson interval.  ``--report`` prints them without playing.

Elo: Bradley-Terry maximum a posteriori (Hunter's MM iterations; a draw is half a win) with one virtual draw per
pairing as the prior (BayesElo's choice: a perfect score gets a finite rating), 95% intervals from the normal
approximation (the inverse of the posterior's information matrix); ratings are relative to the players' mean,
or to ``--anchor NAME`` (``anchor`` in the TOML file) rated 0.  With few games the intervals are wide and the
prior pulls ratings together; both are stated, not hidden.

Refereeing (``jaxgo.go.game``, positional superko, suicide forbidden): an illegal move, a crash, a timeout or a
garbled answer loses the game for that engine and the tournament goes on; a crashed engine's exit status is
recorded (``exit_status``, by player; negative: killed by that signal).  After two passes the dead stones are
settled by both engines' ``final_status_list dead``; when the lists differ the game is played on with
``kgs-genmove_cleanup`` (or ``genmove``) until two more passes, and then counted as it stands (Tromp-Taylor).
Each engine's own ``final_score`` is recorded too.  ``{seed}`` in an engine command is replaced by the game
number (deterministic engines then play different games).  Commands are split like a shell's words and run
without a shell (``jaxgo`` must be on PATH, e.g. ``.venv/bin`` activated, or give its full path).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import math
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from jaxgo.go.coords import BLACK, WHITE, colour_letter, gtp_to_point, point_to_gtp
from jaxgo.go.gtp_client import GtpError, GtpFailure, GtpProcess
from jaxgo.go.gtp_client import find_gnugo


def wilson_interval(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(wins_a: float, games_a: int, wins_b: float, games_b: int,
                        z: float = 1.96) -> tuple[float, float, float]:
    """(difference, low, high): the win rate of a minus that of b, with Newcombe's hybrid score interval (his
    method 10, built from the two Wilson intervals; independent samples)."""
    if not (games_a and games_b):
        raise ValueError("both samples need at least one game")
    p_a, p_b = wins_a / games_a, wins_b / games_b
    low_a, high_a = wilson_interval(wins_a, games_a, z)
    low_b, high_b = wilson_interval(wins_b, games_b, z)
    d = p_a - p_b
    return (d, d - math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2),
            d + math.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2))


def sgf_files(path, folder: str | None = None) -> dict[str, bytes]:
    """{name: bytes} of the ``.sgf`` files of a game folder (as ``run_match(sgf_dir=...)`` writes them; names
    relative to it) or of a tar of such folders (member names; any compression ``tarfile`` reads).  ``folder``:
    only the files under that top folder.  A tar is read at once: a compressed tar cannot be read from two
    threads."""
    import tarfile

    path = Path(path)
    if path.is_dir():
        found = {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*.sgf")}
    else:
        with tarfile.open(path) as archive:
            found = {m.name: archive.extractfile(m).read()
                     for m in archive.getmembers() if m.isfile() and m.name.endswith(".sgf")}
    return {name: data for name, data in found.items() if folder is None or name.split("/")[0] == folder}


def read_game_records(paths, folder: str | None = None) -> tuple[list, int]:
    """([(name, ``jaxgo.go.sgf.GameRecord``)] sorted by name, number of unreadable records skipped) of the SGF
    files, game folders and tars of them named in ``paths``; ``folder`` as in ``sgf_files`` (for folders and
    tars).  Names: a file's path, or ``FOLDER_OR_TAR:MEMBER``."""
    import tarfile

    from jaxgo.go.sgf import SGFError, load_sgf

    blobs = {}
    for path in map(Path, paths):
        if path.is_dir() or tarfile.is_tarfile(path):
            blobs.update({f"{path}:{name}": data for name, data in sgf_files(path, folder).items()})
        else:
            blobs[str(path)] = path.read_bytes()
    records, broken = [], 0
    for name in sorted(blobs):
        try:
            records.append((name, load_sgf(blobs[name])))
        except SGFError:
            broken += 1
    return records, broken


def _result_text(score: float) -> str:
    return f"B+{score:g}" if score > 0 else (f"W+{-score:g}" if score < 0 else "0")


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


class CpuShares:
    """One share of this process's CPUs per game played at once (``with shares.take() as cpus``), so that two
    games on two cores run one per core instead of four engines' threads competing for both (the engines of
    one game take turns, so they share their game's cores).  Off (``take`` gives None) for one game at a time,
    with ``pin=False``, or where the CPU affinity cannot be read (not Linux)."""

    def __init__(self, parallel: int, pin: bool = True):
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self.shares = cpu_shares(cpus, parallel) if pin and parallel > 1 and len(cpus) > 1 else []
        self.free: queue.SimpleQueue = queue.SimpleQueue()
        for share in self.shares:
            self.free.put(share)

    @contextlib.contextmanager
    def take(self):
        if not self.shares:
            yield None
            return
        share = self.free.get()
        try:
            yield share
        finally:
            self.free.put(share)


def cpu_shares(cpus: list[int], parallel: int) -> list[tuple[int, ...]]:
    """``parallel`` CPU sets from ``cpus``: disjoint, as even as possible when there are enough CPUs, else
    one CPU each, reused round-robin (e.g. 2 CPUs, 2 games: (0,), (1,); 4 CPUs, 2 games: (0, 1), (2, 3))."""
    if parallel < 1 or not cpus:
        raise ValueError("need at least one game and one CPU")
    if parallel >= len(cpus):
        return [(cpus[i % len(cpus)],) for i in range(parallel)]
    base, extra = divmod(len(cpus), parallel)
    shares, start = [], 0
    for i in range(parallel):
        size = base + (1 if i < extra else 0)
        shares.append(tuple(cpus[start:start + size]))
        start += size
    return shares


def play_game(black_cmd: str, white_cmd: str, size: int = 9, komi: float = 7.5, max_moves: int | None = None,
              timeout: float = 120.0, sgf_path: str | None = None, black_name: str = "black",
              white_name: str = "white", stderr=None, time_control: TimeControl | None = None,
              setup: dict | None = None, cpus=None, opening=None) -> dict:
    """Play one game; returns a record with winner (BLACK / WHITE / 0), result, reason, moves and scores.

    ``stderr``: a file for both engines' stderr, or a dict {BLACK: file, WHITE: file}; ``setup``: {colour: [GTP
    commands]} sent after boardsize / clear_board / komi; ``time_control``: both sides' clocks (a loss on time
    is ``B+Time`` / ``W+Time``).  An engine that exits on its own (a crash) has its exit status in
    ``exit_status`` (by name; negative: killed by that signal).  ``cpus``: both engines run on these CPUs only
    (``CpuShares``: games played at once do not compete for the same cores).
    """
    from jaxgo.go.game import IllegalMove, new_game
    from jaxgo.go.sgf import game_to_sgf

    game = new_game(size=size, komi=komi)
    max_moves = max_moves or 3 * size * size
    engines = {}
    names = {BLACK: black_name, WHITE: white_name}
    clocks = {c: GameClock(time_control) for c in (BLACK, WHITE)} if time_control else {}
    record = {"black": black_name, "white": white_name, "moves": 0, "reason": "", "winner": 0}

    def forfeit(color, reason, letter="Forfeit"):
        record.update(winner=-color, reason=reason, result=colour_letter(-color) + f"+{letter}",
                      forfeit=names[color])

    try:
        for color, command in ((BLACK, black_cmd), (WHITE, white_cmd)):
            try:
                log = stderr.get(color) if isinstance(stderr, dict) else stderr
                engine = GtpProcess(command, timeout, log, cpus=cpus)
                engines[color] = engine
                engine.set_position(size, komi)
                for line in (setup or {}).get(color, []):
                    engine.send(line)
                if time_control:
                    engine.try_send(time_control.gtp_settings())
            except (GtpError, GtpFailure, OSError, ValueError) as exc:
                forfeit(color, f"setup failed: {exc}")
                return record
        for color, move in opening or ():
            game.play(color, move)
            for side, engine in engines.items():
                try:
                    engine.send(f"play {'black' if color == BLACK else 'white'} {point_to_gtp(move, size)}")
                except (GtpError, GtpFailure) as exc:
                    forfeit(side, f"rejected the opening move {point_to_gtp(move, size)}: {exc}")
                    return record
        passes = 0
        cleanup = False
        while True:
            color = game.to_play
            if passes >= 2:
                if cleanup:
                    break
                dead = _agreed_dead(engines, size)
                if dead is not None:
                    record["dead_stones"] = [point_to_gtp(p, size) for p in sorted(dead)]
                    record["scoring"] = "agreed final_status_list"
                    break
                cleanup, passes = True, 0  # play on, capturing what each side thinks is dead
                record["scoring"] = "cleanup play-out"
                continue
            if len(game.moves) >= max_moves:
                record["scoring"] = "move limit"
                break
            engine, other = engines[color], engines[-color]
            name = "black" if color == BLACK else "white"
            verb = "kgs-genmove_cleanup" if cleanup and engine.try_send("known_command kgs-genmove_cleanup") == "true" \
                else "genmove"
            clock = clocks.get(color)
            limit = timeout
            if clock is not None:
                engine.try_send(clock.gtp_time_left(name))
                limit = clock.allowance() + time_control.grace + 1.0  # a hung engine loses on time, not later
            started = time.monotonic()
            try:
                reply = engine.send(f"{verb} {name}", limit).lower()
            except GtpError as exc:
                if clock is not None and "timeout" in str(exc):
                    forfeit(color, f"lost on time ({exc})", "Time")
                else:
                    forfeit(color, f"{verb} failed: {exc}")
                break
            except GtpFailure as exc:
                forfeit(color, f"{verb} failed: {exc}")
                break
            if clock is not None and not clock.spend(time.monotonic() - started):
                forfeit(color, f"lost on time ({time.monotonic() - started:.1f} s for move {len(game.moves) + 1})",
                        "Time")
                break
            if reply == "resign":
                record.update(winner=-color, reason="resign", result=colour_letter(-color) + "+Resign")
                break
            try:
                move = gtp_to_point(reply, size)
                game.play(color, move)
            except ValueError as exc:  # IllegalMove is a ValueError too
                reason = f"illegal move {reply}" if isinstance(exc, IllegalMove) else f"garbled move {reply!r}"
                forfeit(color, reason)
                break
            passes = passes + 1 if move == game.pass_move else 0
            try:
                other.send(f"play {name} {point_to_gtp(move, size)}")
            except (GtpError, GtpFailure) as exc:
                forfeit(-color, f"rejected the opponent's legal move {reply}: {exc}")
                break
        record["moves"] = len(game.moves)
        if "result" not in record:
            dead = record.get("dead_stones", [])
            score = _settled_score(game, [gtp_to_point(v, size) for v in dead])
            record.update(score=score, winner=BLACK if score > 0 else (WHITE if score < 0 else 0),
                          result=_result_text(score), reason=record.get("scoring", "score"))
            record["engine_scores"] = {side: engines[c].try_send("final_score", 60)
                                       for side, c in (("black", BLACK), ("white", WHITE))}
    finally:
        exits = {}
        for color, engine in engines.items():
            status = _exit_status(engine, wait="exited" in record["reason"] and record.get("forfeit") == names[color])
            if status is not None:
                exits[names[color]] = status
            engine.close()
        if exits:
            record["exit_status"] = exits
        record["moves"] = len(game.moves)
        if sgf_path:
            Path(sgf_path).parent.mkdir(parents=True, exist_ok=True)
            Path(sgf_path).write_text(game_to_sgf(game, record.get("result"), black_name, white_name))
    return record


def _exit_status(engine: GtpProcess, wait: bool) -> int | None:
    """The exit status of an engine that stopped on its own (None while it runs); with ``wait`` (its output has
    closed) it is given a moment to finish exiting."""
    try:
        return engine.process.wait(timeout=2) if wait else engine.process.poll()
    except subprocess.TimeoutExpired:
        return None


def _agreed_dead(engines, size) -> set | None:
    """The dead stones both engines name, or None when they disagree or cannot say."""
    lists = []
    for engine in engines.values():
        reply = engine.try_send("final_status_list dead", 120)
        if reply is None:
            return None
        try:
            lists.append({gtp_to_point(v, size) for v in reply.split()})
        except ValueError:
            return None
    return lists[0] if lists[0] == lists[1] else None


def _settled_score(game, dead) -> float:
    from jaxgo.go.game import Game

    board = game.board().reshape(-1).copy()
    board[list(dead)] = 0
    settled = Game(game.rules)
    for color in (BLACK, WHITE):
        points = [int(p) for p in (board == color).nonzero()[0]]
        if points:
            settled.setup_stones(color, points)
    return settled.score()


def run_match(a_cmd: str, b_cmd: str, games: int, size: int = 9, komi: float = 7.5, alternate: bool = True,
              sgf_dir: str | None = None, parallel: int = 1, timeout: float = 120.0, max_moves: int | None = None,
              names=("A", "B"), progress=None, time_control: TimeControl | None = None, pin: bool = True) -> dict:
    """Play ``games`` games of A against B; the JSON-ready summary.  With ``parallel`` > 1 each game in play gets
    its own share of the CPUs (``CpuShares``; ``pin=False``: no pinning)."""
    shares = CpuShares(parallel, pin)

    def one(index):
        a_black = not (alternate and index % 2 == 1)
        black, white = (a_cmd, b_cmd) if a_black else (b_cmd, a_cmd)
        black, white = black.replace("{seed}", str(index)), white.replace("{seed}", str(index))
        bname, wname = (names[0], names[1]) if a_black else (names[1], names[0])
        sgf = os.path.join(sgf_dir, f"game_{index:04d}.sgf") if sgf_dir else None
        with shares.take() as cpus:
            rec = play_game(black, white, size, komi, max_moves, timeout, sgf, bname, wname,
                            time_control=time_control, cpus=cpus)
        rec["index"] = index
        rec["a_colour"] = "black" if a_black else "white"
        winner_name = bname if rec["winner"] == BLACK else (wname if rec["winner"] == WHITE else None)
        rec["winner_name"] = winner_name
        if progress:
            print(json.dumps({k: rec.get(k) for k in ("index", "black", "white", "result", "reason", "moves")}),
                  file=progress, flush=True)
        return rec

    start = time.time()
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        records = list(pool.map(one, range(games)))
    wins_a = sum(r["winner_name"] == names[0] for r in records)
    wins_b = sum(r["winner_name"] == names[1] for r in records)
    draws = games - wins_a - wins_b
    rate = (wins_a + 0.5 * draws) / games if games else 0.0
    low, high = wilson_interval(wins_a + 0.5 * draws, games)
    return {"engine_a": a_cmd, "engine_b": b_cmd, "size": size, "komi": komi, "games": games,
            "wins_a": wins_a, "wins_b": wins_b, "draws": draws, "win_rate_a": rate, "ci95_a": [low, high],
            "forfeits": [{"index": r["index"], "engine": r.get("forfeit"), "reason": r["reason"]}
                         for r in records if r.get("forfeit")],
            "seconds": round(time.time() - start, 1), "games_detail": records}


# ---------------------------------------------------------------------------------------------- tournaments

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
TOURNAMENT_KEYS = {"players", "board_size", "size", "komi", "games", "time", "max_moves", "timeout", "results",
                   "sgf_dir", "log_dir", "parallel", "anchor"}
RESULTS_VERSION = 1


@dataclasses.dataclass(frozen=True)
class Player:
    """A tournament player: a name (letters, digits, ``_.+-``), its command line (``{seed}`` is replaced by the
    game's number in the schedule) and GTP commands sent after ``boardsize``/``clear_board``/``komi``."""

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

    def player(self, name: str) -> Player:
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
    """Players from the TOML ``[players]`` table (name = command, or name = {command, setup})."""
    if not isinstance(table, dict) or not table:
        raise ValueError(f"{path}: a [players] table with name = \"command\" lines is needed")
    players = []
    for name, value in table.items():
        if isinstance(value, str):
            players.append(Player(name, value))
        elif isinstance(value, dict) and isinstance(value.get("command"), str):
            setup = value.get("setup", [])
            if not isinstance(setup, list) or not all(isinstance(s, str) for s in setup):
                raise ValueError(f"{path}: players.{name}.setup must be a list of GTP commands")
            players.append(Player(name, value["command"], tuple(setup)))
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
    """``--player NAME=COMMAND`` options -> Players."""
    players = []
    for item in items:
        name, sep, command = item.partition("=")
        if not sep or not command.strip():
            raise ValueError(f"--player {item!r}: expected NAME=COMMAND")
        players.append(Player(name.strip(), command.strip()))
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


ELO_METHOD = ("Bradley-Terry maximum a posteriori (Hunter's MM iterations), a draw counted as half a win, one "
              "virtual draw per pairing as the prior (BayesElo's; it keeps a perfect score finite); 95% intervals "
              "from the normal approximation (inverse of the posterior's information matrix); Elo relative to the "
              "mean of the players, or to the anchor player rated 0")


def bradley_terry_elo(names: list[str], games: list[tuple], pairs: list[tuple], anchor: str | None = None,
                      z: float = 1.96) -> dict:
    """{name: {"elo": rating, "elo_ci95": [low, high]}} from ``games`` (black, white, winner name or None for
    a draw) by ``ELO_METHOD``; ``pairs``: the pairings that get a virtual draw (all of the tournament's, so
    ratings exist before every pair has met)."""
    import numpy as np

    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    score = np.zeros((n, n))  # score[i, j]: what i scored against j (wins + half the draws), prior included
    for a, b in pairs:
        score[index[a], index[b]] += 0.5
        score[index[b], index[a]] += 0.5
    for black, white, winner in games:
        i, j = index[black], index[white]
        if winner is None:
            score[i, j] += 0.5
            score[j, i] += 0.5
        else:
            w, l = (i, j) if winner == black else (j, i)
            score[w, l] += 1.0
    played = score + score.T
    gamma = np.ones(n)
    for _ in range(100_000):  # Hunter (2004): gamma_i = W_i / sum_j n_ij / (gamma_i + gamma_j)
        update = score.sum(1) / (played / (gamma[:, None] + gamma[None, :])).sum(1)
        update /= np.exp(np.mean(np.log(update)))
        done = np.max(np.abs(np.log(update) - np.log(gamma))) < 1e-12
        gamma = update
        if done:
            break
    theta = np.log(gamma)
    p = gamma[:, None] / (gamma[:, None] + gamma[None, :])
    info = -played * p * (1 - p)  # the negative log-posterior's Hessian in theta
    np.fill_diagonal(info, 0.0)
    np.fill_diagonal(info, -info.sum(1))
    cov = np.zeros((n, n))
    cov[1:, 1:] = np.linalg.inv(info[1:, 1:])  # theta_0 held at 0: the model fixes only differences
    ref = np.eye(n)[index[anchor]] if anchor is not None else np.full(n, 1.0 / n)
    relative = np.eye(n) - ref[None, :]  # theta - theta_anchor, or theta - mean(theta)
    scale = 400.0 / math.log(10.0)
    elo = scale * (relative @ theta)
    stdev = scale * np.sqrt(np.maximum(0.0, np.diag(relative @ cov @ relative.T)))
    return {name: {"elo": round(float(elo[i]), 1),
                   "elo_ci95": [round(float(elo[i] - z * stdev[i]), 1), round(float(elo[i] + z * stdev[i]), 1)]}
            for name, i in index.items()}


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


def build_parser():
    parser = argparse.ArgumentParser(prog="jaxgo match", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tournament", nargs="?", help="tournament description (TOML; see above)")
    parser.add_argument("--player", action="append", default=[], metavar="NAME=COMMAND",
                        help="a tournament player (repeat; two or more play a round robin)")
    parser.add_argument("--results", default=None,
                        help="tournament results file, JSON lines (a rerun continues it; default: beside the TOML "
                             "file, or jaxgo-match.jsonl)")
    parser.add_argument("--report", action="store_true", help="print the tournament's standings without playing")
    parser.add_argument("--anchor", default=None, help="tournament player rated Elo 0 (default: the mean is 0)")
    parser.add_argument("--time", default=None, metavar="MAIN[:BYOYOMI[:STONES]]",
                        help="time control in seconds, e.g. 60 (sudden death) or 0:5:1 (5 s per move); sent to "
                             "the engines and enforced (a loss on time)")
    parser.add_argument("--black", help="engine A's command (default: jaxgo gtp with --playouts/--strategy)")
    parser.add_argument("--white", help="engine B's command (default: gnugo --mode gtp --level LEVEL)")
    parser.add_argument("--size", type=int, default=None, help="board size (default 9)")
    parser.add_argument("--komi", type=float, default=None, help="komi (default 7.5)")
    parser.add_argument("--games", type=int, default=None, help="games (per pairing in a tournament; default 2)")
    parser.add_argument("--alternate", action="store_true", help="A vs B: swap colours every other game "
                        "(tournaments always alternate)")
    parser.add_argument("--sgf-dir", default=None, help="one SGF per game in this folder")
    parser.add_argument("--parallel", type=int, default=None, help="games played at once (default 1)")
    parser.add_argument("--no-pin", action="store_true", help="with --parallel: do not give each game in play its "
                        "own CPUs (default: pinned with taskset, e.g. one core per game on two cores)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds allowed per GTP command (default 120; a genmove under --time gets its clock)")
    parser.add_argument("--max-moves", type=int, default=None)
    parser.add_argument("--playouts", type=int, default=1000, help="default jaxgo engine's playouts per move")
    parser.add_argument("--strategy", default="rave", help="default jaxgo engine's strategy")
    parser.add_argument("--level", type=int, default=10, help="default GNU Go engine's level")
    parser.add_argument("--details", action="store_true", help="include every game's record in the summary")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        time_control = TimeControl.parse(args.time) if args.time else None
        if args.tournament or args.player:
            return _tournament_main(args, time_control)
    except (ValueError, OSError) as exc:
        print(f"jaxgo match: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxgo match: interrupted; the finished games are in the results file, and running the same command "
              "again plays the rest", file=sys.stderr)
        return 130
    return _two_engine_main(args, time_control)


def _tournament_main(args, time_control) -> int:
    """A round robin from a TOML file and / or ``--player`` options: play what is left, print the standings."""
    if args.black or args.white:
        raise ValueError("--black/--white are for a match of two engines; a tournament names its --player s")
    overrides = dict(size=args.size, komi=args.komi, games=args.games, time_control=time_control,
                     max_moves=args.max_moves, timeout=args.timeout, results=args.results, sgf_dir=args.sgf_dir,
                     parallel=args.parallel, anchor=args.anchor)
    if args.tournament:
        tournament = load_tournament(args.tournament, **overrides)
        if args.player:
            tournament = dataclasses.replace(tournament, players=tournament.players + parse_players(args.player))
    else:
        fields = {k: v for k, v in overrides.items() if v is not None}
        stem = str(Path(fields.get("results", "jaxgo-match.jsonl")).with_suffix(""))
        fields.setdefault("sgf_dir", stem + "-games")
        fields.setdefault("log_dir", stem + "-logs")
        tournament = Tournament(players=parse_players(args.player), **fields)
    if args.report:
        summary = tournament_summary(tournament, read_results(tournament.results, tournament.settings()))
    else:
        print(f"jaxgo match: {len(tournament.players)} players, {len(tournament.schedule())} games; results in "
              f"{tournament.results}", file=sys.stderr)
        summary = run_tournament(tournament, progress=sys.stderr, pin=not args.no_pin)
    print(standings_table(summary), file=sys.stderr)
    print(json.dumps(summary))
    return 0


def _two_engine_main(args, time_control) -> int:
    """Engine A (``--black``, default jaxgo) against engine B (``--white``, default GNU Go): a JSON summary."""
    size = args.size or 9
    komi = 7.5 if args.komi is None else args.komi
    a_cmd = args.black or (f"{shlex.quote(sys.executable)} -m jaxgo gtp --quiet --size {size} "
                           f"--komi {komi} --playouts {args.playouts} --strategy {args.strategy} --seed {{seed}}")
    if args.white:
        b_cmd = args.white
    else:
        binary = find_gnugo()
        if binary is None:
            print("gnugo not found (install it with: apt-get install -y gnugo)", file=sys.stderr)
            return 2
        b_cmd = f"{binary} --mode gtp --chinese-rules --level {args.level}"
    summary = run_match(a_cmd, b_cmd, args.games or 2, size, komi, args.alternate, args.sgf_dir,
                        args.parallel or 1, args.timeout or 120.0, args.max_moves, progress=sys.stderr,
                        time_control=time_control, pin=not args.no_pin)
    if not args.details:
        summary.pop("games_detail")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
