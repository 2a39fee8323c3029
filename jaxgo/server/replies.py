"""The engine's answers built and sent off the device thread: one ``reply`` thread runs the jobs it is given in
order, so a search's reports and its final answer reach the client in the order the device thread queued them.

The device thread takes what must be read while the tree still changes (a report's ``Snapshot``) and queues the
rest: building the response (``responses.build_response``: moveInfos, ownership, the JSON-ready lists), a final
answer's snapshot (its search is over: the tree no longer changes), sending it, giving the tree back to the arena
and counting the query's turns done.
"""

from __future__ import annotations

import functools
import queue
import threading

import numpy as np

from jaxgo.server import protocol, responses
from jaxgo.server.tasks import Task


@functools.lru_cache(maxsize=64)
def config_dict(config) -> dict:
    """``SearchConfig.to_dict`` of a (frozen) config, made once per config (an answer gets a copy)."""
    return config.to_dict()


class Replies:
    """A FIFO of jobs run on one daemon thread named ``reply`` (started with the first job); ``log(text)`` gets
    the error of a job that raised."""

    def __init__(self, log=None):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pending = 0
        self._lock = threading.Lock()
        self._log = log

    def put(self, function, *args) -> None:
        with self._lock:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reply", daemon=True)
                self._thread.start()
        self._queue.put((function, args))

    def idle(self) -> bool:
        """No job queued or running."""
        return self._pending == 0

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            function, args = job
            try:
                function(*args)
            except Exception as exc:  # one failed answer must not end the others
                if self._log is not None:
                    self._log(f"reply thread: {exc!r}")
            finally:
                with self._lock:
                    self._pending -= 1

    def close(self, timeout: float | None = None) -> None:
        """Run the jobs queued so far, then end the thread."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout)


class Answers:
    """The answers of ``jaxgo.server.engine.AnalysisEngine`` (which holds the config, the ``Replies`` and
    ``_turn_done``): reports and final answers, built on the reply thread."""

    def snapshot(self, task: Task) -> responses.Snapshot:
        return task.snapshot(self.config.max_pv_moves)

    def _response(self, task: Task, during_search: bool, snap: responses.Snapshot | None = None) -> dict:
        """The response of a task from ``snap`` (default: a snapshot now)."""
        snap = self.snapshot(task) if snap is None else snap
        if not during_search and task.query.include_territory:
            snap.territory = self._territory(task)
        if task.query.include_policy and task.policy is None:
            task.policy = self._policy(task)  # the position does not change during the search: computed once
        policy = task.policy if task.query.include_policy else None
        response = responses.build_response(task.query.id, task.turn, snap, during_search, task.query,
                                           task.query.perspective or self.config.perspective, policy)
        if not during_search:
            response["searchConfig"] = dict(config_dict(task.config))
        return response

    def report(self, task: Task) -> None:
        """Queue a during-search report of ``task``: its snapshot now, the response built on the reply thread."""
        snap = self.snapshot(task)
        if task.query.include_policy and task.policy is None:
            task.policy = self._policy(task)
        self.replies.put(self._send_report, task, snap)

    def _send_report(self, task: Task, snap: responses.Snapshot) -> None:
        try:
            task.client.send(self._response(task, during_search=True, snap=snap))
        except Exception as exc:
            self.debug(f"report for {task.query.id!r} failed: {exc!r}")

    @staticmethod
    def _policy(task: Task) -> np.ndarray:
        """float [A]: the move model's probabilities over the legal moves (pass included), -1 where illegal: the
        search's prior model (``SearchConfig.prior_model``, by default its gammas)."""
        from jaxgo.search import priors

        game = task.game
        legal = game.legal_moves(game.to_play)
        prior = priors.gamma_prior(game, legal, task.config.gammas, prior_model=task.config.prior_model)
        return np.where(legal, prior, -1.0)

    @staticmethod
    def _territory(task: Task) -> np.ndarray:
        from jaxgo.crf.evaluator import expected_territory

        size = task.query.size
        stones = np.asarray(task.game.board(), np.int8).reshape(1, size, size)
        result = expected_territory(stones, np.array([task.game.to_play], np.int8))
        return np.asarray(result, np.float64).reshape(-1)

    def _finish(self, task: Task) -> None:
        """Answer a task (its search is over): on the reply thread, after the reports queued before."""
        if task.cancelled:
            return
        task.cancelled = True  # leaves the active list at the end of the round
        task.leave_slots()  # (the device thread's tables); the tree goes back once the answer is built
        self.replies.put(self._answer, task)

    def _answer(self, task: Task) -> None:
        try:
            if task.job is None or task.job.done == 0:
                response = {"id": task.query.id, "turnNumber": task.turn, "isDuringSearch": False,
                            "noResults": True}
            else:
                try:
                    response = self._response(task, during_search=False)
                except Exception as exc:
                    self.debug(f"response for {task.query.id!r} failed: {exc!r}")
                    response = protocol.error_object(f"internal error: {exc}", None, task.query.id)
            task.release()  # before the answer goes out: the client's next query may reuse the tree storage
            task.client.send(response)
        finally:
            task.release()
            self._turn_done(task)

