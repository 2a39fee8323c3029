"""The device rounds of the analysis engine: every live search's leaves in shared, padded device calls.

One round, over the live tasks in ``tasks.fair_order`` (priority, then the clients in turn), per batch key
(board size and evaluator): every active task selects its next K leaves (``select_leaves``); the valid leaves of
all tasks are concatenated, padded to one of a few fixed batch sizes (``EngineConfig.buckets``) and played out
in one ``Evaluator.dispatch`` call (each row's own komi applied on the host); the results are split back and each
task backs them up (the tasks' selections and backups on several threads at once, ``EngineConfig.tree_threads``).
Large rounds run as two waves so that one wave's tree work hides behind the other's device call.  Then every
running search gets its share of the tree memory (``Task.cap_nodes``), the finished tasks are answered and the
due reports sent.  ``DeviceRounds`` is the part of ``engine.AnalysisEngine`` that does this, on
the device thread.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time

import numpy as np

from jaxgo.go import rules
from jaxgo.search.tree import STATE_FIELDS
from jaxgo.server import warmup
from jaxgo.server.tasks import Task, fair_order, node_cap, tree_bytes_per_node


class DeviceRounds:
    """The scheduling rounds of ``jaxgo.server.engine.AnalysisEngine`` (which holds the tasks, the statistics and
    the engine config they use)."""

    def _round(self) -> None:
        """Serve the live tasks in ``fair_order`` (grouped by batch key), then answer the finished ones and send
        the reports that are due."""
        self._rotation += 1
        ordered = fair_order([t for t in self._active if t.live], self._rotation)
        self._running = len([t for t in ordered if t.job is not None])
        groups: dict[tuple, list[Task]] = {}
        for task in ordered:
            groups.setdefault(task.batch_key, []).append(task)
        self._served = set()
        for tasks in groups.values():
            self._step(tasks)
        self._cap_trees([t for t in ordered if t.job is not None and not t.cancelled])
        self.count_compiles()
        now = time.perf_counter()
        for task in list(self._active):
            # a task not served this round can only have finished (or be due a report) by the clock
            if task.cancelled or (id(task) not in self._served and task.query.max_time is None
                                  and task.query.report_every is None):
                continue
            if task.finished(now, self.warmup_seconds):
                self._finish(task)
            elif task.query.report_every is not None and task.job is not None and task.job.done > 0 \
                    and now - task.last_report >= task.query.report_every:
                task.last_report = now
                if task.client.congested:  # its replies are not being read: no report, no work building it
                    self.reports_skipped += 1
                    task.client.reports_skipped += 1
                    if task.client.reports_skipped == 1:
                        self.debug(f"jaxgo serve: {task.client.name} is not reading its replies "
                                   f"({task.client.backlog} waiting): its during-search reports are skipped")
                    continue
                try:
                    self.report(task)
                except Exception as exc:
                    self._fail(task, exc)
        self._active = [t for t in self._active if t.live]

    def _tree_budget(self, size: int, leaves: int, running: int) -> int:
        """Node cap of one search when ``running`` searches share the tree memory."""
        share = min(self.config.max_tree_mb, self.config.tree_memory_mb / max(1, running)) * 2 ** 20
        return node_cap(size, share, leaves)

    def _cap_trees(self, running: list[Task]) -> None:
        """Give every running search its share of the tree memory; warn a client once when its tree is full."""
        caps = {}
        for task in running:
            key = (task.query.size, task.config.leaves_per_batch)
            cap = caps.get(key)
            if cap is None:
                cap = caps[key] = self._tree_budget(key[0], key[1], len(running))
            full = task.cap_nodes(cap) if task.job.limits.max_nodes != cap else task.job.tree.size >= cap
            tree = task.job.tree
            if full and not task.capped:
                task.capped = True
                megabytes = tree.size * tree_bytes_per_node(task.query.size) / 2 ** 20
                task.client.send({"warning": f"search tree full at {tree.size} nodes ({megabytes:.0f} MB, this "
                                  "search's share of the server's tree memory); the search goes on in the capped "
                                  "tree", "field": "maxVisits", "id": task.query.id})

    def _step(self, tasks: list[Task]) -> None:
        """One round for the tasks of one batch key (in service order): up to ``max_boards`` leaves; a task not
        started yet starts only while fewer than ``max_running_searches`` searches hold a tree.

        With ``overlap`` the chosen tasks form two waves: wave A's playouts are dispatched (asynchronously),
        wave B selects its leaves while A runs on the device, then B is dispatched and A backed up while B
        runs -- the host's tree work hides behind the device calls.
        """
        chosen, planned, starting = [], 0, 0
        now = time.perf_counter()
        limit = self._round_leaves(tasks[0].batch_key) if tasks else self.config.max_boards
        for task in tasks:
            if not task.live or task.finished(now, self.warmup_seconds):
                continue
            if planned >= limit:
                break
            if not task.started:
                if self._running + starting >= self.config.max_running_searches:
                    continue
                starting += 1
            chosen.append(task)
            planned += task.config.leaves_per_batch
        if not chosen:
            return
        self._served.update(id(task) for task in chosen)
        cold = any(task.batch_key not in self._warm_keys for task in chosen)
        self.count_compiles()
        began = time.perf_counter()
        self._new_shape = False
        self._serve(chosen, planned)
        if cold or self._new_shape:  # a first round or shape compiles: all of it is warm-up
            if cold:
                warmup.settle_heap()  # (once per process: what the warm-up made stays)
            self.warmup_seconds += time.perf_counter() - began
            self._compiled_mark = warmup.compile_seconds()  # (the compiling inside it counted once)
            self._warm_keys.update(task.batch_key for task in chosen)

    def count_compiles(self) -> None:
        """Add the compiling done since the last count (``warmup.compile_seconds``) to ``warmup_seconds``: time
        that is not the searches' (a query's maxTime counts the search only)."""
        now = warmup.compile_seconds()
        self.warmup_seconds += max(0.0, now - self._compiled_mark)
        self._compiled_mark = now

    def _serve(self, chosen: list[Task], planned: int) -> None:
        """Select, dispatch, collect and back up the chosen tasks' leaves (in two waves when ``overlap``)."""
        split = self.config.overlap and len(chosen) >= 2 and planned >= self.config.overlap_min_leaves
        waves = [chosen[0::2], chosen[1::2]] if split else [chosen]
        inflight = []
        for wave in waves:
            batch, fresh = self._staging(wave[0], self._batch_rows(sum(t.config.leaves_per_batch for t in wave)),
                                         len(inflight))
            selected = self._select(wave, batch)
            if not selected:
                continue
            try:
                handle = self._dispatch(selected, batch, fresh)
            except Exception as exc:
                self._fail_selected(selected, exc)
                continue
            inflight.append((selected, handle))
        for selected, handle in inflight:
            try:
                results = self._collect(handle)
            except Exception as exc:
                self._fail_selected(selected, exc)
                continue
            self._backup(selected, results)

    def _backup(self, selected: list, results: tuple) -> None:
        """Back up a collected wave [(task, leaf states or None for a compiled task, valid count)]: the compiled
        tasks in one call (``CompiledRound.backup``), the others one by one (``backup_task``)."""
        offsets = list(itertools.accumulate([count for _, _, count in selected], initial=0))
        compiled = [(task, at) for (task, states, _), at in zip(selected, offsets) if states is None]
        if compiled:
            tasks = [task for task, _ in compiled]
            try:
                self.compiled.backup(tasks, np.array([at for _, at in compiled], np.int64), results)
            except Exception as exc:
                for task in tasks:
                    self._fail(task, exc)
        others = [(task, slice(at, at + count)) for (task, states, count), at in zip(selected, offsets)
                  if states is not None]
        if others:
            tasks = [task for task, _ in others]
            for task, outcome in zip(tasks, self._map(backup_task, tasks, [rows for _, rows in others],
                                                        [results] * len(others))):
                if outcome is not None:
                    self._fail(task, outcome)

    def _round_leaves(self, key: tuple) -> int:
        """Most leaves one round gives the tasks of batch key ``key``: what the device played out in about
        ``round_seconds`` in recent calls (at least ``min_round_leaves``, at most ``max_boards``), so that a
        round stays short whatever the load and every client's task is served again soon (the fair order puts
        each client's first task at the front).  Before any timed call: ``max_boards``."""
        rate = self._leaf_rate.get(key)
        if rate is None or self.config.round_seconds <= 0:
            return self.config.max_boards
        return int(min(self.config.max_boards, max(self.config.min_round_leaves, rate * self.config.round_seconds)))

    def _time_call(self, key: tuple, bucket: int, leaves: int, seconds: float) -> None:
        """Keep the leaf rate of batch key ``key`` (an average over recent calls; a shape's first call compiles
        and is not counted)."""
        if (key, bucket) not in self._shapes_seen:
            self._shapes_seen.add((key, bucket))
            return
        rate = leaves / max(seconds, 1e-6)
        old = self._leaf_rate.get(key)
        self._leaf_rate[key] = rate if old is None else 0.7 * old + 0.3 * rate

    def _select(self, tasks: list[Task], batch: dict) -> list:
        """[(task, leaf states or None, valid leaf count)] for the tasks that selected leaves this round (a task
        not started yet gets its Searcher and tree first).  The tasks that expand inline select in one compiled
        call (``CompiledRound.select``) that writes their leaves into rows 0 ... of the device batch ``batch``
        (states None; they come first, in ``tasks``' order); the others one by one (``select_task``), in order
        after them.  Both run on ``tree_threads`` threads (the compiled tree loops do not hold the GIL)."""
        starts = []
        for task in tasks:
            if task.started:
                starts.append(None)
                continue
            self._running += 1
            starts.append(((self.config.seed * 7919 + task.seq) % (2 ** 31),
                           self._tree_budget(task.query.size, task.config.leaves_per_batch, self._running),
                           self.arena))
        compiled, others, other_starts = [], [], []
        for task, start in zip(tasks, starts):
            if self.compiled is not None and start is not None:
                try:
                    task.start(*start)
                except Exception as exc:
                    self._fail(task, exc)
                    continue
                if task.job.exhausted:
                    continue
                start = None
                self.compiled.attach(task)
            if task.slots is not None:
                compiled.append(task)
            else:
                others.append(task)
                other_starts.append(start)
        selected = []
        if compiled:
            try:
                done, retry = self.compiled.select(compiled, batch)
            except Exception as exc:
                for task in compiled:
                    self._fail(task, exc)
                done, retry = [], []
            selected = [(task, None, task.job.pending.count) for task in done]
            others += retry
            other_starts += [None] * len(retry)
        for task, outcome in zip(others, self._map(select_task, others, other_starts)):
            if isinstance(outcome, Exception):
                self._fail(task, outcome)
            elif outcome is not None:
                selected.append((task, outcome, task.job.pending.count))
        return selected

    def _map(self, function, *columns) -> list:
        """[function(*row) for each row of the columns], on the engine's tree threads when there are several."""
        rows = list(zip(*columns))
        if self._tree_pool is None or len(rows) < 2:
            return [function(*row) for row in rows]
        return list(self._tree_pool.map(lambda row: function(*row), rows))

    def _fail_selected(self, selected, exc: Exception) -> None:
        for task, _, _ in selected:
            task.job.pending = None
            self._fail(task, exc)

    def _batch_rows(self, leaves: int) -> int:
        """Rows of the padded device batch of ``leaves`` leaves: chunks of the largest bucket, the last one
        padded to the smallest bucket that holds it (more leaves never give fewer rows)."""
        largest = self.config.buckets[-1]
        last_start = (max(1, leaves) - 1) // largest * largest
        return last_start + next(b for b in self.config.buckets if b >= leaves - last_start)

    def _dispatch(self, selected: list, merged: dict, fresh: bool) -> dict:
        """Start the playouts of all selected leaves [(task, leaf states or None, valid count)] of one batch key
        (valid rows only, padded to a bucket; chunks of the largest bucket when there are more) without waiting.
        ``merged``: the device batch (``_staging``; the compiled tasks' rows are in it already, first), big enough
        for every task's K; ``fresh``: never used, so its padding rows need positions."""
        counts = [n for _, _, n in selected]
        total = sum(counts)
        first = selected[0][0]
        evaluator, lpl = first.evaluator, first.config.playouts_per_leaf
        largest = self.config.buckets[-1]
        last_start = (total - 1) // largest * largest  # the last chunk, the only one padded (with its first row)
        last_bucket = next(b for b in self.config.buckets if b >= total - last_start)
        offsets = itertools.accumulate(counts, initial=0)
        for (task, states, n), at in zip(selected, offsets):  # every other task's valid rows, copied once
            if states is not None:
                for name in STATE_FIELDS:
                    merged[name][at:at + n] = np.asarray(getattr(states, name))[:n]
                merged["last_moves"][at:at + n] = task.job.last_moves[:n]
        if fresh:  # padding: any position will do (its results are not read); a buffer in use holds old leaves
            for out in merged.values():
                out[total:] = out[last_start]
        komis = np.repeat(np.asarray([t.komi for t, _, _ in selected], np.float32), counts)
        calls = []
        for start in range(0, total, largest):
            chunk_n = min(largest, total - start)
            bucket = largest if start < last_start else last_bucket
            chunk = self._chunk_state(merged, start, bucket)
            self._new_shape |= (first.batch_key, bucket) not in self._shapes_seen
            sub = self._keys.next()
            began = time.perf_counter()
            pending = evaluator.dispatch(chunk, sub, lpl, komis[start:start + chunk_n],
                                         merged["last_moves"][start:start + bucket], active=chunk_n)
            calls.append((pending, bucket, chunk_n, self._watch(pending, began)))
        return {"calls": calls, "total": total, "lpl": lpl, "key": first.batch_key}

    def _chunk_state(self, merged: dict, start: int, bucket: int) -> rules.State:
        """The ``rules.State`` of rows ``start .. start + bucket - 1`` of the device batch ``merged`` (views), made
        once per staging buffer and chunk (a frozen State of views of a buffer that is reused round after round)."""
        key = (id(merged), start, bucket)
        found = self._chunk_states.get(key)
        if found is not None and found[0] is merged:
            return found[1]
        chunk = rules.State(**{name: merged[name][start:start + bucket] for name in STATE_FIELDS})
        if len(self._chunk_states) >= 256:
            self._chunk_states.clear()
        self._chunk_states[key] = (merged, chunk)
        return chunk

    def _staging(self, task: Task, rows: int, wave: int) -> tuple:
        """(the device batch of ``rows`` rows for wave ``wave`` of ``task``'s batch key: ``STATE_FIELDS`` and
        ``last_moves`` int32 [rows, 2], whether it is new).  Allocated once and reused round after round (the
        wave's call has been collected by then); its rows hold valid positions once used."""
        key = (task.batch_key, rows, wave)
        found = self._staging_buffers.get(key)
        if found is not None:
            return found, False
        points = task.query.size ** 2
        merged = {name: np.empty((rows,) + shape, dtype) for name, (shape, dtype) in staged_fields(points).items()}
        merged["last_moves"] = np.empty((rows, 2), np.int32)
        if len(self._staging_buffers) >= 64:
            self._staging_buffers.clear()
            self._chunk_states.clear()  # (no State keeps a dropped buffer alive)
        self._staging_buffers[key] = merged
        return merged, True

    def _watch(self, pending, began: float) -> tuple:
        """Time the device call on the engine's timer thread (one for all calls, in dispatch order): busy from
        max(start, previous call's end) to its end.  Returns (a lock held until the call is done, a dict that
        gets the call's ``seconds``): a lock, not an Event, whose making and release are a C call each."""
        timing, done = {}, threading.Lock()
        done.acquire()
        if self._timer_queue is None:
            self._timer_queue = queue.SimpleQueue()
            threading.Thread(target=self._time_calls, args=(self._timer_queue,), daemon=True,
                             name="device-timer").start()
        self._timer_queue.put((pending, began, timing, done))
        return done, timing

    def _time_calls(self, calls) -> None:
        while True:
            pending, began, timing, done = calls.get()
            try:
                pending.ready()
            except Exception:  # a failed call: ``collect`` raises its error on the device thread
                pass
            ended = time.perf_counter()
            with self._timing_lock:
                self.device_seconds += max(0.0, ended - max(began, self._device_free_at))
                timing["seconds"] = ended - max(began, self._device_free_at)
                self._device_free_at = max(self._device_free_at, ended)
            done.release()

    def _collect(self, handle: dict):
        """Wait for a dispatched evaluation: (winner int8 [T, L], final score (Black - White - komi) [T, L],
        ownership int8 [T, L, P], first colour int8 [T, L, P]) for its T leaves."""
        batches = []
        for pending, bucket, leaves, (done, timing) in handle["calls"]:
            batches.append(pending.collect())
            done.acquire()  # (released by the timer thread once the call is done)
            self.device_calls += 1
            self.padded_leaves += bucket
            if "seconds" in timing:
                self._time_call(handle["key"], bucket, leaves, timing["seconds"])
        self.playouts += handle["total"] * handle["lpl"]
        names = ("winner", "score", "ownership", "first_colour")
        if len(batches) == 1:
            return tuple(getattr(batches[0], name) for name in names)
        return tuple(np.concatenate([getattr(b, name) for b in batches]) for name in names)


def staged_fields(points: int) -> dict:
    """{field: (shape of one row, dtype)} of a device batch's positions (``rules.State``, the tree's dtypes) on a
    board of ``points`` points."""
    return {"stones": ((points,), np.int8), "chain": ((points,), np.int32), "lib_count": ((points,), np.int32),
            "lib_sum": ((points,), np.int32), "lib_sumsq": ((points,), np.int32), "ko": ((), np.int32),
            "to_play": ((), np.int8), "passes": ((), np.int32), "captures": ((2,), np.int32),
            "hash": ((2,), np.uint32), "move_count": ((), np.int32)}


def select_task(task: Task, start: tuple | None):
    """One task's part of a round (any thread): start it (``start`` = (seed, node cap, tree arena)) if it has not
    started, then select its leaves.  Returns the leaf states, None when it selected none, or the exception it
    raised."""
    try:
        if start is not None:
            task.start(*start)
            if task.job.exhausted:
                return None
        task.job.leaves = task.round_leaves()
        return task.select_leaves()
    except Exception as exc:
        return exc


def backup_task(task: Task, rows: slice, results: tuple):
    """Back up one task's rows of a collected call (any thread): results = (winner [T, L], final score [T, L],
    ownership [T, L, P], first colour [T, L, P]) of all the call's leaves.  Returns None or the exception."""
    winner, final, owner, first = results
    count = rows.stop - rows.start
    cols = slice(0, task.playouts_per_leaf_now(count))  # maxVisits is a hard cap
    try:
        task.accumulate(final, owner, rows, cols.stop)
        task.searcher.backup_leaves(task.job, winner[rows, cols], first[rows, cols], final[rows, cols])
    except Exception as exc:
        return exc
    return None
