"""The referee: one game between two GTP engines under jaxgo's rules (``play_game``: superko, forfeits for
illegal moves, crashes, timeouts and garbled answers, dead stones settled by both engines, loss on time), a
series of games between two engines (``run_match``), and CPU shares that pin each game in play to its own cores."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jaxgo.go.coords import BLACK, WHITE, colour_letter, gtp_to_point, point_to_gtp
from jaxgo.go.gtp_client import GtpError, GtpFailure, GtpProcess
from jaxgo.gtp.play import fixed_handicap_points
from jaxgo.match.clock import GameClock, TimeControl
from jaxgo.match.stats import wilson_interval


def _result_text(score: float) -> str:
    return f"B+{score:g}" if score > 0 else (f"W+{-score:g}" if score < 0 else "0")


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
              setup: dict | None = None, cpus=None, opening=None, handicap: int = 0) -> dict:
    """Play one game; returns a record with winner (BLACK / WHITE / 0), result, reason, moves and scores.

    ``stderr``: a file for both engines' stderr, or a dict {BLACK: file, WHITE: file}; ``setup``: {colour: [GTP
    commands]} sent after boardsize / clear_board / komi; ``time_control``: both sides' clocks (a loss on time
    is ``B+Time`` / ``W+Time``).  An engine that exits on its own (a crash) has its exit status in
    ``exit_status`` (by name; negative: killed by that signal).  ``cpus``: both engines run on these CPUs only
    (``CpuShares``: games played at once do not compete for the same cores).  ``handicap``: Black's stones on
    the fixed points of GTP's ``fixed_handicap`` (``fixed_handicap_points``), told to both engines by
    ``set_free_handicap``; White moves first.
    """
    from jaxgo.go.game import IllegalMove, new_game
    from jaxgo.go.sgf import game_to_sgf

    game = new_game(size=size, komi=komi)
    stones = fixed_handicap_points(size, handicap) if handicap else []
    if stones:
        game.setup_stones(BLACK, stones)
        game.set_to_play(WHITE)
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
                if handicap:
                    engine.send("set_free_handicap " + " ".join(point_to_gtp(p, size) for p in stones))
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
            exited = "exited" in record["reason"] and record.get("forfeit") == names[color]
            status = engine.exit_status(wait=2.0 if exited else 0.0)  # a moment to finish exiting
            if status is not None:
                exits[names[color]] = status
            engine.close()
        if exits:
            record["exit_status"] = exits
        record["moves"] = len(game.moves)
        if sgf_path:
            Path(sgf_path).parent.mkdir(parents=True, exist_ok=True)
            from jaxgo.util.files import atomic_write_text

            atomic_write_text(sgf_path, game_to_sgf(game, record.get("result"), black_name, white_name))
    return record


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
              names=("A", "B"), progress=None, time_control: TimeControl | None = None, pin: bool = True,
              handicap: int = 0) -> dict:
    """Play ``games`` games of A against B; the JSON-ready summary.  With ``parallel`` > 1 each game in play gets
    its own share of the CPUs (``CpuShares``; ``pin=False``: no pinning).  ``handicap``: A gives B that many stones
    (B plays Black in every game, ``alternate`` is ignored)."""
    shares = CpuShares(parallel, pin)

    def one(index):
        a_black = not (alternate and index % 2 == 1) and not handicap
        black, white = (a_cmd, b_cmd) if a_black else (b_cmd, a_cmd)
        black, white = black.replace("{seed}", str(index)), white.replace("{seed}", str(index))
        bname, wname = (names[0], names[1]) if a_black else (names[1], names[0])
        sgf = os.path.join(sgf_dir, f"game_{index:04d}.sgf") if sgf_dir else None
        with shares.take() as cpus:
            rec = play_game(black, white, size, komi, max_moves, timeout, sgf, bname, wname,
                            time_control=time_control, cpus=cpus, handicap=handicap)
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
    return {"engine_a": a_cmd, "engine_b": b_cmd, "size": size, "komi": komi, "handicap": handicap, "games": games,
            "wins_a": wins_a, "wins_b": wins_b, "draws": draws, "win_rate_a": rate, "ci95_a": [low, high],
            "forfeits": [{"index": r["index"], "engine": r.get("forfeit"), "reason": r["reason"]}
                         for r in records if r.get("forfeit")],
            "seconds": round(time.time() - start, 1), "games_detail": records}


# ---------------------------------------------------------------------------------------------- tournaments
