"""A round's tree work for all the searches that expand inline, in two compiled calls: selection with the leaves
written into the device batch, and backup with the analysis statistics.

``CompiledRound`` keeps one ``round_batch.SearchSlots`` table per board size.  A task joins it when it starts
(``attach``: its tree, random stream, parameters, history, buffers and statistics as typed-list entries) if its
search runs through a ``RoundStep`` and expands inline (``round_batch.expansion_modes``), and leaves it when it is
released.  Per round and wave, ``select`` fills a few per-search arrays (K, room, root, size, mode) and runs
``round_batch.select_searches`` over the tasks, split into one chunk per tree thread (nogil), which writes their
leaves straight into the rows of the device batch (each chunk from its own row; the gaps closed after); ``backup``
turns the
collected results into playout values (``round_sums.playout_values``: ``komi.shifted_results`` and
``backup.playout_values`` over the tasks' rows, as each task's own call would) and runs ``round_sums.backup_round``.
Python touches each task for a few attribute reads and writes only.  The other tasks (large patterns, ladder
pruning, avoid/allowMoves, the XLA tree backend, a path that outgrew its buffer) go through
``rounds.select_task`` / ``backup_task`` as before.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from jaxgo.search import expansion, round_batch, round_step
from jaxgo.search.tree import STATE_FIELDS
from jaxgo.search.tree_search import PendingLeaves
from jaxgo.server import round_sums
from jaxgo.server.tasks import Task

NO_MOVES_OWNER = np.zeros((0, 0))  # a search's moves_owner_sum entry without includeMovesOwnership


class CompiledRound:
    """The engine's compiled rounds, their calls split over ``threads`` chunks of tasks run on ``pool`` (a
    ``concurrent.futures`` executor, or None: one call on the caller's thread)."""

    def __init__(self, pool=None, threads: int = 1):
        self.pool, self.threads = pool, threads
        self.tables: dict[int, round_batch.SearchSlots] = {}

    def run(self, kernel, rows: list, *shared) -> list:
        """[kernel(*row, *shared) for each row of ``rows`` (tuples)], on the pool when there are several rows
        (one row: called directly, nothing made per call)."""
        if self.pool is None or len(rows) < 2:
            return [kernel(*row, *shared) for row in rows]
        return list(self.pool.map(lambda row: kernel(*row, *shared), rows))

    # -- membership (device thread) -------------------------------------------------------------------------
    def attach(self, task: Task) -> bool:
        """Give a started task a slot if its search can run here; whether it got one."""
        step, job = task.step, task.job
        if step is None or job.on_expand is not None:
            return False
        mode, tables = step.expansion(job)
        if mode not in round_batch.expansion_modes():
            return False
        table = self.tables.setdefault(task.query.size, round_batch.SearchSlots())
        slot = table.take()
        task.search_arrays = {"rng": step.rng, "params": step.params, "history": job.history,
                              "root_last": np.asarray(job.root_last, np.int64)}
        task.search_arrays.update(
            score_sum=task.score_sum, score_sq_sum=task.score_sq_sum, score_n=task.score_n,
            owner_sum=task.owner_sum, owner_abs_sum=task.owner_abs_sum,
            moves_owner_sum=task.moves_owner_sum if task.moves_owner_sum is not None else NO_MOVES_OWNER)
        task.slot, task.slots = slot, table
        task.wave_constants = wave_constants(task, mode, tables)
        return True

    # -- a wave ---------------------------------------------------------------------------------------------
    def select(self, tasks: list[Task], batch: dict) -> tuple[list, list]:
        """Select the leaves of ``tasks`` (attached, started, of one board size) and write them into the device
        batch ``batch`` (``STATE_FIELDS`` and ``last_moves`` int32 [B, 2]; B >= their K together), one task after
        the other from row 0: (the tasks that selected leaves, in that order, the tasks to go through
        ``rounds.select_task`` instead: another expansion's gamma tables, a path that outgrew its buffer).  Sets
        each task's tree size, ``job.pending`` and ``job.exhausted``."""
        if not tasks:
            return [], []
        table = tasks[0].slots
        run, others, tables, buffers = [], [], None, []
        columns = []  # per task run: (slot, expansion mode, superko, K, room, root, tree size)
        for task in tasks:
            job, constants = task.job, task.wave_constants
            tree, k = job.tree, task.round_leaves()
            job.leaves = k
            if constants.mode == expansion.GAMMAS:
                if tables is None:
                    tables = constants.tables
                elif constants.tables is not tables:
                    others.append(task)
                    continue
            size = tree.size
            if size + k > tree.capacity:
                tree.reserve(k)
            own = task.step.buffers(tree, k)
            marks = (id(tree.children_visits), id(own))
            if task.slot_marks != marks:  # a first round, a grown tree, new K
                table.set(task.slot, round_batch.slot_arrays(tree, own, task.search_arrays))
                task.slot_marks = marks
            max_nodes = job.limits.max_nodes
            columns.append(constants.select + (k, k + 1 if max_nodes is None else max_nodes - size, tree.root, size))
            run.append(task)
            buffers.append(own)
        if not run:
            return [], others
        if tables is None:
            tables = run[0].wave_constants.tables
        n = len(run)
        slots, modes, superko, ks, rooms, roots, sizes = np.array(columns, np.int64).T.copy()
        superko = superko.astype(np.bool_)
        offsets, counts, status = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
        zobrist, entries = run[0].step.zobrist, table.entries
        outs = [batch[name] for name in STATE_FIELDS] + [batch["last_moves"]]
        chunks = self.chunks(n)
        starts = list(itertools.accumulate((int(ks[chunk].sum()) for chunk in chunks[:-1]), initial=0))  # its rows
        ends = self.run(round_batch.select_searches, list(zip(chunks, starts)), slots, ks, rooms, roots, sizes, modes,
                        superko, entries, zobrist, tables, *outs, offsets, counts, status)
        at = 0
        for chunk, start, end in zip(chunks, starts, ends):  # close the gaps between the chunks' rows
            if start != at and end > start:
                for out in outs:
                    out[at:at + end - start] = out[start:end]
                offsets[chunk] -= start - at
            at += end - start
        selected = []
        for task, b, done, size, leaves in zip(run, buffers, status.tolist(), sizes.tolist(), counts.tolist()):
            job = task.job
            if done != round_step.DONE:  # the path buffer was too short: RoundStep.select retries longer
                task.step.depth *= 2
                others.append(task)
                continue
            tree = job.tree
            tree.size = size
            if leaves == 0:
                job.exhausted = not tree.children_legal[tree.root].any()
                job.pending = None
                continue
            job.exhausted = False
            job.pending = PendingLeaves(b.nodes[:leaves], b.actions[:leaves], b.lengths[:leaves], b.leaves[:leaves])
            selected.append(task)
        return selected, others

    def chunks(self, count: int) -> list[np.ndarray]:
        """Task indices 0 .. count - 1 in one chunk per tree thread (at most ``count``)."""
        parts = max(1, min(count, self.threads))
        if parts == 1:
            return [np.arange(count, dtype=np.int64)]
        return [chunk for chunk in np.array_split(np.arange(count, dtype=np.int64), parts) if len(chunk)]

    def backup(self, tasks: list[Task], offsets: np.ndarray, results: tuple) -> None:
        """Back up the leaves of ``tasks`` (``select``ed, one table) from rows ``offsets[i] ...`` of the
        collected call: results = (winner [B, L], final score [B, L], ownership [B, L, P], first colour
        [B, L, P])."""
        if not tasks:
            return
        winner, final, owner, first = results
        table = tasks[0].slots
        count = len(tasks)
        counts = [len(t.job.pending.leaves) for t in tasks]
        cols = [t.playouts_per_leaf_now(n) for t, n in zip(tasks, counts)]
        constants = [t.wave_constants for t in tasks]
        slots = np.array([c.slot for c in constants], np.int64)
        extra, utility, scale = np.array([c.values for c in constants], np.float64).T.copy()
        use_rave, with_moves = np.array([c.flags for c in constants], np.bool_).T.copy()
        counts_array, cols_array = np.array(counts, np.int64), np.array(cols, np.int64)
        rows0 = np.asarray(offsets, np.int64)
        value = round_sums.playout_values(winner, final, rows0, counts_array, extra, utility, scale)
        totals = np.zeros(count)
        entries = table.entries
        first = np.asarray(first, np.int8)
        self.run(round_sums.backup_round, [(chunk,) for chunk in self.chunks(count)], slots, rows0, counts_array,
                 cols_array, use_rave, with_moves, value, first, final, owner, entries, totals)
        for task, n, c, total in zip(tasks, counts, cols, totals.tolist()):
            job = task.job
            job.done += n * c
            job.iterations += 1
            job.pending = None
            task.root_score_sum += total
            task.owner_n += n * c


@dataclasses.dataclass(frozen=True)
class WaveConstants:
    """What a wave reads of an attached task that stays fixed for its search (``wave_constants``)."""

    slot: int
    mode: int  # its expansion mode (``expansion.UNIFORM`` or ``GAMMAS``)
    tables: tuple  # its gamma tables (``RoundStep.expansion``)
    select: tuple  # (slot, mode, superko): the leading per-search columns of ``CompiledRound.select``
    values: tuple  # (extra komi, score utility, board size): ``round_sums.playout_values``' per-search floats
    flags: tuple  # (RAVE, includeMovesOwnership): ``round_sums.backup_round``'s per-search flags


def wave_constants(task: Task, mode: int, tables: tuple) -> WaveConstants:
    """The fixed per-search columns of an attached task at slot ``task.slot`` (expansion ``mode`` with gamma
    ``tables``)."""
    superko = task.step.searcher.rules.ko_rule != "simple"
    return WaveConstants(
        slot=task.slot, mode=mode, tables=tables, select=(task.slot, mode, int(superko)),
        values=(task.job.extra_komi, task.config.score_utility, task.game.rules.size),
        flags=(task.config.strategy == "rave", task.moves_owner_sum is not None))
