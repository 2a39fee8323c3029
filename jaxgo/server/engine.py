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

    1. every active task selects its next K leaves (``select_leaves``: host work, on ``tree_threads`` threads);
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
from concurrent.futures import ThreadPoolExecutor

from jaxgo.playouts.evaluator import evaluator_for
from jaxgo.search.arena import TreeArena
from jaxgo.search.budget import auto_leaves
from jaxgo.search.config import TREE_STRATEGIES, SearchConfig
from jaxgo.search.searcher import KeyStream
from jaxgo.server import positions, protocol, warmup
from jaxgo.server.compiled_round import CompiledRound
from jaxgo.server.connection import Client
from jaxgo.server.engine_config import EngineConfig, auto_tree_threads, check_device_batch
from jaxgo.server.protocol import Action, Query, RequestError
from jaxgo.server.replies import Answers, Replies
from jaxgo.server.rounds import DeviceRounds
from jaxgo.server.score_estimate import SCORE_ESTIMATES
from jaxgo.server.settings import MAX_LEAVES_PER_BATCH, MAX_PLAYOUTS_PER_LEAF, check_gamma_file
from jaxgo.server.tasks import QueryState, Task

VERSION = "1.0"  # protocol version reported by query_version (jaxgo's own version is added)


class AnalysisEngine(DeviceRounds, Answers):
    """Owns the device thread; ``submit`` request lines from any thread."""

    def __init__(self, config: EngineConfig | None = None, log=None, make_evaluator=None):
        """``make_evaluator(search config, devices, stones)``: the playouts of a task (default
        ``evaluator_for``; a benchmark injects a stand-in)."""
        self.config = config or EngineConfig()
        self._make_evaluator = make_evaluator
        if self.config.perspective not in protocol.PERSPECTIVES:
            raise ValueError(f"perspective must be one of {protocol.PERSPECTIVES}")
        if self.config.score_estimate not in SCORE_ESTIMATES:
            raise ValueError(f"score_estimate must be one of {SCORE_ESTIMATES}")
        for bucket in self.config.buckets:
            check_device_batch(bucket, self.config.devices)
        self.log = log
        self._inbox: queue.Queue = queue.Queue()
        self._active: list[Task] = []
        self._seq = itertools.count()
        self._replays = positions.ReplayCache()  # the last games replayed (the next query often extends one)
        self._rotation = 0  # fair_order's turn: which client goes first this round
        self._running = 0  # tasks holding a tree (started), counted at each round
        self._served: set = set()  # ids of the tasks that the current round serves
        self._thread = threading.Thread(target=self._loop, name="device", daemon=True)
        self._stopping = False
        self._stopped = threading.Event()
        self._keys = None  # the device calls' random keys (``searcher.KeyStream``), made on the device thread
        # statistics
        self.playouts = 0
        self.device_calls = 0
        self.device_seconds = 0.0
        self.padded_leaves = 0  # leaves sent to the device including padding (fill = playouts / L / this)
        self._timing_lock = threading.Lock()
        self._timer_queue = None  # the device calls waiting for the timer thread (``DeviceRounds._watch``)
        self._device_free_at = 0.0
        self.queries_done = 0
        self._leaf_rate: dict = {}  # batch key -> leaves played out per second of device call (recent calls)
        self._shapes_seen: set = set()  # (batch key, bucket): a call of a new shape compiles, so is not timed
        self._warm_keys: set = set()  # batch keys served once: their first round compiles
        self._new_shape = False  # the round being served dispatched a shape never called before
        self.warmup_seconds = 0.0  # seconds compiling: first rounds of a key or shape, then warmup.compile_seconds
        warmup.install()
        self._compiled_mark = warmup.compile_seconds()
        self.reports_skipped = 0
        self.arena = TreeArena(self.config.tree_memory_mb * 2 ** 20)  # the trees' storage, reused search to search
        self.tree_threads = self.config.tree_threads or auto_tree_threads(self.config.search)
        self._tree_pool = (ThreadPoolExecutor(self.tree_threads, thread_name_prefix="tree") if self.tree_threads > 1
                           else None)
        self.replies = Replies(self.debug)  # answers built and sent off the device thread
        self._done_lock = threading.Lock()
        self._staging_buffers = {}  # (batch key, rows, wave) -> its device calls' batch (rounds._staging)
        self._chunk_states = {}  # (id of a staging buffer, first row, rows) -> (it, its State) (rounds._chunk_state)
        self.compiled = CompiledRound(self._tree_pool, self.tree_threads) if self.config.compiled_rounds else None

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
        return not self._active and self._inbox.empty() and self.replies.idle()

    # -- device thread ----------------------------------------------------------------------------------------
    def _loop(self) -> None:
        import jax

        self._keys = KeyStream(jax.random.PRNGKey(self.config.seed))
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
        if self._tree_pool is not None:
            self._tree_pool.shutdown(wait=False)
        self.replies.close()
        self._stopped.set()

    def _drop_client(self, client: Client) -> None:
        """Cancel every task of a client whose connection is gone (other clients are not affected)."""
        for task in self._active:
            if task.client is client and not task.cancelled:  # (a task being answered is released after)
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
        self.count_compiles()
        for turn in turns:
            evaluator = (self._make_evaluator or evaluator_for)(config, self.config.devices, turn.game.state.stones)
            self._active.append(Task(client=client, query=query, turn=turn.number, seq=next(self._seq), group=group,
                                     game=turn.game, config=config, evaluator=evaluator,
                                     score_estimate=self.config.score_estimate, warmup_mark=self.warmup_seconds))

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
            leaves = min(self.config.max_leaves_per_search, auto_leaves(query.max_visits * config.playouts_per_visit,
                                                                           config.playouts_per_leaf))
            config = dataclasses.replace(config, leaves_per_batch=leaves)
        return config

    def _fail(self, task: Task, exc: Exception) -> None:
        self.debug(f"task {task.query.id!r} turn {task.turn} failed: {exc!r}")
        if not task.cancelled:
            task.cancelled = True
            task.release()
            self.replies.put(self._send_last, task, protocol.error_object(f"internal error: {exc}", None,
                                                                          task.query.id))

    def _send_last(self, task: Task, response: dict) -> None:
        try:
            task.client.send(response)
        finally:
            self._turn_done(task)

    def _turn_done(self, task: Task) -> None:
        with self._done_lock:  # the device and the reply thread
            task.group.left -= 1
            last = task.group.left == 0
            if last:
                self.queries_done += 1
        if last:
            task.client.add_outstanding(-1)
