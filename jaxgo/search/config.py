"""``SearchConfig``: the one place where search options and their defaults live (KataGo's ``SearchParams``).

Every front end builds its search from this frozen dataclass: ``jaxgo gtp`` and ``jaxgo serve`` read it from
their command lines (``add_arguments`` / ``from_args``), the analysis server also per query from
``overrideSettings`` (``with_overrides``, keys are the field names; the old names of ``DEPRECATED_NAMES`` are
accepted for one version with a message on stderr), and ``jaxgo gtp --server`` sends the
options it was started with to the server that way, so local and remote engines search alike.  Each field is
written once, with its schema beside it (``option``: help, client bounds, choices, board-size default,
command-line flag, old name; kind and None-ness from its annotation), and ``OPTIONS`` is what coercion, the
server's and GTP's checks (``jaxgo.server.settings``), ``add_arguments`` and ``for_size`` read: a field declared
without ``option`` still coerces to its annotated kind.

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

from jaxgo.playouts import BACKENDS as PLAYOUT_BACKENDS
from jaxgo.playouts import POLICIES as PLAYOUT_POLICIES
from jaxgo.search.options import Option, as_bool, asks_default, coerce, field_option, option

# The one list of move generators: the tree searches (jaxgo.search.tree_search, also run by the analysis server),
# the flat searches (jaxgo.search.flat) and random, a uniform legal move without search (the Player's).
TREE_STRATEGIES = ("uct", "rave")
FLAT_STRATEGIES = ("mc", "amaf", "pp", "depth2")
STRATEGIES = TREE_STRATEGIES + FLAT_STRATEGIES + ("random",)
_STRATEGY_TEXT = {"uct": "UCT tree search", "rave": "RAVE tree search", "mc": "flat Monte Carlo",
                  "amaf": "flat AMAF", "pp": "flat progressive pruning", "depth2": "depth-2 minimax of playouts",
                  "random": "uniform random legal moves (no search)"}
_POLICY_TEXT = {"light": "light (uniform) playouts", "heavy": "heavy (gamma-proportional) playouts",
                "rules": "MoGo-style rule playouts", "safe_rules": "rule playouts with joined self-ataris last",
                "safe_atari_rules": "safe rule playouts that chase with ataris next to the last move",
                "ladder_rules": "safe rule playouts that read ladders (native backend only)",
                "ladder_heavy": "heavy playouts that read ladders (native backend only)",
                "ladder2_heavy": "ladder_heavy that also defends two-liberty chains (native backend only)",
                "local_rules": "rule playouts that answer the last move's ataris and two-liberty fights first "
                               "(native backend only)",
                "local_heavy": "ladder_heavy playouts that answer the last move's ataris and two-liberty fights "
                               "first (native backend only)",
                "lgrf_heavy": "heavy playouts with the last good replies, LGRF-1 (native backend only)"}


PRIOR_MODELS = (None, "auto", "large", "base")  # named move models of the priors (else a gamma file)
LARGE_BOARD = 19  # the board-size defaults (``Option.by_size``) take their second value from this size on
MAX_LEAVES_PER_BATCH = 1024  # each device call holds leaves x L boards; every new K compiles new shapes
MAX_PLAYOUTS_PER_LEAF = 256


def board_default(key: str, size: int):
    """The value on a board of ``size`` of the field ``key`` of ``BY_SIZE`` left at None."""
    return BOARD_DEFAULTS[key][size >= LARGE_BOARD]


def asks_board_default(key: str, value) -> bool:
    """Whether ``value`` given for the field ``key`` asks for its board-size default: None or ``auto`` (any case)
    for a field of ``BY_SIZE``."""
    return key in BY_SIZE and asks_default(OPTIONS[key], value)


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
    """How to search: every field with its schema (``option``: help, bounds, choices, board-size default,
    command-line flag), read back as ``OPTIONS``."""

    strategy: str = option("rave", "move generator (random = a uniform legal move, no search)", flag=True,
                           choices=STRATEGIES)
    leaves_per_batch: int | None = option(None, "leaves per device batch K (default: from the budget, 4..128)",
                                          flag="--leaves", bounds=(1, MAX_LEAVES_PER_BATCH))
    playouts_per_leaf: int = option(4, "playouts per leaf L", flag=True, bounds=(1, MAX_PLAYOUTS_PER_LEAF))
    uct_c: float = option(0.7, "UCB1 exploration constant (strategy uct)", bounds=(0.0, 100.0))
    rave_c1: float = option(0.0, "UCB exploration constant under RAVE (0, as MoGo and Fuego run RAVE: RAVE "
                                 "explores)", bounds=(0.0, 100.0))
    rave_c3: float = option(1e-3, "Silver's RAVE bias constant", bounds=(0.0, 1e6))
    bias_c2: float = option(3.0, "progressive-bias weight c2: c2 * K(s, a) / (n + 1), K(s,a) = the gammas' move "
                                 "probability, 0 = off", flag="--bias", bounds=(0.0, 1e6))
    playout_policy: str = option("heavy", "leaf playouts: light (uniform), heavy (gamma-proportional), rules "
                                          "(MoGo-style capture / save / shape tiers), safe_rules (the same, joined "
                                          "self-ataris last), safe_atari_rules (safe_rules, ataris next to the "
                                          "last move in the shape tier), ladder_rules, ladder_heavy, ladder2_heavy, "
                                          "local_rules, local_heavy (ladders read; native), lgrf_heavy (heavy with "
                                          "the last good replies; native)",
                                 flag=True, choices=PLAYOUT_POLICIES, old_name="playouts")
    gammas: str | None = option(None, "gamma file for heavy playouts and priors (default: the shipped gammas)",
                                flag=True)
    prior_model: str | None = option("auto", "move model of the tree's priors and the reported policy: large (the "
                                             "shipped large-pattern model, learnt on 19x19 games), base (the shipped "
                                             "gammas), a gamma file, or auto: large on 13x13 and larger, else "
                                             "--gammas; None: --gammas", flag=True)
    playout_temperature: float = option(1.0, "heavy playouts sample gamma ** (1 / T): < 1 sharper, > 1 flatter",
                                        bounds=(0.0, 100.0), low_open=True)
    prior_even: float = option(0.0, "RAVE virtual playouts at 1/2 for every move (Gelly & Silver's prior)",
                               bounds=(0.0, 1e6))
    prior_pattern: float | None = option(None, "RAVE virtual wins prior_pattern * sqrt(K(s, a)) per move; None: by "
                                               "board size", bounds=(0.0, 1e6), by_size=(20.0, 500.0))
    eqex_even: float = option(0.0, "virtual playouts at 1/2 in every move's own (not RAVE) statistics: Pachi's even "
                                   "prior as equivalent experience (uct/prior.c; 14 there on 9x9)", bounds=(0.0, 1e6))
    eqex_pattern: float = option(0.0, "virtual wins eqex_pattern * sqrt(K(s, a)) in every move's own statistics: "
                                      "Pachi's pattern prior (210 there on 9x9)", bounds=(0.0, 1e6))
    pass_prior_playouts: float = option(64.0, "pseudo-playouts at the node's mean in pass's RAVE value",
                                        bounds=(0.0, 1e9))
    n_expand: int = option(1, "edge visits before a node is descended through", bounds=(1, 10_000))
    resign_threshold: float = option(0.08, "resign when the best move's win rate is below this, 0 = never",
                                     flag=True, bounds=(0.0, 1.0))
    resign_min_playouts: int = option(2000, "playouts a search needs before it may resign", flag=True,
                                      bounds=(0, 10 ** 9))
    pp_c: float = option(2.0, "Bouzy's c for progressive pruning", bounds=(0.0, 100.0))
    pp_min_samples: int = option(32, "playouts of a move before progressive pruning may drop it", bounds=(1, 10 ** 6))
    flat_playouts_per_move: int = option(16, "playouts per candidate per round for mc / amaf / pp / depth2",
                                         bounds=(1, 4096))
    early_stop: bool = option(True, "on a time budget: stop once the most visited move cannot be overtaken "
                                    "(tree.move_decided)")
    widen_playouts: float | None = option(None, "progressive widening (0 = off): a node searches its 2 likeliest "
                                                "moves by K until this many visits, then one more each time its "
                                                "visits grow by widen_factor; None: by board size",
                                          bounds=(0.0, 1e9), by_size=(0.0, 40.0))
    widen_factor: float = option(1.4, "progressive widening's growth factor of visits per move", bounds=(1.0, 100.0),
                                 low_open=True)
    ladder_prune: bool = option(False, "leave out of the root the atari escapes that a ladder still captures "
                                       "(go.ladder)")
    ladder_prune_tree: bool = option(False, "... and out of every node the tree creates, for both sides")
    late_playout_policy: str | None = option("rules", "the playout policy of the searches from late_fill on; None = "
                                                      "off", choices=PLAYOUT_POLICIES, old_name="late_playouts")
    late_fill: float | None = option(None, "the fraction of the board's points covered by stones from which the late "
                                           "policy applies; None: by board size", bounds=(0.0, 1.0),
                                     by_size=(0.45, 0.0))
    score_utility: float = option(0.1, "share u of the score in a playout's value (backup.playout_values; 0: win / "
                                       "loss)", bounds=(0.0, 0.5))
    prior_tactics: float | None = option(None, "tree priors: the capture and atari-escape gammas times e**t, the "
                                               "self-atari gamma over e**t (0 = off); None: by board size (1.5 below "
                                               "19x19, measured on 9x9 against Pachi; 0 from 19x19 on, unmeasured)",
                                         bounds=(0.0, 10.0), by_size=(1.5, 0.0))
    dynamic_komi: float = option(7.0, "handicap games: extra komi for White per handicap stone, fading to 0 "
                                      "(search.komi); 0 = off", bounds=(0.0, 50.0))
    dynamic_komi_moves: int = option(0, "moves over which the dynamic komi fades (0: 200 on 19x19, scaled to the "
                                        "board's points)", bounds=(0, 10_000))
    backend: str = option("auto", "playout code: native (compiled, one board at a time on every core), xla (batched "
                                  "kernels, for GPUs), auto = native on a CPU", flag=True, choices=PLAYOUT_BACKENDS)
    threads: int = option(0, "native playouts: threads per batch, 0 = one per core", flag=True, bounds=(0, 1024))
    playouts_per_visit: int = option(1, "analysis server: playouts behind one reported visit (maxVisits counts "
                                        "visits; jaxgo serve sets 16)", bounds=(1, 64))

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; one of {STRATEGIES}")
        if self.playout_policy not in PLAYOUT_POLICIES:
            raise ValueError(f"unknown playout policy {self.playout_policy!r}; one of {PLAYOUT_POLICIES}")
        if self.leaves_per_batch is not None and self.leaves_per_batch < 1:
            raise ValueError("leaves_per_batch must be at least 1")
        if self.playouts_per_leaf < 1:
            raise ValueError("playouts_per_leaf must be at least 1")
        if self.playouts_per_visit < 1:
            raise ValueError("playouts_per_visit must be at least 1")
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
        if self.dynamic_komi < 0 or self.dynamic_komi_moves < 0:
            raise ValueError("dynamic_komi and dynamic_komi_moves must be at least 0")
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
        return bool(self.bias_c2 or by_size or self.prior_pattern or self.widen_playouts or self.eqex_pattern)

    def describe(self) -> str:
        """The engine in words for help texts and reports, e.g. "RAVE tree search with heavy (gamma-proportional)
        playouts, progressive bias 3 and virtual RAVE experience (--prior 0 20) from the shipped gammas, and
        MoGo-style rule playouts once stones cover 45% of the board"; the board-size defaults in words when they
        are left at None."""
        if self.strategy == "random":
            return _STRATEGY_TEXT["random"]
        text = f"{_STRATEGY_TEXT[self.strategy]} with {_POLICY_TEXT[self.playout_policy]}"
        priors = [f"progressive bias {self.bias_c2:g}"] if self.bias_c2 else []
        small, large = self.for_size(LARGE_BOARD - 1), self.for_size(LARGE_BOARD)  # the board-size defaults
        pattern = (f"{small.prior_pattern:g}; {large.prior_pattern:g} on 19x19" if self.prior_pattern is None
                   else f"{self.prior_pattern:g}")
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
            if self.prior_tactics is None:
                text += (f", their capture and atari-escape gammas times e**{small.prior_tactics:g} below 19x19 "
                         f"(e**{large.prior_tactics:g} on 19x19)")
            elif self.prior_tactics:
                text += f", their capture and atari-escape gammas times e**{self.prior_tactics:g}"
        if self.widen_playouts is None:
            text += f", progressive widening on 19x19 (from {large.widen_playouts:g} visits)"
        elif self.widen_playouts:
            text += f", progressive widening from {self.widen_playouts:g} visits"
        if self.late_playout_policy:
            late = _POLICY_TEXT[self.late_playout_policy]
            if self.late_fill is None:
                text += (f", and {late} once stones cover {small.late_fill:.0%} of the board ({large.late_fill:.0%} "
                         "on 19x19: from the first move)")
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
            fill = self.for_size(math.isqrt(points)).late_fill
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
            changes[key] = coerce(OPTIONS[key], value)
        try:
            return dataclasses.replace(self, **changes), ignored
        except (TypeError, ValueError) as exc:
            raise ValueError(str(exc)) from None


OPTIONS: dict[str, Option] = {field.name: field_option(field) for field in dataclasses.fields(SearchConfig)}
BOARD_DEFAULTS = {name: spec.by_size for name, spec in OPTIONS.items() if spec.by_size}  # (small, large board)
BY_SIZE = tuple(BOARD_DEFAULTS)  # None or "auto" in overrides: by board size
# Old names of SearchConfig fields, accepted for one version with a message on stderr (overrideSettings, GTP
# parameters, --search-option): "playouts" now means a count of playouts only.
DEPRECATED_NAMES = {spec.old_name: name for name, spec in OPTIONS.items() if spec.old_name}


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
    """The search options of ``jaxgo gtp`` and ``jaxgo serve``: one per field with a ``flag`` (``OPTIONS``), the
    pair ``--prior EVEN PATTERN`` and ``--search-option FIELD=VALUE`` for any field (help texts show the
    defaults)."""
    group = parser.add_argument_group("search (defaults: the strongest configuration measured)")
    for spec in OPTIONS.values():
        if spec.flag:
            text = spec.help.replace("%", "%%")
            group.add_argument(spec.flag, type=_ARGUMENT_TYPES[spec.kind], choices=spec.choices,
                               default=spec.default,
                               help=text if "(default" in text else text + " (default %(default)s)")
    small, large = (DEFAULT.for_size(size).prior_pattern for size in (LARGE_BOARD - 1, LARGE_BOARD))
    group.add_argument("--prior", type=_number_or_auto, nargs=2, default=(DEFAULT.prior_even, None),
                       metavar=("EVEN", "PATTERN"),
                       help="RAVE virtual experience (Gelly & Silver): EVEN virtual playouts at 1/2 per move plus "
                            f"PATTERN * sqrt(K(s,a)) virtual wins; 0 0 = off; PATTERN auto = {small:g}, {large:g} on "
                            f"{LARGE_BOARD}x{LARGE_BOARD} (default {DEFAULT.prior_even:g} auto)")
    group.add_argument("--search-option", action="append", default=[], metavar="FIELD=VALUE",
                       help="set any SearchConfig field, e.g. rave_c1=0.1 or uct_c=0.5 (repeatable; fields and "
                            "defaults: " + ", ".join(f"{k}={v}" for k, v in DEFAULT.to_dict().items()) + ")")


def _switch_word(text: str) -> bool:
    try:
        return as_bool("switch", text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}") from None


_ARGUMENT_TYPES = {bool: _switch_word, int: int, float: float, str: None}


def _number_or_auto(text: str):
    """A ``--prior`` word: a number, or ``auto`` (None: by board size)."""
    if text.lower() == "auto":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or auto, got {text!r}") from None


def _flag_dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def from_args(args: argparse.Namespace) -> SearchConfig:
    """The SearchConfig of parsed ``add_arguments`` options; ValueError for a bad ``--search-option``."""
    given = {name: getattr(args, _flag_dest(spec.flag), spec.default) for name, spec in OPTIONS.items() if spec.flag}
    even, pattern = getattr(args, "prior", (DEFAULT.prior_even, DEFAULT.prior_pattern))
    given.update(prior_even=even or 0.0, prior_pattern=pattern)
    config = SearchConfig(**given)
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
