"""The Evaluator: how a search values its leaves (mctx's injected ``RecurrentFn``, here a playout policy).

``make_evaluator(policy, gammas, backend=...)`` builds one of eleven evaluators, chosen once from a ``SearchConfig``:

    light   uniform playouts (``jaxgo.playouts.xla.light``), no own-eye fills;
    heavy   gamma-proportional playouts (``jaxgo.playouts.xla.heavy``) under the given or shipped gammas;
    rules   MoGo-style capture / save / shape tiers (``jaxgo.playouts.xla.rules``) on the heavy lane loop;
    safe_rules  the same tiers with self-ataris that join an own chain played last;
    safe_atari_rules  safe_rules whose shape tier also holds the ataris next to the previous move;
    ladder_rules  safe_rules that read ladders: escapes into a working ladder last, ladder captures of the last
                  move's chain in the capture tier (native backend only: ``NATIVE_ONLY``);
    ladder_heavy  heavy playouts that read ladders: an escape into a working ladder weighs as a self-atari, a
                  ladder capture of the last move's chain as its capture (native only);
    ladder2_heavy  ladder_heavy that also gives the escape gamma to the extensions that get an own two-liberty
                  chain next to the last move out of a threatening ladder (native only);
    local_rules  ladder_rules that look next to the opponent's last move first, as Pachi's playouts do: the
                 captures and defences of the chains in atari there, then the two-liberty fights there (ataris,
                 extensions, counter-ataris), then shapes, captures anywhere and the rest (native only);
    local_heavy  ladder_heavy that plays those local tiers' moves first (native only);
    lgrf_heavy  heavy playouts that play the last good reply to the previous move where one is kept (LGRF-1,
                Baier & Drake 2010): one table per evaluator and board size, learnt after every batch from its
                playouts, kept from search to search (native only; every search of the process shares it).

All eleven have one interface::

    evaluator.evaluate(states, key, playouts_per_state, komi, last_moves=None) -> PlayoutBatch

and its two halves ``dispatch`` (start the device call, return at once) and ``PendingBatch.collect`` (wait and
copy to the host), so a server can overlap its tree work with the device.  The device runs with komi 0 and
komi is applied on the host, so one call can hold positions of different komi (``komi`` scalar or [S]).
The tree search (``jaxgo.search.mcts.Searcher``), the analysis server and the ownership estimates of the
player all evaluate through this interface.

Two backends play the same policies.  ``native`` (``jaxgo.playouts.native``): numba code that plays one board at a
time with incremental chains, liberties and move weights, its S x L playouts spread over ``threads`` threads
without the GIL -- the fast path on a CPU.  ``xla``: the batched kernels of ``light`` / ``heavy`` (jit + vmap), the
path for accelerators.  ``backend="auto"`` takes native when JAX's default backend is the CPU, XLA otherwise
(``resolve_backend``).  Both give the same ``PlayoutBatch`` and the same distribution of results.  XLA light
playouts have two kernels of the same policy (``light_kernel``): ``light_wide`` (dense sampling over the legal
points, every lane in step) on an accelerator, ``light`` ("sample, then validate" on row bitboards) on a CPU.

An XLA evaluator made with ``devices=N`` (N > 1) shards every call over the first N local devices (N GPUs, or a
CPU host split into N XLA devices before JAX starts: ``jaxgo.util.devices.configure_host_devices``): position
i goes to device i mod N, so the active positions and the padding are spread evenly and each device plays out
its own share in its own lane loop, under its own random stream (the call's key folded with the device index).
The results come back in position order, as from one device; they are the same in distribution, not bit for
bit, as the one-device call with the same key.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import threading

import jax
import numpy as np

from jaxgo.features import gammas as gamma_files
from jaxgo.features import moves as move_features
from jaxgo.playouts import BACKENDS, POLICIES
from jaxgo.playouts.native import runner
from jaxgo.playouts.xla import heavy, light, light_wide
from jaxgo.playouts.xla import rules as rule_policy
from jaxgo.util.devices import BATCH_AXIS, shard_batch, visible_devices

LIGHT_KERNELS = {"validate": light, "wide": light_wide}
# policies without an XLA kernel (no ladder reader in the lane loop, no reply tables)
NATIVE_ONLY = tuple(runner.LADDER_POLICIES) + tuple(runner.REPLY_POLICIES)


def native_only_error(policy: str) -> ValueError:
    """The error for a native-only policy asked of the XLA backend."""
    if policy in runner.REPLY_POLICIES:
        return ValueError(f"playout policy {policy!r} keeps last-good-reply tables and is native only: use backend "
                          f"native (or auto on a CPU)")
    return ValueError(f"playout policy {policy!r} reads ladders and is native only: use backend native (or auto "
                      f"on a CPU); the XLA kernels have no ladder reader")


def light_kernel(kernel: str = "auto"):
    """The XLA light-playout module (``run``, ``run_from_empty``, ``default_lanes``): ``wide``
    (``jaxgo.playouts.xla.light_wide``), ``validate`` (``jaxgo.playouts.xla.light``) or ``auto``: wide when JAX's
    default backend is an accelerator, where its lanes move in step (benchmarks/RESULTS.md, "GPU"), validate on
    a CPU, where skipping work per board pays."""
    if kernel == "auto":
        kernel = "validate" if jax.default_backend() == "cpu" else "wide"
    if kernel not in LIGHT_KERNELS:
        raise ValueError(f"unknown light kernel {kernel!r}; one of {sorted(LIGHT_KERNELS)} or auto")
    return LIGHT_KERNELS[kernel]


@dataclasses.dataclass(frozen=True)
class PlayoutBatch:
    """Results of L playouts from each of S positions (host numpy arrays)."""

    winner: np.ndarray  # int8 [S, L]: +1 Black won, -1 White won, 0 draw (after komi)
    score: np.ndarray  # float32 [S, L]: Black area - White area - komi at the end
    ownership: np.ndarray  # int8 [S, L, P]: area owner of every point at the end
    first_colour: np.ndarray  # int8 [S, L, P]: colour that first played each point (0: none), for AMAF/RAVE

    @property
    def playouts(self) -> int:
        return int(np.prod(self.winner.shape))


@dataclasses.dataclass
class PendingBatch:
    """A dispatched evaluation: ``collect()`` waits for the device and returns the ``PlayoutBatch``."""

    result: object  # the device-side PlayoutResult [S * L] (padding rows included)
    count: int  # S: the active positions
    playouts_per_state: int  # L
    komi: np.ndarray  # float32 [S]
    devices: int = 1  # N > 1: ``result`` is sharded, device d holding positions d, d + N, d + 2N ... in order

    def ready(self) -> None:
        """Block until the device call has finished (for timing)."""
        jax.block_until_ready(self.result.score)

    def collect(self) -> PlayoutBatch:
        score = self._host_rows("score").astype(np.float32) - self.komi[:, None]
        return PlayoutBatch(winner=np.sign(score).astype(np.int8), score=score,
                            ownership=self._host_rows("ownership"), first_colour=self._host_rows("first_colour"))

    def _host_rows(self, field: str) -> np.ndarray:
        """numpy [S, L, ...]: the ``field`` of the active positions' playouts, in position order (padding rows
        are never copied to the host)."""
        array = getattr(self.result, field)
        count, per_state = self.count, self.playouts_per_state
        if self.devices == 1:
            return device_prefix(array, count * per_state).reshape(count, per_state, *array.shape[1:])
        return interleaved_rows(array, self.devices, count, per_state)


def device_prefix(array, rows: int) -> np.ndarray:
    """numpy: the first ``rows`` rows of a device array.  The device slices to the next power of two (at most
    the whole array), so a handful of slice shapes is compiled rather than one per row count, and the host
    trims the rest."""
    length = int(array.shape[0])
    kept = min(length, 1 << max(0, rows - 1).bit_length())
    return np.asarray(array[:kept] if kept < length else array)[:rows]


def interleaved_order(total: int, devices: int) -> np.ndarray:
    """int [N * ceil(S / N)]: for each row of the device-major batch (device d's slot j at ``d * per + j``),
    the position it holds, ``j * N + d`` (S = ``total``, N = ``devices``); slots past the end repeat position 0
    and are never active."""
    per_device = -(-total // devices)
    order = np.arange(per_device * devices).reshape(per_device, devices).T.reshape(-1)
    return np.where(order < total, order, 0)


def interleaved_rows(array, devices: int, count: int, playouts_per_state: int) -> np.ndarray:
    """numpy [count, L, ...]: the playouts of positions 0 .. count-1 from a sharded [N * per * L, ...] result laid
    out as ``interleaved_order``; only each device's first ceil(count / N) * L rows are copied to the host."""
    shards = sorted(array.addressable_shards, key=lambda shard: shard.index[0].start or 0)
    slots = -(-count // devices)
    rows = slots * playouts_per_state
    blocks = np.stack([device_prefix(shard.data, rows) for shard in shards])  # [N, slots * L, ...]
    tail = blocks.shape[2:]
    blocks = blocks.reshape(devices, slots, playouts_per_state, *tail).swapaxes(0, 1)  # [slots, N, L, ...]
    return blocks.reshape(slots * devices, playouts_per_state, *tail)[:count]


@dataclasses.dataclass
class NativePending:
    """A dispatched native evaluation: the playouts run on the thread pool; ``collect()`` waits for them."""

    future: concurrent.futures.Future  # of a ``native.runner.RawPlayouts`` of S * L playouts
    count: int  # S
    playouts_per_state: int  # L
    komi: np.ndarray  # float32 [S]

    def ready(self) -> None:
        """Block until the playouts have finished (for timing)."""
        self.future.result()

    def collect(self) -> PlayoutBatch:
        raw = self.future.result()
        shape = (self.count, self.playouts_per_state)
        score = raw.score.reshape(shape) - self.komi[:, None]
        points = raw.ownership.shape[-1]
        return PlayoutBatch(winner=np.sign(score).astype(np.int8), score=score,
                            ownership=raw.ownership.reshape(*shape, points),
                            first_colour=raw.first_colour.reshape(*shape, points))


def resolve_backend(backend: str = "auto") -> str:
    """``native`` or ``xla``: ``auto`` is native when JAX's default backend is the CPU."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown playout backend {backend!r}; one of {BACKENDS}")
    if backend == "auto":
        return "native" if jax.default_backend() == "cpu" else "xla"
    return backend


def key_seed(key) -> int:
    """int: a 64-bit seed from a ``jax.random`` key (its two words)."""
    words = np.asarray(jax.random.key_data(key) if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else key)
    words = words.astype(np.uint64).reshape(-1)
    return int((words[0] << np.uint64(32)) | words[-1])


@dataclasses.dataclass(frozen=True)
class Evaluator:
    """Playouts of one policy.  ``tables``: the heavy / rule policy's tables (None for light)."""

    policy: str
    tables: object = None
    devices: int = 1  # XLA: local devices every call is sharded over (1: one plain call on the default device)
    backend: str = "xla"  # native or xla (``resolve_backend``)
    threads: int = 0  # native: threads a call is spread over (0: one per core)
    native_policies: dict = dataclasses.field(default_factory=dict, compare=False, hash=False, repr=False)
    reply_tables: dict = dataclasses.field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def needs_last_moves(self) -> bool:
        """Whether the policy's first move depends on the positions' last two moves (distance features)."""
        return self.policy != "light"

    def dispatch(self, states, key, playouts_per_state: int, komi=0.0, last_moves=None,
                 active: int | None = None) -> PendingBatch:
        """Start L = ``playouts_per_state`` playouts from each of the first ``active`` (default all S) of the
        batched ``states`` (``rules.State`` [S, ...]; the rest is padding that costs nothing, so callers keep a
        few fixed shapes); last_moves int [S, 2] (last move, the one before; P = pass,
        -1 = none) for heavy and rule playouts.  komi: float, or float [S] or [active] per position.  Returns
        without waiting for the device."""
        total = int(np.shape(states.stones)[0])
        count = total if active is None else int(active)
        komi = np.asarray(komi, np.float32)
        komi = np.full(count, komi, np.float32) if komi.ndim == 0 else komi[:count].copy()
        if self.backend == "native":
            return self._dispatch_native(states, key, playouts_per_state, komi, last_moves, count)
        if self.policy in NATIVE_ONLY:
            raise native_only_error(self.policy)
        if self.devices > 1:
            return self._dispatch_sharded(states, key, playouts_per_state, komi, last_moves, total, count)
        if self.policy == "light":
            result = light_kernel().run(states, key, 0.0, num_per_state=playouts_per_state, active_states=count)
        else:
            result = heavy.run(states, key, 0.0, num_per_state=playouts_per_state, gammas=self.tables,
                               last_moves=last_moves, active_states=count)
        return PendingBatch(result, count, playouts_per_state, komi)

    def native_policy(self, size: int):
        """The ``native.runner.PolicyArrays`` of this policy on an N x N board (built once per size)."""
        if size not in self.native_policies:
            if self.policy == "light":
                arrays = runner.light_policy()
            elif self.policy == "heavy" or self.policy in runner.REPLY_POLICIES:
                arrays = runner.heavy_policy(self.tables, size)
            elif self.policy in runner.LADDER_POLICIES:
                base, budget, two_liberties = runner.LADDER_POLICIES[self.policy]
                local = self.policy in runner.LOCAL_POLICIES
                if base == "heavy":
                    arrays = runner.heavy_policy(self.tables, size, budget, two_liberties, local)
                else:
                    arrays = runner.rule_policy(self.tables, budget, local)
            else:
                arrays = runner.rule_policy(self.tables)
            self.native_policies[size] = arrays
        return self.native_policies[size]

    def _dispatch_native(self, states, key, playouts_per_state: int, komi: np.ndarray, last_moves,
                         count: int) -> NativePending:
        """``dispatch`` on the native backend: the first ``count`` positions' playouts on the thread pool."""
        stones = np.asarray(states.stones)[:count]
        size = int(round(stones.shape[1] ** 0.5))
        if last_moves is None or self.policy == "light":  # light playouts never read the last moves
            last = np.full((count, 2), -1, np.int32)
        else:
            last = np.asarray(last_moves, np.int32)[:count]
        args = (self.native_policy(size), stones, np.asarray(states.to_play)[:count], np.asarray(states.ko)[:count],
                np.asarray(states.passes)[:count], last, playouts_per_state, key_seed(key), self.threads or None)
        if self.policy in runner.REPLY_POLICIES:  # learnt on the dispatch thread: batches see their predecessors'
            future = native_dispatcher().submit(runner.play_and_learn, *args, self.replies(size), komi)
        else:
            future = native_dispatcher().submit(runner.play_batch, *args)
        return NativePending(future, count, playouts_per_state, komi)

    def replies(self, size: int) -> np.ndarray:
        """int32 [2, PP]: the last-good-reply table of a reply policy on an N x N board (``runner.new_replies``,
        made once per size and kept)."""
        if size not in self.reply_tables:
            self.reply_tables[size] = runner.new_replies(size)
        return self.reply_tables[size]

    def _dispatch_sharded(self, states, key, playouts_per_state: int, komi: np.ndarray, last_moves, total: int,
                          count: int) -> PendingBatch:
        """``dispatch`` over ``self.devices`` devices: the S positions are laid out as ``interleaved_order``
        on the host (any S; a batch of a multiple of N positions needs no extra padding)."""
        order = interleaved_order(total, self.devices)
        local = jax.tree_util.tree_map(lambda x: np.asarray(x)[order], states)
        run = sharded_playouts(self.policy == "light", self.devices, playouts_per_state)
        if self.policy == "light":
            result = run(local, key, np.int32(count))
        else:
            last = np.full((total, 2), -1, np.int32) if last_moves is None else np.asarray(last_moves, np.int32)
            result = run(local, key, np.int32(count), self.tables, last[order])
        return PendingBatch(result, count, playouts_per_state, komi, self.devices)

    def evaluate(self, states, key, playouts_per_state: int, komi=0.0, last_moves=None,
                 active: int | None = None) -> PlayoutBatch:
        """``dispatch`` and ``collect`` in one call: a ``PlayoutBatch`` of the ``active`` positions."""
        return self.dispatch(states, key, playouts_per_state, komi, last_moves, active).collect()


def device_share(count, devices: int):
    """int32 scalar, inside a ``shard_batch`` function: how many of the ``count`` active positions (laid out
    as ``interleaved_order``) are on this device; they are its first slots."""
    index = jax.lax.axis_index(BATCH_AXIS)
    return count // devices + (index < count % devices).astype(count.dtype)


@functools.lru_cache(maxsize=32)
def sharded_playouts(light_policy: bool, devices: int, playouts_per_state: int):
    """The jitted sharded call of light playouts ``(states, key, count)`` or of heavy / rule playouts
    ``(states, key, count, tables, last_moves)`` over the first ``devices`` devices (komi 0); every device
    folds its index into the key."""

    def light_local(states, key, count):
        device_key = jax.random.fold_in(key, jax.lax.axis_index(BATCH_AXIS))
        return light_kernel().run(states, device_key, 0.0, num_per_state=playouts_per_state,
                                  active_states=device_share(count, devices))

    def heavy_local(states, key, count, tables, last_moves):
        device_key = jax.random.fold_in(key, jax.lax.axis_index(BATCH_AXIS))
        return heavy.run(states, device_key, 0.0, num_per_state=playouts_per_state, gammas=tables,
                         last_moves=last_moves, active_states=device_share(count, devices))

    if light_policy:
        return shard_batch(light_local, visible_devices(devices), split=(True, False, False))
    return shard_batch(heavy_local, visible_devices(devices), split=(True, False, False, False, True))


def load_log_gammas(path: str | None = None) -> np.ndarray:
    """float32 [K]: log-gammas of a ``jaxgo gammas train`` file, or the shipped ones (path None), checked
    against the feature code's size."""
    loaded = gamma_files.load_default() if path is None else gamma_files.load(path)
    values = np.asarray(loaded.log_gamma, np.float32)
    if values.shape != (move_features.num_features(),):
        raise ValueError(f"gammas {path or 'shipped'}: {values.shape[0]} entries, the feature code has "
                         f"{move_features.num_features()} (retrain or update the file)")
    return values


_dispatch_lock = threading.Lock()
_dispatcher: list = []


def native_dispatcher() -> concurrent.futures.ThreadPoolExecutor:
    """The one thread that starts native batches (each spreads its playouts over the runner's pool), so that
    ``dispatch`` returns at once and batches run one after another in the order they were dispatched."""
    with _dispatch_lock:
        if not _dispatcher:
            _dispatcher.append(concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="jaxgo-dispatch"))
        return _dispatcher[0]


def make_evaluator(policy: str = "heavy", gammas: str | None = None, devices: int = 1,
                   temperature: float = 1.0, backend: str = "auto", threads: int = 0) -> Evaluator:
    """The evaluator of a playout policy (``SearchConfig.playout_policy``) and gamma file (None: shipped), cached;
    ``backend``: native, xla or auto (``resolve_backend``); ``threads`` (native): threads per call, 0 = one per
    core; ``devices`` > 1 (XLA) shards every call over that many local devices (ValueError when fewer are
    visible).  ``temperature`` T (heavy only): the playouts sample moves with probability proportional to
    gamma ** (1 / T), sharper than the move model below 1, flatter above (the tables are data: no new
    compilation)."""
    return _evaluator(policy, gammas, devices, float(temperature), resolve_backend(backend), int(threads))


@functools.lru_cache(maxsize=32)
def _evaluator(policy: str, gammas: str | None, devices: int, temperature: float, backend: str,
               threads: int) -> Evaluator:
    if devices != 1 and backend == "xla":
        visible_devices(devices)
    if not temperature > 0:
        raise ValueError(f"playout temperature must be positive, got {temperature}")
    if threads < 0:
        raise ValueError(f"threads must be at least 0 (0: one per core), got {threads}")
    if policy in NATIVE_ONLY and backend == "xla":
        raise native_only_error(policy)
    options = dict(devices=devices if backend == "xla" else 1, backend=backend, threads=threads)

    def gamma_tables():
        return heavy.policy_tables(load_log_gammas(gammas) / np.float32(temperature))

    if policy == "light":
        return Evaluator("light", **options)
    if policy == "heavy" or policy in runner.REPLY_POLICIES:
        return Evaluator(policy, gamma_tables(), **options)
    if policy in rule_policy.RULE_POLICIES:
        return Evaluator(policy, rule_policy.tables_of_policy(policy), **options)
    if policy in runner.LADDER_POLICIES:
        base = runner.LADDER_POLICIES[policy][0]
        return Evaluator(policy, gamma_tables() if base == "heavy" else rule_policy.tables_of_policy(base), **options)
    raise ValueError(f"unknown playout policy {policy!r}; one of {POLICIES}")


def evaluator_for(config, devices: int = 1, stones: np.ndarray | None = None) -> Evaluator:
    """The evaluator a ``SearchConfig`` asks for (its backend and threads), sharded over ``devices`` local
    devices on XLA; given the position's ``stones`` (int [P]), the one of its policy there
    (``SearchConfig.playout_policy_at``: late in the game ``late_playout_policy`` when set)."""
    policy = config.playout_policy
    if stones is not None:
        policy = config.playout_policy_at(int(np.count_nonzero(np.asarray(stones))), int(np.size(stones)))
    return make_evaluator(policy, config.gammas, devices, config.playout_temperature, config.backend, config.threads)
