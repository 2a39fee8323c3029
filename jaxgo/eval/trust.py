"""Can a KaTrain user trust the analysis?  ``jaxgo eval analysis --trust``: the figures of issue 58.

KaTrain's "points lost" of a move is the parent position's ``scoreLead`` minus the child's (after the move), for
the side that moved; each position is its own query (KaTrain's defaults: ``maxVisits`` 500, ``maxTime`` 8, one
query at a time).  For every position of a sample (the move played in a game, and a uniformly random other legal
move there) this prints:

- the AUC of points lost, the played move against the random one (the chance that the random move is shown
  losing more; 0.5 is a coin), with a bootstrap 95% interval over the positions, and the share of played moves
  shown losing at least 3 points;
- 19x19: even pro-vs-pro Fox games of the TEST split (``split.heldout_archives('fox')``), one position per game
  at a move drawn from 30-150; 9x9: the project's own refereed games against GNU Go (``benchmarks/games``), one
  position per game at a move drawn from 8-40 (the played move is jaxgo's or GNU Go's);
- on a fresh server: five identical empty-19x19-board queries (their spread and mean; the first query's visits
  against the later ones'; the median spread of the scoreLead of the moves of at least 10 visits in one answer),
  then five at komi 6.5 (the difference of the means);
- the median seconds of a 19x19 query after the warm-up, with the load average.

Every figure depends on the search's randomness (``--seed``) and the positions drawn (``--position-seed``).
"""

from __future__ import annotations

import dataclasses
import os
import random
import statistics
import tarfile
import time

import numpy as np

from jaxgo.data import SkipStats, archives, split
from jaxgo.go.coords import point_to_gtp
from jaxgo.go.sgf import SGFError, load_sgf, replay
from jaxgo.learn import score_model

KATRAIN_VISITS = 500
KATRAIN_SECONDS = 8.0
LOSS_FLAG = 3.0  # KaTrain colours a move losing this much or more as a mistake
FOX_MOVES = (30, 150)
NINE_MOVES = (8, 40)
NINE_ARCHIVE = "benchmarks/games/sgf_9x9_native_2s.tar.xz"


@dataclasses.dataclass
class Sample:
    """One position of the points-lost test: the game's moves before it, the played move and a random one."""

    ident: str
    size: int
    komi: float
    moves: list  # [["B", "D4"], ...] before the move
    played: list  # ["B", "Q16"]
    random_move: list  # ["B", "A1"]


def random_legal(record, number: int, rng: random.Random) -> tuple[list, list] | None:
    """(moves before move ``number`` (0-based), [colour, a uniformly random legal point other than the played
    move]) or None when the record cannot be replayed there or the played move is a pass."""
    moves = record.gtp_moves()
    colour, played = record.moves[number]
    if played == record.pass_move:
        return None
    try:
        game = replay(record, move_number=number + 1)
    except (SGFError, ValueError):
        return None
    legal = np.flatnonzero(game.legal_moves(colour)[:record.pass_move])
    others = [int(p) for p in legal if p != played]
    if not others:
        return None
    return moves[:number], [moves[number][0], point_to_gtp(rng.choice(others), record.size)]


def samples_of(records, count: int, window: tuple, komi: float, rng: random.Random) -> list[Sample]:
    """At most ``count`` samples, one per record [(name, GameRecord)], at a move drawn from ``window``."""
    out = []
    for name, record in records:
        last = min(window[1], len(record.moves) - 1)
        if last < window[0]:
            continue
        number = rng.randint(window[0], last)
        found = random_legal(record, number, rng)
        if found is None:
            continue
        before, other = found
        out.append(Sample(f"{name.rsplit('/', 1)[-1]}@{number}", record.size, komi, before,
                          record.gtp_moves()[number], other))
        if len(out) >= count:
            break
    return out


def fox_samples(count: int, rng: random.Random, komi: float = 7.5) -> list[Sample]:
    """Samples of the even pro-vs-pro Fox games of the test split (moves 30-150)."""
    stats = SkipStats()
    records = (item for path in split.heldout_archives(which="fox")
               for item in archives.iter_archive(path, stats, accept=split.is_pro_vs_pro))
    return samples_of(records, count, FOX_MOVES, komi, rng)


def nine_samples(count: int, rng: random.Random, archive: str = NINE_ARCHIVE) -> list[Sample]:
    """Samples of the project's refereed 9x9 games against GNU Go (an ``.tar.xz`` of SGF files; moves 8-40)."""
    def records():
        with tarfile.open(archive, "r:xz") as tar:
            for member in sorted((m for m in tar.getmembers() if m.name.endswith(".sgf")), key=lambda m: m.name):
                try:
                    record = load_sgf(tar.extractfile(member).read())
                except SGFError:
                    continue
                if record.size == 9 and record.moves:
                    yield member.name.replace("/game_", ":"), record

    return samples_of(records(), count, NINE_MOVES, 7.5, rng)


def auc(played: np.ndarray, other: np.ndarray) -> float:
    """P(other > played) + P(equal) / 2 over all pairs: the chance that a random move is shown losing more than
    a played one (float [n] and [m] points lost)."""
    played, other = np.asarray(played, float), np.asarray(other, float)
    greater = (other[None, :] > played[:, None]).mean()
    equal = (other[None, :] == played[:, None]).mean()
    return float(greater + equal / 2)


def bootstrap_auc(played, other, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """A 95% interval of ``auc`` resampling the positions (pairs of points lost) with replacement."""
    played, other = np.asarray(played, float), np.asarray(other, float)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(draws):
        pick = rng.integers(0, len(played), len(played))
        values.append(auc(played[pick], other[pick]))
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def katrain_query(ident: str, size: int, komi: float, moves: list, visits: int = KATRAIN_VISITS,
                  seconds: float | None = KATRAIN_SECONDS, settings: dict | None = None) -> dict:
    """A query as KaTrain sends it (area scoring, Black's view, ownership and policy asked)."""
    out = {"id": ident, "moves": moves, "rules": "chinese", "komi": komi, "boardXSize": size, "boardYSize": size,
           "maxVisits": visits, "includeOwnership": True, "includePolicy": True,
           "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", **(settings or {})}}
    if seconds is not None:
        out["overrideSettings"]["maxTime"] = seconds
    return out


def points_lost(parent: dict, child: dict, colour: str) -> float:
    """KaTrain's points lost of the move between two answers: the parent's scoreLead minus the child's, for the
    mover (the leads are Black's)."""
    sign = 1.0 if colour == "B" else -1.0
    return sign * (parent["rootInfo"]["scoreLead"] - child["rootInfo"]["scoreLead"])


def loss_figures(played, other) -> dict:
    """AUC with its bootstrap interval, the shares of played and of random moves shown losing >= 3 points and the
    medians of points lost (float [n] each, played and random)."""
    low, high = bootstrap_auc(played, other)
    return {"auc": round(auc(played, other), 3), "auc_95": [round(low, 3), round(high, 3)],
            "played_losing_3": round(float(np.mean(np.asarray(played) >= LOSS_FLAG)), 3),
            "random_losing_3": round(float(np.mean(np.asarray(other) >= LOSS_FLAG)), 3),
            "median_played_lost": round(float(np.median(played)), 2),
            "median_random_lost": round(float(np.median(other)), 2)}


def undo_shipped_calibration(lead: float, komi: float, move_number: int, size: int) -> float:
    """The raw lead behind a lead the server's default estimate (``calibrated``) reported: the inverse of the
    shipped ``jaxgo.learn.score_model`` parameters of ``size`` (the lead itself where none are shipped)."""
    params = score_model.load_parameters().get(size)
    return float(score_model.uncalibrate(params, lead, komi, move_number))


def measure_samples(ask, samples: list[Sample], emit, visits: int, seconds: float | None,
                    settings: dict | None = None, undo=None) -> dict:
    """Ask the parent, played and random positions of every sample (``ask(query) -> (answer, seconds)``); one line
    per sample, and the summary: AUC with its interval, the share of played moves losing >= 3 points.  With
    ``undo(lead, komi, move_number, size) -> raw lead`` (the inverse of the server's calibration) the same figures
    of the leads before it, from the same answers, under ``before_calibration``."""
    played, other, times, raw_played, raw_other = [], [], [], [], []
    for s in samples:
        answers, leads = {}, {}
        for kind, moves in (("parent", s.moves), ("played", s.moves + [s.played]),
                            ("random", s.moves + [s.random_move])):
            answers[kind], spent = ask(katrain_query(f"{s.ident}:{kind}", s.size, s.komi, moves, visits, seconds,
                                                     settings))
            times.append(spent)
            leads[kind] = answers[kind]["rootInfo"]["scoreLead"]
            if undo is not None:
                leads[f"{kind}_raw"] = round(float(undo(leads[kind], s.komi, len(moves), s.size)), 3)
        played.append(points_lost(answers["parent"], answers["played"], s.played[0]))
        other.append(points_lost(answers["parent"], answers["random"], s.random_move[0]))
        if undo is not None:
            sign = {"B": 1.0, "W": -1.0}
            raw_played.append(sign[s.played[0]] * (leads["parent_raw"] - leads["played_raw"]))
            raw_other.append(sign[s.random_move[0]] * (leads["parent_raw"] - leads["random_raw"]))
        emit({"position": s.ident, "size": s.size, "played": s.played[1], "random": s.random_move[1],
              "played_lost": round(played[-1], 2), "random_lost": round(other[-1], 2),
              "parent_visits": answers["parent"]["rootInfo"]["visits"], "leads": leads})
    out = {"size": samples[0].size if samples else None, "positions": len(samples), **loss_figures(played, other),
           "median_seconds": round(statistics.median(times), 2), "load_average": round(os.getloadavg()[0], 2)}
    if undo is not None:
        out["before_calibration"] = loss_figures(raw_played, raw_other)
    return out


def move_spread(answer: dict, min_visits: int = 10) -> float:
    """Largest minus smallest scoreLead among the moves of ``answer`` with at least ``min_visits`` visits: how far
    apart moves of about equal worth (the empty board's) are shown."""
    leads = [m["scoreLead"] for m in answer["moveInfos"] if m["visits"] >= min_visits]
    return max(leads) - min(leads) if leads else 0.0


def empty_board_series(ask, emit, visits: int, seconds: float | None, repeats: int = 5,
                       settings: dict | None = None, undo=None) -> dict:
    """On a fresh server: ``repeats`` identical empty-19x19 queries (komi 7.5), then ``repeats`` at komi 6.5:
    spread and mean of the first series, first query's visits against the later ones', the komi's effect (with
    ``undo``, as in ``measure_samples``, the leads before the calibration too)."""
    leads, visits_seen, times, spreads = {7.5: [], 6.5: []}, [], [], []
    raw = {7.5: [], 6.5: []}
    for komi in (7.5, 6.5):
        for i in range(repeats):
            answer, spent = ask(katrain_query(f"empty:{komi:g}:{i}", 19, komi, [], visits, seconds, settings))
            leads[komi].append(answer["rootInfo"]["scoreLead"])
            if undo is not None:
                raw[komi].append(float(undo(leads[komi][-1], komi, 0, 19)))
            if komi == 7.5:
                visits_seen.append(answer["rootInfo"]["visits"])
                times.append(spent)
                spreads.append(move_spread(answer))
            emit({"position": "empty", "komi": komi, "query": i, "visits": answer["rootInfo"]["visits"],
                  "scoreLead": answer["rootInfo"]["scoreLead"], "seconds": round(spent, 2)})
    first = leads[7.5]
    later = statistics.median(visits_seen[1:]) if len(visits_seen) > 1 else visits_seen[0]
    before = {}
    if undo is not None:
        before = {"empty_before_calibration": {
            "scoreLeads": [round(v, 2) for v in raw[7.5]], "spread": round(max(raw[7.5]) - min(raw[7.5]), 2),
            "mean": round(statistics.mean(raw[7.5]), 2),
            "komi_effect": round(statistics.mean(raw[6.5]) - statistics.mean(raw[7.5]), 2)}}
    return {**before, "empty_scoreLeads": [round(v, 2) for v in first],
            "empty_spread": round(max(first) - min(first), 2),
            "empty_mean": round(statistics.mean(first), 2), "komi_6.5_mean": round(statistics.mean(leads[6.5]), 2),
            "komi_7.5_mean": round(statistics.mean(first), 2),
            "komi_effect": round(statistics.mean(leads[6.5]) - statistics.mean(first), 2),
            "first_query_visits": visits_seen[0], "later_visits": later,
            "first_over_later": round(visits_seen[0] / max(later, 1), 3),
            "first_query_seconds": round(times[0], 2),
            "moves_spread_median": round(statistics.median(spreads), 2)}


def run(server, emit, positions: int, sizes: tuple, visits: int, seconds: float | None, position_seed: int,
        settings: dict | None = None, undo=None) -> dict:
    """Every figure on one fresh ``server`` (``analysis.Server``): the empty-board series first, then the
    points-lost samples of each size (``undo``: as in ``measure_samples``).  Returns the summary."""
    def ask(query):
        start = time.perf_counter()
        answer = server.ask(query)
        return answer, time.perf_counter() - start

    summary = {"summary": True, "visits": visits, "seconds": seconds}
    summary.update(empty_board_series(ask, emit, visits, seconds, settings=settings, undo=undo))
    rng = random.Random(position_seed)
    for size in sizes if positions else ():
        samples = fox_samples(positions, rng) if size == 19 else nine_samples(positions, rng)
        summary[f"points_lost_{size}"] = measure_samples(ask, samples, emit, visits, seconds, settings, undo)
        emit(dict(summary[f"points_lost_{size}"], partial=True))
    return summary
