"""The analysis engine: one thread owns the device and runs every search, merging their leaf batches.

Clients (one per connection: stdin/stdout, a socket, an HTTP stream, a GTP front end) hand request lines to
``AnalysisEngine.submit``; bad lines are answered at once with an error object, a query's game is replayed on
the submitting thread (``positions.replay``), and actions and queries go to the device thread through one inbox
queue, so every search step and device call happens on that thread.  Every request counts as outstanding for
its client until answered (an action until its acknowledgement is queued), so a connection that ends waits
for all its answers.

Each analysed turn of a query is a ``tasks.Task``: a ``jaxgo.search.searcher.Searcher`` tree search driven
through its public steps, with the server's ``SearchConfig`` (``jaxgo serve``'s command line) changed by the
query's ``overrideSettings``.  A task gets its Searcher and tree when first served; at most
``max_running_searches`` hold one at a time, and each tree is capped at its share of ``tree_memory_mb``
(``max_tree_mb`` at most), after which the search goes on in the capped tree.  One scheduling round, over the
live tasks in ``tasks.fair_order`` (priority, then the clients in turn), per board size and evaluator:

    1. every active task selects its next K leaves (``select_leaves``, host work plus one small device call);
    2. the valid leaves of all tasks are concatenated and padded to one of a few fixed batch sizes
       (``EngineConfig.buckets``, so each size compiles a handful of shapes once; padding rows are not played),
       and one ``Evaluator.dispatch(..., playouts_per_state=L)`` call plays them all out (each row's own komi
       is applied on the host, so queries with different komi share the call);
    3. the results are split back and each task backs them up (``backup_leaves``), accumulating per-root-move
       mean scores and the mean final ownership.

With ``devices`` N > 1 every device call is sharded over N local devices (the Evaluator's ``devices``): each
plays out its 1/N of the padded batch, so every bucket is a multiple of N.

Rounds with many leaves (``overlap_min_leaves``) run as two waves: wave A's playouts are dispatched
asynchronously, wave B selects its leaves while A runs, then B is dispatched and A backed up while B runs, so
the host's tree work hides behind the device calls.  When a round's batch is full (``max_boards``) the tasks
later in the fair order wait.  A task ends at ``maxVisits`` playouts, after ``maxTime`` seconds, when its root
has no move left, or when terminated (its partial result is sent; ``noResults`` if it had not started).
Responses go through ``Client.send``, which never blocks the device thread: each client has its own writer
thread, and a client whose connection broke is dropped with its tasks.  A round's leaves are capped at what the
device plays out in ``round_seconds``, so every client's first task is served again within about that time.
"""

from __future__ import annotations

import dataclasses
import itertools
import queue
import threading
import time

import numpy as np

from jaxgo.playouts.evaluator import evaluator_for
from jaxgo.search.budget import auto_leaves
from jaxgo.search.config import TREE_STRATEGIES, SearchConfig
from jaxgo.server import positions, protocol
from jaxgo.server.protocol import Action, Query, RequestError
from jaxgo.server.tasks import QueryState, Task, fair_order, node_cap, tree_bytes_per_node

VERSION = "1.0"  # protocol version reported by query_version (jaxgo's own version is added)


# overrideSettings bounds: each device call holds (leaves x L) boards, and every new K or L compiles new shapes.
MAX_LEAVES_PER_BATCH = 1024
MAX_PLAYOUTS_PER_LEAF = 256  # as the GTP engine allows
MAX_GAMMA_FILE_BYTES = 256 << 20


@dataclasses.dataclass
class EngineConfig:
    search: SearchConfig = SearchConfig()  # every query's search, before its overrideSettings
    max_leaves_per_search: int = 64  # most leaves one search selects per round (when leaves_per_batch is None)
    max_boards: int = 4096  # most leaves per device call (x L playouts): ``jaxgo serve --device-batch``
    buckets: tuple = (64, 512, 4096)  # padded leaf counts per device call (multiples of ``devices``)
    devices: int = 1  # local devices each device call is sharded over (``jaxgo serve --devices``)
    perspective: str = "BLACK"  # win rates / scores / ownership reported for BLACK, WHITE or SIDETOMOVE
    seed: int = 0
    max_pv_moves: int = 40  # moves given a principal variation in a response
    overlap: bool = True  # two waves per round: one wave's tree work runs while the other's playouts do
    overlap_min_leaves: int = 512  # ... when the round has at least this many leaves (small rounds: one call)
    max_running_searches: int = 256  # searches holding a tree at once; later turns wait (fair order)
    tree_memory_mb: float = 2048.0  # all trees together: a search's node cap is its share of this
    max_tree_mb: float = 512.0  # ... and at most this much for one search
    round_seconds: float = 0.25  # a round's leaves are capped at what the device plays out in about this time (0: off)
    min_round_leaves: int = 64  # ... but never fewer leaves than this


def check_gamma_file(path: str) -> None:
    """ValueError unless ``path`` names a gamma file this version can use (a regular file, not a FIFO, a
    device or a folder, of reasonable size, that loads as gammas: ``jaxgo.features.gammas.load_checked``)."""
    from jaxgo.features.gammas import load_checked

    load_checked(path, MAX_GAMMA_FILE_BYTES)


def default_buckets(max_boards: int, devices: int = 1) -> tuple:
    """Padded leaf counts per device call: 64, 512, 4096 ... up to ``max_boards`` (one shape when ``max_boards``
    <= 256, which keeps compile time small for tests and small jobs), each rounded up to a multiple of
    ``devices`` (``max_boards`` must be one).  Padding rows are not played out, so few buckets cost little; each
    is one compiled shape per board size and playout policy."""
    check_device_batch(max_boards, devices)
    if max_boards <= 256:
        return (max_boards,)
    sizes = sorted({-(-b // devices) * devices for b in (64, 512, 4096, 32768)})
    return tuple(b for b in sizes if b < max_boards) + (max_boards,)


def check_device_batch(max_boards: int, devices: int) -> None:
    """ValueError unless the leaf rows per device call (``--device-batch``) split evenly over the devices."""
    if devices < 1 or max_boards < 1:
        raise ValueError(f"device batch {max_boards} and devices {devices} must be positive")
    if max_boards % devices:
        raise ValueError(f"device batch {max_boards} is not a multiple of devices {devices}: each device plays "
                         "out an equal share of every call")


class Client:
    """The sending side of one connection: ``send(obj)`` queues a response; a writer thread writes it.

    ``write(line)`` is called with one JSON line (no newline) on the writer thread; an OSError or ValueError
    from it marks the client closed and calls ``on_close``.  ``outstanding`` counts requests not yet answered
    (queries until their last turn, actions until their acknowledgement is queued), so a connection that ends
    waits for every answer before it closes.

    Output is bounded: ``backlog`` counts the responses queued and not yet written.  While it is above
    ``report_backlog`` the client is *congested*: the engine builds no during-search reports for it (final
    responses still go out), and a transport stops reading its requests while it is above
    ``read_backlog`` (``wait_writable``), so a client that does not read its replies cannot make the server
    queue more for it.  Above ``max_backlog`` (only reachable by a client that sent that many queries before it
    stopped reading) the client is dropped with a logged reason (``close_reason``).
    """

    _ids = itertools.count()
    report_backlog = 4  # responses waiting to be written above which during-search reports are skipped
    read_backlog = 64  # ... above which a transport stops reading this client's requests
    max_backlog = 4096  # ... above which the client is dropped

    def __init__(self, write, name: str = "", on_close=None):
        self.name = name or f"client-{next(self._ids)}"
        self._write = write
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self.closed = threading.Event()
        self.on_close = on_close
        self.close_reason: str | None = None
        self.outstanding = 0
        self.backlog = 0
        self.reports_skipped = 0
        self._lock = threading.Lock()
        self.idle = threading.Condition(self._lock)
        self._drained = threading.Condition(threading.Lock())
        self._thread = threading.Thread(target=self._run, name=f"writer-{self.name}", daemon=True)
        self._thread.start()

    KEEPALIVE = object()  # queued by keepalive(): an empty line

    def send(self, obj: dict) -> None:
        if self.closed.is_set():
            return
        with self._drained:
            self.backlog += 1
            over = self.backlog > self.max_backlog
        if over:
            self.mark_closed(f"{self.backlog} responses waiting to be written: the client does not read them")
            return
        self._queue.put(obj)

    @property
    def congested(self) -> bool:
        """Whether responses are piling up unwritten (the peer reads slowly or not at all)."""
        return self.backlog > self.report_backlog

    def wait_writable(self, timeout: float | None = None) -> bool:
        """Block while more than ``read_backlog`` responses wait to be written (the transport's read loop calls
        this before reading the next request).  False when ``timeout`` ran out first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._drained:
            while self.backlog > self.read_backlog and not self.closed.is_set():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._drained.wait(0.25 if left is None else min(left, 0.25))
        return True

    def keepalive(self) -> None:
        """Queue an empty line: a socket whose peer is gone fails on it (TCP at the second one, after the
        peer's reset), which is how a client that left without reading its answers is noticed."""
        if not self.closed.is_set():
            self._queue.put(self.KEEPALIVE)

    def _run(self) -> None:
        while True:
            obj = self._queue.get()
            if obj is None:
                return
            if not self.closed.is_set():
                try:
                    self._write("" if obj is self.KEEPALIVE else protocol.dumps(obj))
                except Exception as exc:  # a broken or stalled connection (OSError), a failing writer: gone
                    self.mark_closed(f"write failed: {exc!r}")
            if obj is not self.KEEPALIVE:
                with self._drained:
                    self.backlog -= 1
                    self._drained.notify_all()

    def mark_closed(self, reason: str | None = None) -> None:
        if not self.closed.is_set():
            self.close_reason = reason
            self.closed.set()
            with self._drained:
                self._drained.notify_all()
            if self.on_close is not None:
                self.on_close(self)

    def close(self, flush_timeout: float = 5.0) -> None:
        """Stop the writer after the queued responses are written (at most ``flush_timeout`` seconds)."""
        self._queue.put(None)
        self._thread.join(flush_timeout)

    def add_outstanding(self, delta: int) -> None:
        with self._lock:
            self.outstanding += delta
            if self.outstanding <= 0:
                self.idle.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every query of this client is answered (or the client closed)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self.outstanding > 0 and not self.closed.is_set():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.idle.wait(0.1 if left is None else min(left, 0.1))
        return True


class AnalysisEngine:
    """Owns the device thread; ``submit`` request lines from any thread."""

    def __init__(self, config: EngineConfig | None = None, log=None):
        self.config = config or EngineConfig()
        if self.config.perspective not in protocol.PERSPECTIVES:
            raise ValueError(f"perspective must be one of {protocol.PERSPECTIVES}")
        for bucket in self.config.buckets:
            check_device_batch(bucket, self.config.devices)
        self.log = log
        self._inbox: queue.Queue = queue.Queue()
        self._active: list[Task] = []
        self._seq = itertools.count()
        self._replays = positions.ReplayCache()  # the last games replayed (the next query often extends one)
        self._rotation = 0  # fair_order's turn: which client goes first this round
        self._running = 0  # tasks holding a tree (started), counted at each round
        self._thread = threading.Thread(target=self._loop, name="device", daemon=True)
        self._stopping = False
        self._stopped = threading.Event()
        self._key = None
        # statistics
        self.playouts = 0
        self.device_calls = 0
        self.device_seconds = 0.0
        self.padded_leaves = 0  # leaves sent to the device including padding (fill = playouts / L / this)
        self._timing_lock = threading.Lock()
        self._device_free_at = 0.0
        self.queries_done = 0
        self._leaf_rate: dict = {}  # batch key -> leaves played out per second of device call (recent calls)
        self._shapes_seen: set = set()  # (batch key, bucket): a call of a new shape compiles, so is not timed
        self.reports_skipped = 0

    # -- front side (any thread) ------------------------------------------------------------------------------
    def start(self) -> "AnalysisEngine":
        self._thread.start()
        return self

    def debug(self, text: str) -> None:
        if self.log is not None:
            print(text, file=self.log, flush=True)

    def submit(self, client: Client, line) -> None:
        """Handle one request line from ``client`` on the caller's thread: errors are answered now, a query's
        game is replayed here (``positions.replay``), the rest is queued for the device thread."""
        if isinstance(line, (bytes, bytearray)):
            line = bytes(line).strip()
        else:
            line = line.strip()
        if not line:
            return
        ident = request = None
        try:
            obj = protocol.decode_line(line)
            ident = obj.get("id")
            request = protocol.parse_request(obj)
            turns = positions.replay(request, self._replays) if isinstance(request, Query) else None
        except RequestError as exc:
            if exc.ident is None and isinstance(ident, (str, int)) and not isinstance(ident, bool):
                exc.ident = ident
            if isinstance(request, Query):  # warnings first, as for a query that runs
                for field, text in request.warnings:
                    client.send({"warning": text, "field": field, "id": request.id})
            client.send(exc.to_json())
            return
        self.submit_request(client, request, turns)

    def submit_request(self, client: Client, request, turns: list | None = None) -> None:
        """Queue a parsed request; a query's ``turns`` (``positions.replay``) are made here when not given."""
        if isinstance(request, Action) and request.action == "query_version":
            from jaxgo import __version__

            client.send({"id": request.id, "action": "query_version", "version": VERSION,
                         "git_hash": f"jaxgo-{__version__}"})
            return
        if self._stopping:
            client.send(protocol.error_object("server is shutting down", None, getattr(request, "id", None)))
            return
        if isinstance(request, Query):
            if turns is None:
                try:
                    turns = positions.replay(request, self._replays)
                except RequestError as exc:
                    client.send(exc.to_json())
                    return
            for field, text in request.warnings:
                client.send({"warning": text, "field": field, "id": request.id})
        client.add_outstanding(1)  # queries until their last turn is answered, actions until acknowledged
        self._inbox.put(("request", client, (request, turns)))

    def client_closed(self, client: Client) -> None:
        """Drop every task of a client whose connection is gone (other clients are not affected)."""
        if client.close_reason is not None and not getattr(client, "drop_logged", False):
            client.drop_logged = True
            self.debug(f"jaxgo serve: {client.name} dropped: {client.close_reason}")
        self._inbox.put(("closed", client, None))

    def stop(self, wait: bool = True, timeout: float | None = None) -> bool:
        """Stop the device thread: after answering every queued query (``wait``) or at once (partial
        results are not sent).  Returns whether the thread ended within ``timeout``."""
        self._stopping = True
        self._inbox.put(("stop", None, wait))
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def idle(self) -> bool:
        return not self._active and self._inbox.empty()

    # -- device thread ----------------------------------------------------------------------------------------
    def _loop(self) -> None:
        import jax

        self._key = jax.random.PRNGKey(self.config.seed)
        finish_then_stop = None
        while True:
            if finish_then_stop is not None and not self._active and self._inbox.empty():
                break
            try:
                message = self._inbox.get_nowait() if self._active else self._inbox.get()
            except queue.Empty:
                message = None
            while message is not None:
                kind, client, payload = message
                if kind == "stop":
                    finish_then_stop = bool(payload)
                    if not payload:
                        for task in self._active:
                            if not task.cancelled:
                                task.cancelled = True
                                task.release()
                                self._turn_done(task)
                        self._active = []
                elif kind == "closed":
                    self._drop_client(client)
                elif finish_then_stop is False:  # stopping at once: what is still queued is refused
                    client.send(protocol.error_object("server is shutting down", None, payload[0].id))
                    client.add_outstanding(-1)
                else:
                    request, turns = payload
                    try:
                        self._handle(client, request, turns)
                    except Exception as exc:  # never let one bad request end the device thread
                        self.debug(f"device thread: {exc!r}")
                        client.send(protocol.error_object(f"internal error: {exc}", None, request.id))
                        if not any(t.client is client and t.query is request for t in self._active):
                            client.add_outstanding(-1)  # not answered by a task: answered here
                try:
                    message = self._inbox.get_nowait()
                except queue.Empty:
                    message = None
            if finish_then_stop is not None and not self._active:
                break
            if self._active:
                try:
                    self._round()
                except Exception as exc:  # a bug in one round must not end the device thread
                    self.debug(f"device thread: round failed: {exc!r}")
                    for task in list(self._active):
                        self._fail(task, exc)
                    self._active = []
        self._stopped.set()

    def _drop_client(self, client: Client) -> None:
        """Cancel every task of a client whose connection is gone (other clients are not affected)."""
        for task in self._active:
            if task.client is client:
                task.cancelled = True
                task.release()
        self._active = [t for t in self._active if not t.cancelled]

    def _handle(self, client: Client, request, turns) -> None:
        """A query's tasks join the active list; an action is carried out and acknowledged."""
        if isinstance(request, Query):
            self._activate(client, request, turns)
            return
        action: Action = request
        if action.action in ("terminate", "terminate_all"):
            for task in self._active:
                if task.client is not client:
                    continue
                if action.action == "terminate" and task.query.id != action.terminate_id:
                    continue
                if action.turn_numbers is not None and task.turn not in action.turn_numbers:
                    continue
                task.terminated = True
            reply = {"id": action.id, "action": action.action}
            if action.action == "terminate":
                reply["terminateId"] = action.terminate_id
            if action.turn_numbers is not None:
                reply["turnNumbers"] = action.turn_numbers
            client.send(reply)
            # Answer terminated tasks now (their partial results), not after the next round.
            for task in [t for t in self._active if t.terminated]:
                self._finish(task)
        elif action.action == "clear_cache":
            client.send({"id": action.id, "action": "clear_cache"})
        client.add_outstanding(-1)

    def _activate(self, client: Client, query: Query, turns: list) -> None:
        """One task per analysed turn (``positions.replay`` made the positions on the client's thread)."""
        if client.closed.is_set():
            client.add_outstanding(-1)
            return
        try:
            config = self.search_config(query)
        except ValueError as exc:
            client.send(protocol.error_object(str(exc), "overrideSettings", query.id))
            client.add_outstanding(-1)
            return
        if query.include_territory:
            try:
                from jaxgo.crf.evaluator import expected_territory  # noqa: F401
            except ImportError as exc:
                client.send(protocol.error_object(f"territory evaluator not available: {exc}", "includeTerritory",
                                                  query.id))
                client.add_outstanding(-1)
                return
        group = QueryState(left=len(turns))
        for turn in turns:
            evaluator = evaluator_for(config, self.config.devices, turn.game.state.stones)
            self._active.append(Task(client=client, query=query, turn=turn.number, seq=next(self._seq), group=group,
                                     game=turn.game, config=config, evaluator=evaluator))

    def search_config(self, query: Query) -> SearchConfig:
        """The server's search config with the query's ``overrideSettings``; K chosen from ``maxVisits`` when
        not set (about 48 rounds per search, at most ``max_leaves_per_search``), so that a small budget still
        grows a tree rather than one flat sweep.  ValueError for a setting the server cannot run."""
        config, _ = self.config.search.with_overrides(query.search_settings)
        if config.strategy not in TREE_STRATEGIES:
            raise ValueError(f"strategy {config.strategy!r}: the server runs tree searches only {TREE_STRATEGIES}")
        if config.leaves_per_batch is not None and config.leaves_per_batch > MAX_LEAVES_PER_BATCH:
            raise ValueError(f"leaves_per_batch {config.leaves_per_batch}: at most {MAX_LEAVES_PER_BATCH} here")
        if config.playouts_per_leaf > MAX_PLAYOUTS_PER_LEAF:
            raise ValueError(f"playouts_per_leaf {config.playouts_per_leaf}: at most {MAX_PLAYOUTS_PER_LEAF} here")
        if config.gammas is not None and config.gammas != self.config.search.gammas:
            check_gamma_file(config.gammas)
        if config.leaves_per_batch is None:
            leaves = min(self.config.max_leaves_per_search, auto_leaves(query.max_visits, config.playouts_per_leaf))
            config = dataclasses.replace(config, leaves_per_batch=leaves)
        return config

    # -- one scheduling round ---------------------------------------------------------------------------------
    def _round(self) -> None:
        """Serve the live tasks in ``fair_order`` (grouped by batch key), then answer the finished ones and send
        the reports that are due."""
        self._rotation += 1
        ordered = fair_order([t for t in self._active if t.live], self._rotation)
        self._running = sum(t.started for t in ordered)
        groups: dict[tuple, list[Task]] = {}
        for task in ordered:
            groups.setdefault(task.batch_key, []).append(task)
        for tasks in groups.values():
            self._step(tasks)
        self._cap_trees([t for t in ordered if t.started and t.live])
        now = time.perf_counter()
        for task in list(self._active):
            if task.cancelled:
                continue
            if task.finished(now):
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
                    task.client.send(self._response(task, during_search=True))
                except Exception as exc:
                    self._fail(task, exc)
        self._active = [t for t in self._active if t.live]

    def _tree_budget(self, size: int, leaves: int, running: int) -> int:
        """Node cap of one search when ``running`` searches share the tree memory."""
        share = min(self.config.max_tree_mb, self.config.tree_memory_mb / max(1, running)) * 2 ** 20
        return node_cap(size, share, leaves)

    def _cap_trees(self, running: list[Task]) -> None:
        """Give every running search its share of the tree memory; warn a client once when its tree is full."""
        for task in running:
            cap = self._tree_budget(task.query.size, task.config.leaves_per_batch, len(running))
            task.searcher.max_nodes = cap  # trees already bigger keep their nodes but grow no more
            tree = task.job.tree
            if not task.capped and tree.size >= task.searcher.max_nodes:
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
            if not task.live or task.finished(now):
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
        split = self.config.overlap and len(chosen) >= 2 and planned >= self.config.overlap_min_leaves
        waves = [chosen[0::2], chosen[1::2]] if split else [chosen]
        inflight = []
        for wave in waves:
            selected = self._select(wave)
            if not selected:
                continue
            try:
                handle = self._dispatch(selected)
            except Exception as exc:
                self._fail_selected(selected, exc)
                continue
            inflight.append((selected, handle))
        for selected, handle in inflight:
            try:
                winner, final, owner, first = self._collect(handle)
            except Exception as exc:
                self._fail_selected(selected, exc)
                continue
            offset = 0
            for task, _, count in selected:
                rows = slice(offset, offset + count)
                offset += count
                cols = slice(0, task.playouts_per_leaf_now(count))  # maxVisits is a hard cap
                try:
                    task.accumulate(final[rows, cols], owner[rows, cols])
                    task.searcher.backup_leaves(task.job, winner[rows, cols], first[rows, cols], final[rows, cols])
                except Exception as exc:
                    self._fail(task, exc)

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

    def _select(self, tasks: list[Task]) -> list:
        """[(task, leaf states, valid leaf count)] for the tasks that selected leaves this round (a task not
        started yet gets its Searcher and tree first)."""
        selected = []
        for task in tasks:
            try:
                if not task.started:
                    self._running += 1
                    task.start(seed=(self.config.seed * 7919 + task.seq) % (2 ** 31),
                               max_nodes=self._tree_budget(task.query.size, task.config.leaves_per_batch,
                                                           self._running))
                    if task.job.exhausted:
                        continue
                task.job.leaves = task.round_leaves()
                size_before = task.job.tree.size
                states = task.searcher.select_leaves(task.job)
                task.after_select(size_before)
            except Exception as exc:
                self._fail(task, exc)
                continue
            if states is not None:
                selected.append((task, states, len(task.job.pending[1])))
        return selected

    def _fail_selected(self, selected, exc: Exception) -> None:
        for task, _, _ in selected:
            task.job.pending = None
            self._fail(task, exc)

    def _dispatch(self, selected: list) -> dict:
        """Start the playouts of all selected leaves [(task, leaf states, valid count)] of one batch key (valid
        rows only, padded to a bucket; chunks of the largest bucket when there are more) without waiting."""
        import jax

        counts = [n for _, _, n in selected]
        total = sum(counts)
        first = selected[0][0]
        evaluator, lpl = first.evaluator, first.config.playouts_per_leaf
        parts = [jax.tree_util.tree_map(lambda x, n=n: np.asarray(x)[:n], s) for _, s, n in selected]
        merged = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *parts)
        last_moves = np.concatenate([task.job.last_moves[:n] for task, _, n in selected])
        komis = np.repeat(np.asarray([t.komi for t, _, _ in selected], np.float32), counts)
        calls = []
        for start in range(0, total, self.config.buckets[-1]):
            chunk_n = min(self.config.buckets[-1], total - start)
            bucket = next(b for b in self.config.buckets if b >= chunk_n)

            def padded(x):
                fill = np.repeat(x[start:start + 1], bucket - chunk_n, axis=0)
                return np.concatenate([x[start:start + chunk_n], fill])

            chunk = jax.tree_util.tree_map(padded, merged)
            self._key, sub = jax.random.split(self._key)
            began = time.perf_counter()
            pending = evaluator.dispatch(chunk, sub, lpl, komis[start:start + chunk_n], padded(last_moves),
                                         active=chunk_n)
            calls.append((pending, bucket, chunk_n, self._watch(pending, began)))
        return {"calls": calls, "total": total, "lpl": lpl, "key": first.batch_key}

    def _watch(self, pending, began: float) -> tuple:
        """Time the device call on a helper thread: busy from max(start, previous call's end) to its end.
        Returns (the thread, a dict that gets the call's ``seconds``)."""
        timing = {}

        def wait():
            pending.ready()
            ended = time.perf_counter()
            with self._timing_lock:
                self.device_seconds += max(0.0, ended - max(began, self._device_free_at))
                timing["seconds"] = ended - max(began, self._device_free_at)
                self._device_free_at = max(self._device_free_at, ended)

        thread = threading.Thread(target=wait, daemon=True, name="device-timer")
        thread.start()
        return thread, timing

    def _collect(self, handle: dict):
        """Wait for a dispatched evaluation: (winner int8 [T, L], final score (Black - White - komi) [T, L],
        ownership int8 [T, L, P], first colour int8 [T, L, P]) for its T leaves."""
        batches = []
        for pending, bucket, leaves, (timer, timing) in handle["calls"]:
            batches.append(pending.collect())
            timer.join()
            self.device_calls += 1
            self.padded_leaves += bucket
            if "seconds" in timing:
                self._time_call(handle["key"], bucket, leaves, timing["seconds"])
        self.playouts += handle["total"] * handle["lpl"]
        return tuple(np.concatenate([getattr(b, name) for b in batches])
                     for name in ("winner", "score", "ownership", "first_colour"))

    # -- results ----------------------------------------------------------------------------------------------
    def snapshot(self, task: Task) -> protocol.Snapshot:
        return task.snapshot(self.config.max_pv_moves)

    def _response(self, task: Task, during_search: bool) -> dict:
        snap = self.snapshot(task)
        if not during_search and task.query.include_territory:
            snap.territory = self._territory(task)
        if task.query.include_policy and task.policy is None:
            task.policy = self._policy(task)  # the position does not change during the search: computed once
        policy = task.policy if task.query.include_policy else None
        response = protocol.build_response(task.query.id, task.turn, snap, during_search, task.query,
                                           task.query.perspective or self.config.perspective, policy)
        if not during_search:
            response["searchConfig"] = task.config.to_dict()
        return response

    @staticmethod
    def _policy(task: Task) -> np.ndarray:
        """float [A]: the gammas' move probabilities over the legal moves (pass included), -1 where illegal."""
        from jaxgo.search import priors

        game = task.game
        legal = game.legal_moves(game.to_play)
        prior = priors.gamma_prior(game, legal, task.config.gammas)
        return np.where(legal, prior, -1.0)

    @staticmethod
    def _territory(task: Task) -> np.ndarray:
        from jaxgo.crf.evaluator import expected_territory

        size = task.query.size
        stones = np.asarray(task.game.board(), np.int8).reshape(1, size, size)
        result = expected_territory(stones, np.array([task.game.to_play], np.int8))
        return np.asarray(result, np.float64).reshape(-1)

    def _finish(self, task: Task) -> None:
        if task.cancelled:
            return
        task.cancelled = True  # leaves the active list at the end of the round
        if task.job is None or task.job.done == 0:
            response = {"id": task.query.id, "turnNumber": task.turn, "isDuringSearch": False, "noResults": True}
        else:
            try:
                response = self._response(task, during_search=False)
            except Exception as exc:
                self.debug(f"response for {task.query.id!r} failed: {exc!r}")
                response = protocol.error_object(f"internal error: {exc}", None, task.query.id)
        task.client.send(response)
        task.release()
        self._turn_done(task)

    def _fail(self, task: Task, exc: Exception) -> None:
        self.debug(f"task {task.query.id!r} turn {task.turn} failed: {exc!r}")
        if not task.cancelled:
            task.cancelled = True
            task.client.send(protocol.error_object(f"internal error: {exc}", None, task.query.id))
            task.release()
            self._turn_done(task)

    def _turn_done(self, task: Task) -> None:
        task.group.left -= 1
        if task.group.left == 0:
            self.queries_done += 1
            task.client.add_outstanding(-1)
