"""Tune search constants by SPSA on self-play (Spall 1998; the method Stockfish's and Leela's testers use).

    jaxgo eval spsa --param bias_c2=1.0:0:4:0.5 --param rave_c3=1e-3:1e-5:1e-1:1:log \\
        --param rave_c1=0.0:0:0.3:0.05 --playouts 500 --iterations 100 --log benchmarks/logs/tune_spsa.jsonl

Each ``--param NAME=START:LOW:HIGH:STEP[:log]`` is a ``SearchConfig`` field, its start value, its bounds and the
size of the perturbation ``c`` in its own units (``log``: the field is tuned as log10 of its value, STEP in
decades).  Iteration k draws a random sign per parameter (``delta``), plays ``--games-per-iteration`` games (an
even number; colours alternate) between theta + c_k delta and theta - c_k delta on a 9x9 board, both jaxgo
engines at ``--playouts`` per move, and moves theta along the measured difference:

    theta <- clip(theta + a_k * (score(theta+) - score(theta-)) / (2 c_k delta)),
    a_k = a / (k + 1 + A) ** 0.602,  c_k = c / (k + 1) ** 0.101

with the score a win rate in [0, 1] and the parameters in units of their STEP (so one ``a`` serves all of them).
The report gives the last quarter's mean of every parameter and how far it moved from the start in STEPs
(``steps_moved``; within one STEP is within the perturbation the run itself tried, so the start stands), and how
many iterations one colour won outright (``colour_decided``: with alternating colours they move nothing).
One JSON line per iteration goes to ``--log`` (theta before the step, delta, both configurations' engine options,
the games' results, theta after); running the same command again continues from the last line (a killed run loses
at most the iteration in progress).  ``--report`` prints the trajectory and the final values (and with ``--plot``
draws each parameter against the iteration).  The tuned values are then checked the usual way: against the
defaults in self-play and against GNU Go (jaxgo/eval/strength.py), never on the tuning games themselves.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import shlex
import sys
from pathlib import Path

import numpy as np

from jaxgo.match import run_match
from jaxgo.search.config import SearchConfig

DEFAULT_ENGINE = f"{shlex.quote(sys.executable)} -m jaxgo gtp"


@dataclasses.dataclass(frozen=True)
class Param:
    name: str  # a SearchConfig field
    start: float
    low: float
    high: float
    step: float  # perturbation size c, in the tuned coordinate
    log: bool = False  # tuned as log10(value)

    @classmethod
    def parse(cls, text: str) -> "Param":
        """``NAME=START:LOW:HIGH:STEP[:log]``; ValueError naming what is wrong."""
        name, sep, rest = text.partition("=")
        fields = {f.name for f in dataclasses.fields(SearchConfig)}
        if not sep or name not in fields:
            raise ValueError(f"--param {text!r}: expected FIELD=START:LOW:HIGH:STEP[:log] with a SearchConfig field")
        parts = rest.split(":")
        log = len(parts) == 5 and parts[4] == "log"
        if len(parts) not in (4, 5) or (len(parts) == 5 and not log):
            raise ValueError(f"--param {text!r}: expected START:LOW:HIGH:STEP[:log]")
        start, low, high, step = (float(p) for p in parts[:4])
        if not (low <= start <= high) or step <= 0 or (log and low <= 0):
            raise ValueError(f"--param {text!r}: need LOW <= START <= HIGH, STEP > 0 (and LOW > 0 with log)")
        return cls(name, start, low, high, step, log)

    def to_unit(self, value: float) -> float:
        """The tuned coordinate in units of STEP."""
        return (math.log10(value) if self.log else value) / self.step

    def from_unit(self, unit: float) -> float:
        """The field's value of a tuned coordinate, clipped to [LOW, HIGH]."""
        x = unit * self.step
        value = 10.0 ** x if self.log else x
        return float(min(max(value, self.low), self.high))


def gains(k: int, a: float, c: float, big_a: float) -> tuple[float, float]:
    """(a_k, c_k) of Spall's standard schedule (exponents 0.602 and 0.101)."""
    return a / (k + 1 + big_a) ** 0.602, c / (k + 1) ** 0.101


def step(theta: np.ndarray, delta: np.ndarray, score_plus: float, score_minus: float, a_k: float,
         c_k: float) -> np.ndarray:
    """theta [n] (units) after one SPSA ascent step on the two measured scores; delta [n] in {-1, +1}."""
    return theta + a_k * (score_plus - score_minus) / (2.0 * c_k * delta)


def clip_units(params: list[Param], theta: np.ndarray) -> np.ndarray:
    return np.array([p.to_unit(p.from_unit(t)) for p, t in zip(params, theta)])


def options(params: list[Param], theta: np.ndarray) -> str:
    """``jaxgo gtp`` options setting every tuned field to theta's value."""
    return " ".join(f"--search-option {p.name}={p.from_unit(t):.6g}" for p, t in zip(params, theta))


def colour_decided(results: list[str]) -> bool:
    """Whether one colour won every game of an iteration (results like "B+Resign"): with colours alternating,
    such an iteration scores both configurations 1/2 and moves nothing."""
    return len(results) > 1 and {text[:2] for text in results} in ({"B+"}, {"W+"})


def read_log(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def tune(args) -> int:
    params = [Param.parse(text) for text in args.param]
    log = Path(args.log)
    log.parent.mkdir(parents=True, exist_ok=True)
    history = read_log(log)
    if history and [h["name"] for h in history[0]["params"]] != [p.name for p in params]:
        print(f"{log} tunes other parameters; use another --log", file=sys.stderr)
        return 2
    theta = (np.array([p.to_unit(history[-1]["after"][p.name]) for p in params]) if history
             else np.array([p.to_unit(p.start) for p in params]))
    rng = np.random.default_rng(args.seed + len(history))
    base = (f"{args.engine} --quiet --size {args.size} --komi 7.5 --playouts {args.playouts} --seed {{seed}} "
            f"{args.engine_options}").strip()
    for k in range(len(history), args.iterations):
        a_k, c_k = gains(k, args.a, args.c, args.big_a)
        delta = rng.choice([-1.0, 1.0], size=len(params))
        plus, minus = clip_units(params, theta + c_k * delta), clip_units(params, theta - c_k * delta)
        summary = run_match(f"{base} {options(params, plus)}", f"{base} {options(params, minus)}",
                            games=args.games_per_iteration, size=args.size, komi=7.5, alternate=True,
                            parallel=args.parallel, timeout=args.timeout)
        score_plus = summary["win_rate_a"]
        after = clip_units(params, step(theta, delta, score_plus, 1.0 - score_plus, a_k, c_k))
        record = {"iteration": k, "params": [dataclasses.asdict(p) for p in params],
                  "before": {p.name: p.from_unit(t) for p, t in zip(params, theta)},
                  "delta": delta.tolist(), "a_k": a_k, "c_k": c_k,
                  "plus": options(params, plus), "minus": options(params, minus),
                  "results": [g["result"] for g in summary["games_detail"]],
                  "forfeits": len(summary["forfeits"]), "score_plus": score_plus,
                  "after": {p.name: p.from_unit(t) for p, t in zip(params, after)}}
        with log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        theta = after
        values = ", ".join(f"{name}={value:.4g}" for name, value in record["after"].items())
        print(f"iteration {k + 1}/{args.iterations}: theta+ scored {score_plus:.2f} "
              f"({summary['seconds']:.0f} s); {values}", file=sys.stderr, flush=True)
    return report(args)


def report(args) -> int:
    history = read_log(Path(args.log))
    if not history:
        print(f"{args.log}: no iterations yet", file=sys.stderr)
        return 1
    params = [Param(**p) for p in history[0]["params"]]
    names = [p.name for p in params]
    games = sum(len(h["results"]) for h in history)
    final = history[-1]["after"]
    tail = history[-max(1, len(history) // 4):]  # the mean of the last quarter smooths SPSA's noise
    smoothed = {name: float(np.mean([h["after"][name] for h in tail])) for name in names}
    start = history[0]["before"]
    moved = {p.name: round(p.to_unit(smoothed[p.name]) - p.to_unit(start[p.name]), 3) for p in params}
    print(json.dumps({"iterations": len(history), "games": games, "start": start, "final": final,
                      "last_quarter_mean": smoothed, "steps_moved": moved,
                      "colour_decided": sum(colour_decided(h["results"]) for h in history),
                      "forfeits": sum(h["forfeits"] for h in history)}))
    if args.plot:
        import matplotlib
        import matplotlib.ticker

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(len(names), 1, figsize=(6, 2.2 * len(names)), sharex=True, squeeze=False)
        for ax, param in zip(axes[:, 0], params):
            ys = [start[param.name]] + [h["after"][param.name] for h in history]
            unit = param.to_unit(start[param.name])
            ax.axhspan(param.from_unit(unit - 1), param.from_unit(unit + 1), color="0.9", lw=0,
                       label="start +- one STEP")
            ax.axhline(start[param.name], color="0.5", ls="--", lw=0.8)
            ax.plot(range(len(ys)), ys, lw=1, label="theta")
            ax.set_ylabel(param.name)
            if param.log:
                ax.set_yscale("log")
                ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
                ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
                ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axes[0, 0].legend(fontsize=7, loc="upper left")
        axes[-1, 0].set_xlabel("SPSA iteration")
        fig.suptitle(f"SPSA self-play tuning, {games} games", fontsize=10)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval spsa", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--param", action="append", default=[], metavar="NAME=START:LOW:HIGH:STEP[:log]")
    parser.add_argument("--playouts", type=int, default=500, help="playouts per move of both engines")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--games-per-iteration", type=int, default=2)
    parser.add_argument("--a", type=float, default=2.0, help="step gain a (units of STEP per unit of score)")
    parser.add_argument("--c", type=float, default=1.0, help="perturbation c (units of STEP)")
    parser.add_argument("--big-a", type=float, default=10.0, help="stability constant A (about 10%% of iterations)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engine", default=DEFAULT_ENGINE)
    parser.add_argument("--engine-options", default="", help="further options of both engines")
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--log", default="benchmarks/logs/tune_spsa.jsonl")
    parser.add_argument("--report", action="store_true", help="print the trajectory's summary without playing")
    parser.add_argument("--plot", default=None, help="with --report: draw the parameters against the iteration")
    args = parser.parse_args(argv)
    try:
        if args.report:
            return report(args)
        if not args.param:
            parser.error("give at least one --param")
        if args.games_per_iteration < 2 or args.games_per_iteration % 2:
            parser.error("--games-per-iteration must be even (colours alternate)")
        return tune(args)
    except ValueError as exc:
        print(f"jaxgo eval spsa: {exc}", file=sys.stderr)
        return 2

