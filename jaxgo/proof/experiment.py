"""``jaxgo solve learn``: the learning protocol of Stern, Herbrich & Graepel (2007, sec. 5.2) on mined problems.

    jaxgo solve learn --train TRAIN.jsonl[.gz] --test TEST.jsonl[.gz] --model beta|beta1000|gauss|gauss_tuned[,...]
                      [--max-nodes N --timeout S] [--test-max-nodes N --test-timeout S] [--passes K]
                      [--train-limit N] [--test-limit N] [--variants pp,T2,fb0.25,pnsorder,pnsinit0.5]
                      [--out DIR] [--json]

1. Problems: ``mining.load_mined`` (records whose answer jaxgo's PNS contradicts are set aside); test problems
   whose position hash also occurs in the training file are dropped (counted).  ``--train-limit`` /
   ``--test-limit`` take a seeded random sample (``--hard-first`` takes the hard test problems first, ``--hard N``
   at most N of them and the others after).
2. Training, per model: passes over the training set, the first attempting every problem, the later ones
   re-attempting the failures (``learning.train``), harvesting patterns throughout and updating after each search.
3. Test, in the same process and one after the other: PNS without knowledge, then PP with each frozen model, with
   the same per-problem node and time budgets; the time includes the pattern keys and priors.  ``--variants``
   times other test-time searchers with each trained model (``VARIANTS``: tempered priors, a PNS fallback, PNS
   ordered by the prior or with prior-initialised proof numbers), labelled ``MODEL/VARIANT``.

Output: one JSON summary line per model (``--json``; else a sentence) with test_problems, pns_solved, pp_solved,
newly_failed, newly_solved, mean_speedup, median_speedup, geomean_speedup, median_node_ratio and the same on the
hard subset (the problems PNS fails, or solves with more than 10,000 nodes, in this run), and ``pattern_coverage``
(for T0..T7, the fraction of the test searches' generated moves whose pattern has evidence from training;
``Coverage``; its look-ups are timed with the searches); ``DIR/learn_rows.jsonl`` (one row per test problem and
searcher) and ``DIR/learn_<model>.png``, the Figure 8 scatter (log time PNS vs PP; x = newly solved, o = newly
failed, drawn at 1.3 x the time-out). ``answer_rank`` (summary; per row in the rows file): where PNS's proving first
move ranks among the root candidates ordered by the learnt prior, against (n + 1) / 2 for uniform priors
(``answer_ranks``).

Models: ``none`` = PP with prior 0.5 (no learning; the no-knowledge baseline); ``beta`` / ``beta1`` = Beta(1, 1);
``beta1000`` = Beta(1000, 1000) (the paper's peaked prior); ``gauss`` = hierarchical Gaussian, beta_i^2 = 1;
``gauss_tuned`` = hierarchical with beta_i^2 estimated after the first pass and the prior strength of ``--sigma0`` /
``--noise`` (a smaller learning rate: the paper's "prior hand tuned to reduce the learning rate").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import time
from collections import Counter


def make_model(name: str, sigma0: float = 1.0, noise: float = 1.0):
    """(model, tune_after) for a model name (see the module doc)."""
    from jaxgo.proof.models import BetaModel, HierarchicalGaussian

    if name == "none":
        return None, 0
    if name in ("beta", "beta1"):
        return BetaModel(1, 1, lazy=True), 0
    if name == "beta1000":
        return BetaModel(1000, 1000, lazy=True), 0
    if name == "gauss":
        return HierarchicalGaussian(lazy=True), 0
    if name == "gauss_tuned":
        return HierarchicalGaussian(sigma0=sigma0, noise=noise, lazy=True), 1
    raise ValueError(f"unknown model {name!r} (beta, beta1000, gauss, gauss_tuned)")


def sample(problems: list[dict], limit: int, seed: int, hard_first: bool = False, hard: int = -1) -> list[dict]:
    """A seeded random sample of ``limit`` problems (all when 0); ``hard_first`` takes the (mined) hard ones
    first; ``hard`` >= 0 takes at most that many hard ones and fills the sample with the others."""
    from jaxgo.proof.mining import is_hard

    rng = random.Random(seed)
    probs = list(problems)
    rng.shuffle(probs)
    if hard >= 0:
        tough = [p for p in probs if is_hard(p)][:hard]
        probs = tough + [p for p in probs if not is_hard(p)]
    elif hard_first:
        probs.sort(key=lambda p: not is_hard(p))
    return probs[:limit] if limit else probs


def load_sets(train_path: str, test_path: str, train_limit: int = 0, test_limit: int = 0, seed: int = 0,
              hard_first: bool = False, hard: int = -1, validation: int = 0) -> tuple[list, list, list, dict]:
    """(training problems, validation problems, test problems, load statistics) with train/test overlaps removed
    from the test set.  The validation problems (``validation`` of them, the hard share as for the test sample)
    come from the training file but not from the training sample: training games, disjoint problems."""
    from jaxgo.proof.mining import load_mined

    st_train, st_test = Counter(), Counter()
    train = load_mined(train_path, stats=st_train)
    test = load_mined(test_path, stats=st_test)
    names = {p["name"] for p in train}
    overlap = sum(p["name"] in names for p in test)
    test = [p for p in test if p["name"] not in names]
    info = dict(train_file=len(train), test_file=len(test), overlap_dropped=overlap, train_load=dict(st_train),
                test_load=dict(st_test))
    pool = sample(train, 0, seed)
    chosen = pool[:train_limit] if train_limit else pool
    rest = pool[len(chosen):]
    if validation and len(rest) < validation:
        raise ValueError(f"{validation} validation problems asked for, {len(rest)} training problems left over")
    held_out = sample(rest, validation, seed + 2, hard_first, hard) if validation else []
    return chosen, held_out, sample(test, test_limit, seed + 1, hard_first, hard), info


def select_variant(base: list[dict], by_variant: dict) -> tuple[str, list]:
    """The variant whose validation rows solve the most problems (PNS's solved - newly failed + newly solved),
    ties broken by the larger median node ratio; (its name, [(variant, solved, median node ratio), ...])."""
    from jaxgo.proof.learning import compare

    scores = []
    for spec, rows in by_variant.items():
        c = compare(base, rows)
        ratio = c["median_node_ratio"]
        scores.append((spec, c["solved"], 0.0 if math.isnan(ratio) else ratio))
    best = max(scores, key=lambda t: (t[1], t[2]))
    return best[0], scores


def speedup_summary(base: list[dict], other: list[dict]) -> dict:
    """The summary fields of ``learning.compare`` under the names of the issue, plus the hard subset."""
    from jaxgo.proof.learning import compare

    c = compare(base, other)
    out = dict(test_problems=c["problems"], pns_solved=c["solved_base"], pp_solved=c["solved"],
               newly_failed=c["newly_failed"], newly_solved=c["newly_solved"], both_solved=c["both"],
               mean_speedup=c["mean_speedup"], median_speedup=c["median_speedup"],
               geomean_speedup=c["geomean_speedup"], mean_node_ratio=c["mean_node_ratio"],
               median_node_ratio=c["median_node_ratio"])
    hard = [i for i, r in enumerate(base) if r.get("hard")]
    if hard:
        h = compare([base[i] for i in hard], [other[i] for i in hard])
        out.update(hard_problems=len(hard), hard_pns_solved=h["solved_base"], hard_pp_solved=h["solved"],
                   hard_mean_speedup=h["mean_speedup"], hard_median_node_ratio=h["median_node_ratio"])
    return out


class Coverage:
    """Wraps a trained model for the test: predicts as it does and counts, for each template size T0..T7, how
    many generated moves had a pattern of that size in the model's table (seen in training)."""

    def __init__(self, model):
        self.model = model
        self.name = getattr(model, "name", "model")
        self.calls = 0
        self.hits = [0] * 8

    def predict(self, stack):
        self.calls += 1
        table = self.model.table
        for i, key in enumerate(stack):
            if int(key) in table:
                self.hits[i] += 1
        return self.model.predict(stack)

    def rates(self) -> list[float]:
        """Fraction of predictions whose T_i pattern was in the table, i = 0..7."""
        return [round(h / max(self.calls, 1), 4) for h in self.hits]


def time_set(problems: list[dict], solver: str, model=None, **kw) -> list[dict]:
    """``learning.evaluate`` rows, each tagged with the problem's hard flag, query and mined PNS nodes."""
    from jaxgo.proof.learning import evaluate
    from jaxgo.proof.mining import is_hard

    rows = evaluate(problems, solver, model, **kw)
    for p, r in zip(problems, rows):
        r.update(mined_hard=is_hard(p), query=p.get("query"), libs=p.get("libs"), mined_pns_nodes=p.get("pns_nodes"))
    return rows


def mark_hard(base: list[dict], threshold: int = 10000) -> None:
    """Flag the rows of the PNS baseline that are hard in this run: more than ``threshold`` nodes, or unsolved."""
    for r in base:
        r["hard"] = (not r["solved"]) or r["nodes"] > threshold


def plot_scatter(path: str, base: list[dict], other: list[dict], label: str, summary: dict, timeout: float,
                 searcher: str = "PP") -> None:
    """Figure 8 analogue: log time of PNS (x) against ``searcher`` (PP, or PNS for the ``pnsorder`` /
    ``pnsinit`` variants) with the learnt prior (y) per test problem; crosses =
    newly solved, circles = newly failed (both drawn at 1.3 x the time-out), dots = solved by both."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cap = timeout * 1.3
    fig, ax = plt.subplots(figsize=(5, 5))
    for b, o in zip(base, other):
        x = max(b["seconds"], 1e-3) if b["solved"] else cap
        y = max(o["seconds"], 1e-3) if o["solved"] else cap
        if b["solved"] and o["solved"]:
            ax.plot(x, y, ".", color="red" if b.get("hard") else "k", alpha=0.6, ms=5)
        elif o["solved"]:
            ax.plot(x, y, "bx", ms=8)
        elif b["solved"]:
            ax.plot(x, y, "o", mec="r", mfc="none", ms=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot([1e-3, cap * 1.2], [1e-3, cap * 1.2], "k--", lw=0.8)
    ax.set_xlabel("PNS time (s)")
    ax.set_ylabel(f"{searcher} + {label} time (s)")
    ax.set_title(f"{label}: {summary['newly_failed']} newly failed (o), {summary['newly_solved']} newly solved (x)\n"
                 f"mean speedup {summary['mean_speedup']:.2f}x, median {summary['median_speedup']:.2f}x "
                 f"(red dots: hard)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_variant(spec: str) -> dict:
    """Keyword arguments of ``time_set`` for a test-time searcher spec (see ``VARIANTS``); ValueError if unknown."""
    try:
        if spec == "pp":
            return dict(solver="pp")
        if spec == "pnsorder":
            return dict(solver="pns")
        if spec.startswith("pnsinit"):
            s = float(spec[len("pnsinit"):])
            if s > 0:
                return dict(solver="pns", prior_init=s)
        elif spec.startswith("fb"):
            f = float(spec[2:])
            if 0 < f < 1:
                return dict(solver="pp", fallback=f)
        elif spec.startswith("T"):
            t = float(spec[1:])
            if t > 0:
                return dict(solver="pp", temperature=t)
    except ValueError:
        pass
    raise ValueError(f"unknown test variant {spec!r} ({VARIANTS})")


VARIANTS = ("pp (PP with the learnt priors), T<t> (PP with the priors' log-odds divided by t), fb<f> (PP for the "
            "fraction f of the budgets, then PNS without knowledge), pnsorder (PNS, children ordered by the prior), "
            "pnsinit<s> (PNS, leaves start at pn = exp(-s l), dn = exp(s l) for the prior's log-odds l)")


def answer_ranks(test: list[dict], base: list[dict], model) -> list[dict]:
    """Per test problem, where PNS's proving first move ranks at the root among the attacker's candidates when they
    are ordered by ``model``'s prior (most likely TRUE first; ties share their mean rank): dicts(rank, candidates,
    prior, best_prior), or None for defence problems and problems PNS did not prove with a move."""
    from jaxgo.proof.capture import CaptureProblem
    from jaxgo.proof.patterns import board_stack_keys
    from jaxgo.proof.problems import problem_board

    out = []
    for p, r in zip(test, base):
        if not (p.get("attacker_to_move", True) and r["solved"] and r.get("move") is not None):
            out.append(None)
            continue
        b = problem_board(p)
        attacker = -b.stones[p["goal"]]
        if b.to_play != attacker:
            b.to_play, b.ko = attacker, -1
        moves = [m for m, _ in CaptureProblem(p["goal"], attacker, root_key=b.key()).children(b)]
        if r["move"] not in moves:
            out.append(None)
            continue
        priors = [model.predict(tuple(k)) for k in board_stack_keys(b, moves, attacker, p["goal"]).tolist()]
        mine = priors[moves.index(r["move"])]
        above, tied = sum(q > mine for q in priors), sum(q == mine for q in priors)
        out.append(dict(rank=above + (tied + 1) / 2, candidates=len(moves), prior=round(mine, 4),
                        best_prior=round(max(priors), 4)))
    return out


def rank_summary(ranks: list) -> dict:
    """Median rank of PNS's proving move under the prior and under uniform priors ((n + 1) / 2), top-1 rate."""
    import statistics

    rs = [x for x in ranks if x is not None]
    if not rs:
        return {}
    return dict(problems=len(rs), median_rank=statistics.median(x["rank"] for x in rs),
                uniform_median_rank=statistics.median((x["candidates"] + 1) / 2 for x in rs),
                top1=round(sum(x["rank"] == 1 for x in rs) / len(rs), 3),
                median_candidates=statistics.median(x["candidates"] for x in rs))


def write_rows(path: str, rows: list[dict], extra: list[dict], mode: str = "a") -> None:
    """Append (``mode`` "a") or write the per-problem rows as JSON lines, row i merged with ``extra[i]``."""
    with open(path, mode) as fh:
        for r, more in zip(rows, extra):
            fh.write(json.dumps(dict(r, **more)) + "\n")


def pns_baseline(problems: list[dict], what: str, path: str, kw_test: dict, log=print) -> list[dict]:
    """PNS timed on ``problems`` (the baseline every searcher is compared with), its hard rows flagged
    (``mark_hard``), logged and written to ``path`` (a new file) as rows with ``searcher`` "pns"."""
    t0 = time.time()
    rows = time_set(problems, "pns", **kw_test)
    mark_hard(rows)
    log(f"PNS on the {what} set: {sum(r['solved'] for r in rows)} of {len(problems)} ({time.time() - t0:.0f} s)")
    write_rows(path, rows, [{"searcher": "pns"}] * len(rows), mode="w")
    return rows


def run(train: list[dict], test: list[dict], models: list[str], max_nodes: int, timeout: float, test_nodes: int,
        test_timeout: float, passes: int, out_dir: str, sigma0: float = 1.0, noise: float = 1.0,
        log=print, coverage: bool = True, emit=None, variants=("pp",), validation=()) -> list[dict]:
    """Train each model, time PNS and, for each test ``variants`` spec, the searcher with the frozen model on
    ``test``; write rows and figures; summaries (each also passed to ``emit`` as soon as it is done).  With
    ``validation`` problems, every variant runs on them first (same budgets) and only the one ``select_variant``
    picks runs on the test set: a searcher's setting chosen without looking at the test problems."""
    specs = {v: parse_variant(v) for v in variants}
    os.makedirs(out_dir, exist_ok=True)
    kw_test = dict(max_nodes=test_nodes, max_seconds=test_timeout)
    rows_path = os.path.join(out_dir, "learn_rows.jsonl")
    base = pns_baseline(test, "test", rows_path, kw_test, log)
    if validation:
        val_path = os.path.join(out_dir, "validation_rows.jsonl")
        val_base = pns_baseline(validation, "validation", val_path, kw_test, log)
    summaries = []
    for name in models:
        from jaxgo.proof.learning import train as train_model

        model, tune_after = make_model(name, sigma0, noise)
        t1 = time.time()
        hist = [] if model is None else train_model(model, train, "pp", max_passes=passes, tune_after=tune_after,
                                                    log=log, max_nodes=max_nodes, max_seconds=timeout)
        train_s = time.time() - t1
        ranks = answer_ranks(test, base, model) if model is not None else [None] * len(test)
        chosen, val_scores = list(variants if model is not None else ("pp",)), None
        if validation and model is not None and len(chosen) > 1:
            by_variant = {}
            for spec in chosen:
                kw = dict(specs[spec])
                by_variant[spec] = time_set(validation, kw.pop("solver"), model, **kw, **kw_test)
                write_rows(val_path, by_variant[spec], [{"searcher": f"{name}/{spec}"}] * len(validation))
            best, val_scores = select_variant(val_base, by_variant)
            log(f"[{name}] validation (variant, solved of {len(validation)}, median node ratio): {val_scores}; "
                f"chosen {best}")
            chosen = [best]
        for spec in chosen:
            label = name if spec == "pp" else f"{name}/{spec}"
            kw = dict(specs[spec])
            solver = kw.pop("solver")
            t2 = time.time()
            probe = Coverage(model) if model is not None and coverage else None
            rows = time_set(test, solver, probe or model, **kw, **kw_test)
            summary = dict(model=label, **speedup_summary(base, rows), train_problems=len(train),
                           train_solved=hist[-1]["solved"] if hist else 0, passes=[h["solved"] for h in hist],
                           patterns=len(model) if model is not None else 0, betas=getattr(model, "betas2", None),
                           train_seconds=round(train_s, 1), test_seconds=round(time.time() - t2, 1),
                           pns_test_seconds=round(sum(r["seconds"] for r in base), 1),
                           pattern_coverage=probe.rates() if probe else None, answer_rank=rank_summary(ranks))
            if val_scores is not None:
                summary.update(validation_problems=len(validation), validation_pns_solved=sum(
                    r["solved"] for r in val_base), validation_scores=val_scores, selected_on_validation=spec)
            searcher = f"pp+{label}" if solver == "pp" else f"pns+{label}"
            write_rows(rows_path, rows, [{"searcher": searcher, "answer_rank": rank} for rank in ranks])
            plot_scatter(os.path.join(out_dir, f"learn_{label.replace('/', '_')}.png"), base, rows, label, summary,
                         test_timeout, solver.upper())
            summaries.append(summary)
            if emit is not None:
                emit(summary)
    return summaries


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="jaxgo solve learn", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", required=True, help="mined training problems (.jsonl or .jsonl.gz)")
    ap.add_argument("--test", required=True, help="mined test problems")
    ap.add_argument("--model", default="gauss_tuned", help="comma-separated: beta, beta1000, gauss, gauss_tuned")
    ap.add_argument("--max-nodes", type=int, default=2000, help="node budget per training problem")
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds per training problem")
    ap.add_argument("--test-max-nodes", type=int, default=12000, help="node budget per test problem")
    ap.add_argument("--test-timeout", type=float, default=15.0, help="seconds per test problem (paper: 120)")
    ap.add_argument("--passes", type=int, default=3, help="training passes (later ones re-attempt failures)")
    ap.add_argument("--train-limit", type=int, default=0, help="random sample of the training set (0 = all)")
    ap.add_argument("--test-limit", type=int, default=0, help="random sample of the test set (0 = all)")
    ap.add_argument("--hard-first", action="store_true", help="the test sample takes the hard problems first")
    ap.add_argument("--hard", type=int, default=-1,
                    help="the test sample holds at most this many (mined) hard problems, the rest others")
    ap.add_argument("--variants", default="pp", help="comma-separated test-time searchers per trained model: "
                    + VARIANTS)
    ap.add_argument("--validation", type=int, default=0,
                    help="hold out this many training-split problems (not in the training sample, the hard share "
                         "of --hard): every --variants searcher runs on them and only the one solving most "
                         "(ties: larger median node ratio) runs on the test set")
    ap.add_argument("--sigma0", type=float, default=1.0, help="gauss_tuned: prior s.d. of the T0 latent")
    ap.add_argument("--noise", type=float, default=1.0, help="gauss_tuned: observation noise variance")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/logs/proof/runs/learn", help="folder for rows and figures")
    ap.add_argument("--no-coverage", action="store_true", help="no per-template coverage counts (pure timing)")
    ap.add_argument("--json", action="store_true", help="print only the JSON summary lines")
    a = ap.parse_args(argv)
    variants = [v for v in a.variants.split(",") if v]
    try:
        for v in variants:
            parse_variant(v)
    except ValueError as exc:
        ap.error(str(exc))
    log = (lambda msg: None) if a.json else (lambda msg: print(msg, flush=True))
    try:
        train, validation, test, info = load_sets(a.train, a.test, a.train_limit, a.test_limit, a.seed,
                                                  a.hard_first, a.hard, a.validation)
    except ValueError as exc:
        ap.error(str(exc))
    log(f"problems: {len(train)} training, {len(validation)} validation, {len(test)} test ({info})")

    def emit(s):
        s["load"] = info
        if a.json:
            print(json.dumps(s), flush=True)
        else:
            print(f"[{s['model']}] {s['test_problems']} test problems: PNS {s['pns_solved']}, PP {s['pp_solved']}, "
                  f"newly failed {s['newly_failed']}, newly solved {s['newly_solved']}, mean speedup "
                  f"{s['mean_speedup']:.2f}x, median {s['median_speedup']:.2f}x, median node ratio "
                  f"{s['median_node_ratio']:.2f}", flush=True)
            print(json.dumps(s), flush=True)

    run(train, test, [m for m in a.model.split(",") if m], a.max_nodes, a.timeout, a.test_max_nodes, a.test_timeout,
        a.passes, a.out, a.sigma0, a.noise, log, not a.no_coverage, emit, variants, validation)
    return 0
