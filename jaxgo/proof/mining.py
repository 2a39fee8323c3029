"""Mining capture problems from game records, labelled by GNU Go and cross-checked by jaxgo's own PNS.

For every game of an archive split (``jaxgo.data.archives``: train = KGS 2001-2015, test = KGS 2017), the main
line is replayed on the host ``Board``; at sampled move numbers (every ``every`` moves from ``start``) each
string with 1-4 liberties is a candidate goal:

- strings that are already TRUE for the attacker moving first (in atari, or a working ladder, by ``g(n)`` of
  ``CaptureProblem``) are skipped as trivial; so is a string whose stones were already used earlier in the game;
- GNU Go (``attack`` / ``defend`` with raised reading depths) labels the rest: ``attack`` code 1 and ``defend``
  code 0 -> a dead string, posed as ``query: "defend"``, ``answer: "0"`` (the defender, moving first, cannot save
  it); ``attack`` code 1 and ``defend`` code 1 -> a critical string, ``query: "attack"``, ``answer: "1 MOVE"``
  (the attacker, moving first, captures it); ``attack`` 0 (safe) or any ko code (2/3) -> no problem (counted);
- jaxgo's PNS (L-iteration up to ``max_l``, node and time budgets) solves the same query; its nodes are the
  problem's difficulty, and ``check`` records the cross-check: ``agree`` (PNS proves the capture), ``unsolved``
  (PNS runs out of budget: a hard problem, its answer rests on GNU Go alone) or ``disagree`` (PNS proves the
  string safe: the problem is kept in the file for inspection but ``load_mined`` sets it aside).

A record (one JSON line): size, komi, moves ([["B", "D4"], ...]; setup stones come first as moves of their
colour), target (a stone of the goal string, GTP vertex), query, answer, source (archive:member:move number),
libs, stones (size of the goal string), hash (position + goal + side to move), pns_nodes, pns_seconds,
pns_value (true / false / null), pns_move, pns_L, pns_budget ([nodes, seconds]), check, gnugo_attack,
gnugo_defend.  ``is_hard``: PNS needed more than 10,000 nodes or did not solve the problem within its budget;
``is_node_hard``: more than 10,000 nodes developed (a search stopped early by the time limit on a loaded
machine is not counted).  The position is the result of
the moves; the side to move is the defender for ``defend`` and the attacker for ``attack``.  No crops: the
whole 19x19 board is kept (the search only reads near the goal).

Resumable: the games already processed are listed in ``OUT.games`` (one key a line, written after the game's
records), so a second run appends and skips them.  Broken records (unparsable SGF, illegal moves) are skipped
and counted.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter

from jaxgo.go.coords import gtp_to_point, point_to_gtp
from jaxgo.go.hostboard import BLACK, WHITE, Board
from jaxgo.proof.capture import CaptureProblem, solve_capture

COLOUR_NAMES = {BLACK: "B", WHITE: "W"}
COLOUR_OF = {"B": BLACK, "W": WHITE}
GNUGO_DEPTHS = ("--depth", "24", "--backfill-depth", "18", "--fourlib-depth", "10", "--ko-depth", "10",
                "--branch-depth", "18", "--break-chain-depth", "10", "--superstring-depth", "10")


def board_from_moves(size: int, moves) -> Board | None:
    """The host ``Board`` after ``moves`` ([colour letter, GTP vertex or "pass"]), each played by its colour;
    None if a move is illegal.  The side to move afterwards is the opponent of the last mover."""
    b = Board(size)
    for colour, vertex in moves:
        b.to_play = COLOUR_OF[colour.upper()[0]]
        move = size * size if vertex.lower() == "pass" else gtp_to_point(vertex, size)
        nxt = b.play(move)
        if nxt is None:
            return None
        b = nxt
    return b


def record_moves(record) -> list[list[str]]:
    """[colour, vertex] for the setup stones (black, then white) and the main-line moves of a ``GameRecord``."""
    size = record.size
    out = [["B", point_to_gtp(p, size).upper()] for p in record.setup_black]
    out += [["W", point_to_gtp(p, size).upper()] for p in record.setup_white]
    for colour, move in record.moves:
        vertex = "pass" if move == size * size else point_to_gtp(move, size).upper()
        out.append([COLOUR_NAMES[colour], vertex])
    return out


def position_hash(board: Board, goal: int, to_play: int) -> str:
    """Hex digest of the stones, the goal string and the side to move (dedupe key of a problem)."""
    pts, _ = board.chain(goal)
    text = "".join("xo.g"[{1: 0, -1: 1, 0: 2}[v] if q not in pts else 3] for q, v in enumerate(board.stones))
    return hashlib.sha1(f"{board.size}:{to_play}:{text}".encode()).hexdigest()[:20]


def problem_position(rec: dict) -> tuple[Board, int, int]:
    """(board with the side to move set, goal point, attacker colour) of a mined record."""
    b = board_from_moves(rec["size"], rec["moves"])
    if b is None:
        raise ValueError("illegal move in record")
    goal = gtp_to_point(rec["target"], rec["size"])
    if b.stones[goal] == 0:
        raise ValueError("target point is empty")
    attacker = -b.stones[goal]
    b.to_play = attacker if rec["query"] == "attack" else -attacker
    b.ko = -1
    return b, goal, attacker


def candidate_strings(board: Board, max_libs: int = 4) -> list[tuple[int, int, int]]:
    """(representative point, liberties, stones) of every string with 1..``max_libs`` liberties that is not
    already captured by the attacker moving first (atari or a working ladder)."""
    seen, out = set(), []
    for q, v in enumerate(board.stones):
        if v == 0 or q in seen:
            continue
        pts, libs = board.chain(q)
        seen |= pts
        if len(libs) > max_libs:
            continue
        b = board.copy()
        b.to_play, b.ko = -v, -1
        if CaptureProblem(q, -v, max_libs).evaluate(b) is True:
            continue
        out.append((min(pts), len(libs), len(pts)))
    return out


class GnuGoReader:
    """A GNU Go GTP process for ``attack`` / ``defend`` queries on a game replayed move by move."""

    def __init__(self, size: int = 19, depths=GNUGO_DEPTHS, timeout: float = 60.0):
        from jaxgo.go.gtp_client import GtpProcess, find_gnugo

        binary = find_gnugo()
        if binary is None:
            raise FileNotFoundError("gnugo not found (install it with: apt-get install -y gnugo)")
        self.proc = GtpProcess([binary, "--mode", "gtp", *depths], timeout=timeout)
        self.size = size
        self.played = 0
        self.new_game(size)

    def new_game(self, size: int) -> None:
        """Clear the board (and set its size)."""
        self.proc.send(f"boardsize {size}")
        self.proc.send("clear_board")
        self.size, self.played = size, 0

    def sync(self, moves) -> None:
        """Play the moves not sent yet (``moves`` extends what was sent since ``new_game``)."""
        for colour, vertex in moves[self.played:]:
            self.proc.send(f"play {colour} {vertex}")
        self.played = len(moves)

    def ask(self, cmd: str, vertex: str) -> tuple[int, str | None]:
        """(result code, move or None) of ``attack``/``defend`` VERTEX."""
        words = self.proc.send(f"{cmd} {vertex}").split()
        code = int(words[0])
        return code, (words[1].upper() if len(words) > 1 else None)

    def close(self) -> None:
        self.proc.close()


def label(reader: GnuGoReader, vertex: str) -> tuple[str | None, dict]:
    """GNU Go's label of the string at ``vertex``: ("attack" | "defend" | None, details)."""
    a_code, a_move = reader.ask("attack", vertex)
    info = dict(gnugo_attack=f"{a_code} {a_move}" if a_code else "0")
    if a_code != 1:
        return None, dict(info, reason="safe" if a_code == 0 else "ko")
    d_code, d_move = reader.ask("defend", vertex)
    info["gnugo_defend"] = f"{d_code} {d_move}" if d_code else "0"
    if d_code == 0:
        return "defend", info
    if d_code == 1:
        return "attack", info
    return None, dict(info, reason="ko")


def pns_check(board: Board, goal: int, query: str, max_nodes: int, max_seconds: float, max_l: int = 5) -> dict:
    """Solve the mined query with jaxgo's PNS; the difficulty fields and the cross-check with GNU Go."""
    res, L = solve_capture(board, goal, query == "attack", "pns", max_nodes=max_nodes, max_seconds=max_seconds,
                           max_l=max_l)
    check = "agree" if res.value is True else "unsolved" if res.value is None else "disagree"
    move = None
    if res.move is not None:
        move = "PASS" if res.move == board.size ** 2 else point_to_gtp(res.move, board.size).upper()
    return dict(pns_nodes=res.nodes, pns_seconds=round(res.seconds, 4), pns_value=res.value, pns_move=move,
                pns_L=L, check=check)


def mine_game(reader: GnuGoReader, record, source: str, seen_hashes: set, stats: Counter, every: int = 8,
              start: int = 20, per_game: int = 30, max_nodes: int = 12000, max_seconds: float = 20.0,
              max_l: int = 5) -> list[dict]:
    """Problems of one game (see the module doc); ``seen_hashes`` is updated, ``stats`` counts outcomes."""
    size = record.size
    moves = record_moves(record)
    n_setup = len(record.setup_black) + len(record.setup_white)
    reader.new_game(size)
    b = Board(size)
    out, used_strings = [], set()
    for i, (colour, vertex) in enumerate(moves):
        b.to_play = COLOUR_OF[colour]
        nxt = b.play(size * size if vertex == "pass" else gtp_to_point(vertex, size))
        if nxt is None:
            stats["illegal move (game cut)"] += 1
            break
        b = nxt
        number = i + 1 - n_setup
        if number < start or (number - start) % every:
            continue
        reader.sync(moves[: i + 1])
        for rep, libs, n_stones in candidate_strings(b):
            pts = frozenset(b.chain(rep)[0])
            if pts in used_strings:
                continue
            stats["strings asked"] += 1
            target = point_to_gtp(rep, size).upper()
            query, info = label(reader, target)
            if query is None:
                stats[f"not a problem: {info['reason']}"] += 1
                continue
            attacker = -b.stones[rep]
            pos = b.copy()
            pos.to_play, pos.ko = (attacker if query == "attack" else -attacker), -1
            h = position_hash(pos, rep, pos.to_play)
            if h in seen_hashes:
                stats["duplicate position"] += 1
                used_strings.add(pts)
                continue
            seen_hashes.add(h)
            used_strings.add(pts)
            answer = info["gnugo_attack"] if query == "attack" else "0"
            rec = dict(size=size, komi=record.komi, moves=moves[: i + 1], target=target, query=query,
                       answer=answer, source=f"{source}:{number}", libs=libs, stones=n_stones, hash=h, **info)
            rec.update(pns_check(pos, rep, query, max_nodes, max_seconds, max_l), pns_budget=[max_nodes, max_seconds])
            stats[f"check {rec['check']}"] += 1
            out.append(rec)
            if len(out) >= per_game:
                return out
    return out


def _done_games(path: str) -> set:
    done = set()
    if os.path.exists(path + ".games"):
        with open(path + ".games") as fh:
            done = {line.strip() for line in fh if line.strip()}
    return done


def existing_hashes(path: str) -> tuple[set, int]:
    """Hashes of the records already in ``path`` and the number of broken lines."""
    hashes, broken = set(), 0
    if os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                try:
                    hashes.add(json.loads(line)["hash"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    broken += 1
    return hashes, broken


def split_archives(split: str):
    """The archives of ``split``: 'train' (KGS 2001-2015) or 'test' (KGS 2017)."""
    from jaxgo.data.split import heldout_archives, train_archives

    if split == "train":
        return train_archives()
    if split == "test":
        return heldout_archives(which="kgs2017")
    raise ValueError(f"split must be train or test, got {split!r}")


def iter_games(archives, stats: Counter, skip: int = 0, stride: int = 1):
    """(key, record) of the 19x19 games of ``archives``, taking every ``stride``-th game after ``skip``;
    broken records are counted in ``stats`` by reason."""
    from jaxgo.data.archives import iter_archive
    from jaxgo.data.skips import SkipStats

    k = 0
    for path in archives:
        skipped = SkipStats()
        for name, record in iter_archive(path, skipped, size=19):
            k += 1
            if k <= skip or (k - skip - 1) % stride:
                continue
            yield f"{os.path.basename(path)}:{name}", record
        for reason, n in skipped.skipped.items():
            stats[f"broken record: {reason}"] += n


def summarize(records) -> dict:
    """Problem-set statistics: counts by query, check, liberties, string size, PNS nodes (quantiles, hard)."""
    recs = list(records)
    nodes = sorted(r["pns_nodes"] for r in recs if r.get("check") == "agree")

    def q(f):  # the f-quantile of the PNS node counts
        return nodes[min(len(nodes) - 1, int(f * len(nodes)))] if nodes else None

    usable = [r for r in recs if r.get("check") in ("agree", "unsolved")]
    return dict(
        records=len(recs), usable=len(usable),
        by_query=dict(Counter(r["query"] for r in recs)), by_check=dict(Counter(r.get("check") for r in recs)),
        by_libs=dict(sorted(Counter(r["libs"] for r in recs).items())),
        by_stones=dict(sorted(Counter(min(r["stones"], 10) for r in recs).items())),
        pns_nodes_solved=dict(median=q(0.5), p90=q(0.9), p99=q(0.99), max=nodes[-1] if nodes else None),
        hard=sum(1 for r in usable if is_hard(r)), hard_by_nodes=sum(1 for r in usable if is_node_hard(r)),
        unsolved_time_bound=sum(1 for r in usable if r.get("check") == "unsolved" and "pns_budget" in r
                                 and r["pns_nodes"] < r["pns_budget"][0]),
        games=len({r["source"].rsplit(":", 1)[0] for r in recs}),
    )


def is_hard(rec: dict, threshold: int = 10000) -> bool:
    """A hard problem: PNS needed more than ``threshold`` nodes, or did not solve it within its budget."""
    return rec.get("check") == "unsolved" or rec.get("pns_nodes", 0) > threshold


def is_node_hard(rec: dict, threshold: int = 10000) -> bool:
    """Hard by nodes alone: more than ``threshold`` nodes developed, solved or not (an unsolved search stopped
    by the time limit before ``threshold`` nodes depends on the machine's load and does not count)."""
    return rec.get("check") in ("agree", "unsolved") and rec.get("pns_nodes", 0) > threshold


def load_mined(path: str, checks=("agree", "unsolved"), stats: Counter | None = None) -> list[dict]:
    """Mined records of ``path`` (.jsonl or .jsonl.gz) whose ``check`` is in ``checks`` (disagreements with GNU
    Go are set aside by default), de-duplicated by hash, as learning problems (``to_problem``); broken lines
    and records whose moves do not replay are skipped and counted in ``stats``."""
    import gzip

    stats = stats if stats is not None else Counter()
    opener = gzip.open if path.endswith(".gz") else open
    out, seen = [], set()
    with opener(path, "rt") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
                if rec.get("check") not in checks or rec["hash"] in seen:
                    stats["set aside" if rec.get("check") == "disagree" else "skipped"] += 1
                    continue
                out.append(to_problem(rec))
                seen.add(rec["hash"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                stats["broken"] += 1
    return out


def to_problem(rec: dict) -> dict:
    """A learning problem (``learning.attempt``'s dict) from a mined record."""
    b, goal, attacker = problem_position(rec)
    return dict(name=rec["hash"], source=rec["source"], size=rec["size"], stones=list(b.stones), to_play=b.to_play,
                goal=goal, attacker_to_move=rec["query"] == "attack", query=rec["query"], libs=rec["libs"],
                pns_nodes=rec.get("pns_nodes"), check=rec.get("check"))


def mine(split: str, games: int, out: str, every: int = 8, start: int = 20, per_game: int = 30,
         max_nodes: int = 12000, max_seconds: float = 20.0, max_l: int = 5, skip: int = 0, stride: int = 1,
         archives=None, progress: bool = True, log=print) -> dict:
    """Mine ``games`` new games of ``split`` into ``out`` (appending; games in ``out + '.games'`` are skipped);
    returns the run's statistics and throughput plus the whole file's ``summarize``."""
    from tqdm import tqdm

    stats = Counter()
    done = _done_games(out)
    hashes, broken = existing_hashes(out)
    stats["broken lines in existing file"] = broken
    reader = GnuGoReader()
    t0, n_new, n_games = time.time(), 0, 0
    bar = tqdm(total=games, desc=f"mining {split}", unit="game", disable=not progress)
    interrupted = False
    try:
        with open(out, "a") as fh, open(out + ".games", "a") as gh:
            for key, record in iter_games(archives if archives is not None else split_archives(split), stats,
                                          skip, stride):
                if n_games >= games:
                    break
                if key in done:
                    continue
                try:
                    recs = mine_game(reader, record, key, hashes, stats, every, start, per_game, max_nodes,
                                     max_seconds, max_l)
                except Exception as exc:  # noqa: BLE001 - one bad game is counted, the run goes on
                    stats[f"game failed: {type(exc).__name__}"] += 1
                    from jaxgo.go.gtp_client import GtpError
                    if isinstance(exc, GtpError):
                        reader.close()
                        reader = GnuGoReader()
                    recs = []
                for rec in recs:
                    fh.write(json.dumps(rec) + "\n")
                fh.flush()
                gh.write(key + "\n")
                gh.flush()
                n_games += 1
                n_new += len(recs)
                bar.update(1)
                bar.set_postfix(problems=n_new, hard=stats["check unsolved"])
    except KeyboardInterrupt:   # Ctrl-C / SIGINT: the finished games are kept; report what was done
        interrupted = True
    finally:
        bar.close()
        reader.close()
    secs = time.time() - t0
    run = dict(split=split, games=n_games, new_problems=n_new, seconds=round(secs, 1), interrupted=interrupted,
               games_per_min=round(60 * n_games / max(secs, 1e-9), 2),
               problems_per_min=round(60 * n_new / max(secs, 1e-9), 2), stats=dict(stats))
    return dict(run=run, file=file_stats(out))


def file_stats(path: str) -> dict:
    """``summarize`` of every readable record of a mined file (.jsonl or .jsonl.gz)."""
    import gzip

    recs = []
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as fh:
        for line in fh:
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return summarize(recs)
