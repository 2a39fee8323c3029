"""``SearchConfig``: the one place where search options and their defaults live (KataGo's ``SearchParams``).

Every front end builds its search from this frozen dataclass: ``jaxgo gtp`` and ``jaxgo serve`` read it from
their command lines (``add_arguments`` / ``from_args``), the analysis server also per query from
``overrideSettings`` (``with_overrides``, keys are the field names; the old names of ``DEPRECATED_NAMES`` are
accepted for one version with a message on stderr), and ``jaxgo gtp --server`` sends the
options it was started with to the server that way, so local and remote engines search alike.

The defaults are the strongest configuration measured against GNU Go (benchmarks/RESULTS.md): RAVE with
gamma-proportional heavy playouts, progressive bias c2 = 3 and the gammas as virtual RAVE experience
(``prior_pattern`` 20) from the shipped gammas, MoGo-style rule playouts once stones cover 45% of the board
(``late_playout_policy``), and a playout value that gives the score a share of 0.1 beside the win
(``score_utility``).  Three fields depend on the board when left at None (``for_size``): on 19x19 the priors weigh
more (``prior_pattern`` 500) and a node searches only its likeliest moves at first (progressive widening,
``widen_playouts`` 40), because there a search's playouts cannot tell the moves apart: with them off, a
10,000-playout search chose moves GNU Go rates at 0.18 of its best, against 0.37 with them and 0.36 for the move
model alone (``jaxgo eval move-quality``, benchmarks/RESULTS.md); and the rule playouts run from the empty board
(``late_fill`` 0), twice as fast as the heavy ones there and as strong per playout against GNU Go.  The RAVE
exploration constant is 0: with 0.1 the UCB term (0.25 for an unvisited move after 500 playouts) outweighs the
differences between RAVE values, and a 500-playout search on 19x19 became a flat sweep of 128 moves with 4 playouts
each; with 0 it concentrates (the most visited move holds about a third of the playouts) while RAVE's AMAF credit
still tries the moves.  Playouts run on the native backend on a CPU and on the XLA kernels on an accelerator
(``backend``).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys

# The one list of move generators: the tree searches (jaxgo.search.tree_search, also run by the analysis server),
# the flat searches (jaxgo.search.flat) and random, a uniform legal move without search (the Player's).
TREE_STRATEGIES = ("uct", "rave")
FLAT_STRATEGIES = ("mc", "amaf", "pp", "depth2")
STRATEGIES = TREE_STRATEGIES + FLAT_STRATEGIES + ("random",)
PLAYOUT_POLICIES = ("light", "heavy", "rules", "safe_rules")
PLAYOUT_BACKENDS = ("auto", "native", "xla")
_STRATEGY_TEXT = {"uct": "UCT tree search", "rave": "RAVE tree search", "mc": "flat Monte Carlo",
                  "amaf": "flat AMAF", "pp": "flat progressive pruning", "depth2": "depth-2 minimax of playouts",
                  "random": "uniform random legal moves (no search)"}
_POLICY_TEXT = {"light": "light (uniform) playouts", "heavy": "heavy (gamma-proportional) playouts",
                "rules": "MoGo-style rule playouts", "safe_rules": "rule playouts with joined self-ataris last"}


PRIOR_MODELS = (None, "auto", "large", "base")  # named move models of the priors (else a gamma file)

# The values of the fields left at None (``SearchConfig.for_size``) below and from ``LARGE_BOARD`` on.
LARGE_BOARD = 19
BOARD_DEFAULTS = {"prior_pattern": (20.0, 500.0), "widen_playouts": (0.0, 40.0), "late_fill": (0.45, 0.0)}
BY_SIZE = tuple(BOARD_DEFAULTS)  # None or "auto" in overrides: by board size


def board_default(key: str, size: int):
    """The value of the ``BOARD_DEFAULTS`` field ``key`` on a board of ``size``."""
    return BOARD_DEFAULTS[key][size >= LARGE_BOARD]


def asks_board_default(key: str, value) -> bool:
    """Whether ``value`` given for the field ``key`` asks for its board-size default: None or ``auto`` (any case)
    for a field of ``BY_SIZE``."""
    return key in BY_SIZE and (value is None or (isinstance(value, str) and value.lower() == "auto"))

# Old names of SearchConfig fields, accepted for one version with a message on stderr (overrideSettings, GTP
# parameters, --search-option): "playouts" now means a count of playouts only.
DEPRECATED_NAMES = {"playouts": "playout_policy", "late_playouts": "late_playout_policy"}


def current_name(key: str) -> str:
    """The field name for ``key``: itself, or for a deprecated name (``DEPRECATED_NAMES``) its new name, after a
    deprecation message on stderr."""
    new = DEPRECATED_NAMES.get(key)
    if new is None:
        return key
    deprecated(f"setting {key!r}", f"{new!r}")
    return new


def deprecated(old: str, new: str) -> None:
    """One line on stderr: ``old`` is deprecated, use ``new`` (the old spelling goes in the next version)."""
    print(f"jaxgo: {old} is deprecated and will be removed in the next version; use {new}", file=sys.stderr,
          flush=True)


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    strategy: str = "rave"  # move generator (random = a uniform legal move, no search)
    leaves_per_batch: int | None = None  # K: leaves per device batch; None chooses it from the budget
    playouts_per_leaf: int = 4  # L: playouts from every leaf
    uct_c: float = 0.7  # UCB1 exploration constant (strategy uct)
    rave_c1: float = 0.0  # UCB exploration constant under RAVE (0, as MoGo and Fuego run RAVE: RAVE explores)
    rave_c3: float = 1e-3  # Silver's RAVE bias constant
    bias_c2: float = 3.0  # progressive bias c2 * K(s, a) / (n + 1); K = the gammas' move probability; 0 = off
    playout_policy: str = "heavy"  # leaf playouts: light (uniform), heavy (gamma-proportional), rules, safe_rules
    gammas: str | None = None  # gamma file for heavy playouts and priors (None: the shipped gammas)
    prior_model: str | None = "auto"  # priors' and reported policy's move model: None = gammas, "large", a file;
    # auto: large from 13x13 on (the shipped large-pattern model, learnt on 19x19 games), else the gammas
    playout_temperature: float = 1.0  # heavy playouts sample gamma ** (1 / T): < 1 sharper, > 1 flatter
    prior_even: float = 0.0  # RAVE virtual playouts at 1/2 for every move (Gelly & Silver's prior)
    prior_pattern: float | None = None  # RAVE virtual wins prior_pattern * sqrt(K(s, a)) per move; None: by board
    # size (BOARD_DEFAULTS: 20, and 500 from 19x19 on)
    pass_prior_playouts: float = 64.0  # pseudo-playouts at the node's mean in pass's RAVE value
    n_expand: int = 1  # edge visits before a node is descended through
    resign_threshold: float = 0.08  # resign when the chosen move's win rate is below this (0 never resigns)
    resign_min_playouts: int = 2000  # ... and the search ran at least this many playouts
    pp_c: float = 2.0  # Bouzy's c for progressive pruning
    pp_min_samples: int = 32  # playouts of a move before progressive pruning may drop it
    flat_playouts_per_move: int = 16  # per candidate per round for mc / amaf / pp / depth2
    early_stop: bool = True  # on a time budget: stop once the most visited move cannot be overtaken (tree.move_decided)
    widen_playouts: float | None = None  # progressive widening (0 = off): a node searches its 2 likeliest moves
    widen_factor: float = 1.4  # by K until widen_playouts visits, then one more each time its visits grow by this
    # factor; None: by board size (BOARD_DEFAULTS: off, and 40 from 19x19 on)
    ladder_prune: bool = False  # leave out of the root the atari escapes that a ladder still captures (go.ladder)
    ladder_prune_tree: bool = False  # ... and out of every node the tree creates, for both sides
    late_playout_policy: str | None = "rules"  # the playout policy of the searches from late_fill on; None = off
    late_fill: float | None = None  # the fraction of the board's points covered by stones from which the late policy
    # applies; None: by board size (BOARD_DEFAULTS: 0.45, and from the first move on 19x19)
    score_utility: float = 0.1  # share u of the score in a playout's value (backup.playout_values; 0: win / loss)
    backend: str = "auto"  # playouts: native (numba, one board at a time), xla (batched kernels), auto: native on CPU
    threads: int = 0  # native playouts: threads per batch (0: one per core)

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; one of {STRATEGIES}")
        if self.playout_policy not in PLAYOUT_POLICIES:
            raise ValueError(f"unknown playout policy {self.playout_policy!r}; one of {PLAYOUT_POLICIES}")
        if self.leaves_per_batch is not None and self.leaves_per_batch < 1:
            raise ValueError("leaves_per_batch must be at least 1")
        if self.playouts_per_leaf < 1:
            raise ValueError("playouts_per_leaf must be at least 1")
        if not self.playout_temperature > 0:
            raise ValueError("playout_temperature must be positive")
        if (self.widen_playouts is not None and self.widen_playouts < 0) or self.widen_factor <= 1:
            raise ValueError("widen_playouts must be >= 0 and widen_factor > 1")
        if self.late_playout_policy and self.late_playout_policy not in PLAYOUT_POLICIES:
            raise ValueError(f"unknown late playout policy {self.late_playout_policy!r}; one of {PLAYOUT_POLICIES}")
        if self.late_fill is not None and not 0 <= self.late_fill <= 1:
            raise ValueError("late_fill must be between 0 and 1")
        if self.backend not in PLAYOUT_BACKENDS:
            raise ValueError(f"unknown playout backend {self.backend!r}; one of {PLAYOUT_BACKENDS}")
        if self.threads < 0:
            raise ValueError("threads must be at least 0 (0: one per core)")
        if self.prior_model not in PRIOR_MODELS and not os.path.isfile(self.prior_model):
            raise ValueError(f"prior_model: {self.prior_model!r} is neither one of {PRIOR_MODELS[1:]} nor a gamma file")
        if not 0 <= self.score_utility < 0.5:
            raise ValueError("score_utility must be at least 0 and below 0.5 (a won playout must outweigh a lost one)")

    def for_size(self, size: int) -> "SearchConfig":
        """This config for a board of ``size``: the fields left at None (``BOARD_DEFAULTS``) set to their value
        below or from ``LARGE_BOARD`` on; every other field, and a value given for one of them, unchanged."""
        changes = {key: board_default(key, size) for key in BY_SIZE if getattr(self, key) is None}
        return dataclasses.replace(self, **changes) if changes else self

    def for_actions(self, actions: int) -> "SearchConfig":
        """``for_size`` for a node of ``actions`` = P + 1 actions; unchanged when nothing is left to set (so
        the statistics of a node that is not a board, in tests, need the fields given)."""
        if self.prior_pattern is None or self.widen_playouts is None:  # the two fields a node's statistics use
            from jaxgo.go.tables import board_size

            return self.for_size(board_size(actions - 1))
        return self

    @property
    def uses_gammas(self) -> bool:
        """Whether the tree's priors K(s, a) come from the gammas (else they are uniform): for progressive bias,
        virtual experience or progressive widening."""
        by_size = self.prior_pattern is None  # on every board size
        return bool(self.bias_c2 or by_size or self.prior_pattern or self.widen_playouts)

    def describe(self) -> str:
        """The engine in words for help texts and reports, e.g. "RAVE tree search with heavy (gamma-proportional)
        playouts, progressive bias 3 and virtual RAVE experience (--prior 0 20) from the shipped gammas, and
        MoGo-style rule playouts once stones cover 45% of the board"; the board-size defaults in words when they
        are left at None."""
        if self.strategy == "random":
            return _STRATEGY_TEXT["random"]
        text = f"{_STRATEGY_TEXT[self.strategy]} with {_POLICY_TEXT[self.playout_policy]}"
        priors = [f"progressive bias {self.bias_c2:g}"] if self.bias_c2 else []
        small, large = BOARD_DEFAULTS["prior_pattern"]
        pattern = f"{small:g}; {large:g} on 19x19" if self.prior_pattern is None else f"{self.prior_pattern:g}"
        if self.prior_even or self.prior_pattern is None or self.prior_pattern:
            priors.append(f"virtual RAVE experience (--prior {self.prior_even:g} {pattern})")
        if priors:
            source = "the shipped gammas" if self.gammas is None else f"the gammas in {self.gammas}"
            if self.prior_model == "large":
                source = "the shipped large-pattern move model"
            elif self.prior_model == "auto":
                source += " (the shipped large-pattern model from 13x13 on)"
            elif self.prior_model not in (None, "base"):
                source = f"the move model in {self.prior_model}"
            text += f", {' and '.join(priors)} from {source}"
        if self.widen_playouts is None:
            text += f", progressive widening on 19x19 (from {BOARD_DEFAULTS['widen_playouts'][1]:g} visits)"
        elif self.widen_playouts:
            text += f", progressive widening from {self.widen_playouts:g} visits"
        if self.late_playout_policy:
            late = _POLICY_TEXT[self.late_playout_policy]
            if self.late_fill is None:
                small, large = BOARD_DEFAULTS["late_fill"]
                text += (f", and {late} once stones cover {small:.0%} of the board ({large:.0%} on 19x19: from the "
                         "first move)")
            elif self.late_fill == 0:
                text += f", and {late} from the first move"
            else:
                text += f", and {late} once stones cover {self.late_fill:.0%} of the board"
        if self.score_utility and self.strategy in TREE_STRATEGIES:
            text += f"; playouts valued with a score share of {self.score_utility:g}"
        return text

    def playout_policy_at(self, stones: int, points: int) -> str:
        """The playout policy of a search from a position with ``stones`` stones on a board of ``points``
        points: ``late_playout_policy`` once they cover ``late_fill`` of the board (by the board's size when None),
        else ``playout_policy``."""
        fill = self.late_fill
        if fill is None:
            fill = board_default("late_fill", math.isqrt(points))
        if self.late_playout_policy and stones >= fill * points:
            return self.late_playout_policy
        return self.playout_policy

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def with_overrides(self, overrides: dict) -> tuple["SearchConfig", list[str]]:
        """(config with the known fields of ``overrides`` set, messages for the ignored keys); a known field
        with a value of the wrong type or out of range raises ValueError naming the field."""
        fields = {f.name: f for f in dataclasses.fields(self)}
        changes, ignored = {}, []
        for key, value in overrides.items():
            key = current_name(key)
            if key not in fields:
                ignored.append(f"setting {key!r} ignored")
                continue
            changes[key] = _coerce(key, value, getattr(self, key))
        try:
            return dataclasses.replace(self, **changes), ignored
        except (TypeError, ValueError) as exc:
            raise ValueError(str(exc)) from None


def _coerce(key: str, value, default):
    """``value`` as the type of the field ``key`` (whose default is ``default``); ValueError if it is not."""
    if key in ("gammas", "prior_model", "leaves_per_batch", "late_playout_policy") and value is None:
        return None
    if asks_board_default(key, value):
        return None
    if isinstance(default, bool):
        return _as_bool(key, value)
    if isinstance(value, bool):
        raise ValueError(f"{key}: expected a number or string, got {value!r}")
    if key in ("strategy", "playout_policy", "gammas", "prior_model", "late_playout_policy", "backend"):
        if not isinstance(value, str):
            raise ValueError(f"{key}: expected a string, got {value!r}")
        return value
    if key in ("leaves_per_batch", "playouts_per_leaf", "n_expand", "resign_min_playouts", "pp_min_samples",
               "flat_playouts_per_move", "threads"):
        if not isinstance(value, int) and not (isinstance(value, float) and value.is_integer()):
            raise ValueError(f"{key}: expected an integer, got {value!r}")
        return int(value)
    if not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{key}: expected a finite number, got {value!r}")
    return float(value)


def _as_bool(key: str, value) -> bool:
    """A switch from a bool, 0 / 1, or true / false / on / off / yes / no (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false", "on", "off", "yes", "no"):
        return value.lower() in ("true", "on", "yes")
    raise ValueError(f"{key}: expected true or false, got {value!r}")


class DeprecatedOption(argparse.Action):
    """An old spelling of an option (``--playouts POLICY`` for ``--playout-policy``): stores the value in the new
    option's ``dest`` after a deprecation message on stderr (``new``: the new spelling)."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        deprecated(option_string, self.new)
        setattr(namespace, self.dest, values)


DEFAULT = SearchConfig()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The search options of ``jaxgo gtp`` and ``jaxgo serve`` (help texts show the defaults)."""
    d = DEFAULT
    group = parser.add_argument_group("search (defaults: the strongest configuration measured)")
    group.add_argument("--strategy", choices=STRATEGIES, default=d.strategy,
                       help="move generator (default %(default)s; random = a uniform legal move)")
    group.add_argument("--playout-policy", choices=PLAYOUT_POLICIES, default=d.playout_policy,
                       help="leaf playouts: light (uniform), heavy (gamma-proportional), rules (MoGo-style "
                            "capture / save / shape tiers) or safe_rules (the same, joined self-ataris last) "
                            "(default %(default)s)")
    group.add_argument("--bias", type=float, default=d.bias_c2,
                       help="progressive-bias weight c2; K(s,a) = the gammas' move probability, 0 = off "
                            "(default %(default)s)")
    group.add_argument("--prior", type=_number_or_auto, nargs=2, default=(d.prior_even, None),
                       metavar=("EVEN", "PATTERN"),
                       help="RAVE virtual experience (Gelly & Silver): EVEN virtual playouts at 1/2 per move plus "
                            "PATTERN * sqrt(K(s,a)) virtual wins; 0 0 = off; PATTERN auto = 20, 500 on 19x19 "
                            "(default 0 auto)")
    group.add_argument("--gammas", default=d.gammas,
                       help="gamma file for heavy playouts and priors (default: the shipped gammas)")
    group.add_argument("--prior-model", default=d.prior_model,
                       help="move model of the tree's priors and the reported policy: large (the shipped "
                            "large-pattern model), base (the shipped gammas), a gamma file, or auto: large on 13x13 "
                            "and larger, else --gammas (default %(default)s)")
    group.add_argument("--leaves", type=int, default=d.leaves_per_batch,
                       help="leaves per device batch K (default: from the budget, 4..128)")
    group.add_argument("--playouts-per-leaf", type=int, default=d.playouts_per_leaf,
                       help="playouts per leaf L (default %(default)s)")
    group.add_argument("--backend", choices=PLAYOUT_BACKENDS, default=d.backend,
                       help="playout code: native (compiled, one board at a time on every core), xla (batched "
                            "kernels, for GPUs), auto = native on a CPU (default %(default)s)")
    group.add_argument("--threads", type=int, default=d.threads,
                       help="native playouts: threads per batch, 0 = one per core (default %(default)s)")
    group.add_argument("--resign-threshold", type=float, default=d.resign_threshold,
                       help="resign when the best move's win rate is below this, 0 = never (default %(default)s)")
    group.add_argument("--resign-min-playouts", type=int, default=d.resign_min_playouts,
                       help="playouts a search needs before it may resign (default %(default)s)")
    group.add_argument("--search-option", action="append", default=[], metavar="FIELD=VALUE",
                       help="set any SearchConfig field, e.g. rave_c1=0.1 or uct_c=0.5 (repeatable; fields and "
                            "defaults: " + ", ".join(f"{k}={v}" for k, v in d.to_dict().items()) + ")")


def _number_or_auto(text: str):
    """A ``--prior`` word: a number, or ``auto`` (None: by board size)."""
    if asks_board_default("prior_pattern", text):
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or auto, got {text!r}") from None


def from_args(args: argparse.Namespace) -> SearchConfig:
    """The SearchConfig of parsed ``add_arguments`` options; ValueError for a bad ``--search-option``."""
    config = SearchConfig(strategy=args.strategy, playout_policy=args.playout_policy, bias_c2=args.bias,
                          prior_even=args.prior[0] or 0.0, prior_pattern=args.prior[1], gammas=args.gammas,
                          prior_model=getattr(args, "prior_model", DEFAULT.prior_model),
                          leaves_per_batch=args.leaves, playouts_per_leaf=args.playouts_per_leaf,
                          resign_threshold=args.resign_threshold, resign_min_playouts=args.resign_min_playouts,
                          backend=getattr(args, "backend", DEFAULT.backend),
                          threads=getattr(args, "threads", DEFAULT.threads))
    overrides = {}
    for item in getattr(args, "search_option", []) or []:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"--search-option {item!r}: expected FIELD=VALUE")
        overrides[current_name(key.strip())] = _parse_value(text.strip())
    config, ignored = config.with_overrides(overrides)
    if ignored:
        raise ValueError(f"--search-option: unknown field(s) {sorted(set(overrides) - set(config.to_dict()))}")
    return config


def _parse_value(text: str):
    """A command-line value as int, float, None or string."""
    if text.lower() == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def changed_fields(config: SearchConfig, base: SearchConfig = DEFAULT) -> dict:
    """The fields of ``config`` that differ from ``base`` (what a front end sends as ``overrideSettings``)."""
    return {k: v for k, v in config.to_dict().items() if getattr(base, k) != v}
