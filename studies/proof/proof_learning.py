"""Learning experiment of Stern, Herbrich, Graepel (ICML 2007) on capture problems, scaled to a small CPU.

  python studies/proof/proof_learning.py [--problems N] [--timeout S] [--max-nodes N] [--passes K] [--seed 0]
                                   [--models beta1,beta1000,gauss,gauss_tuned,gauss_noiseX] [--out docs/figures]
                                   [--only-problems] [--cache FILE] [--no-extra] [--per-collection N]
                                   [--no-baseline] [--name FILE.json] [--fallback F]
                                   [--pns-order] [--test-max-nodes N] [--test-timeout S] [--baseline-test-only]
                                   [--save-models DIR] [--load-models DIR] [--train-on-test]
  python studies/proof/proof_learning.py --merge PART.json ... [--out docs/figures]   (combine parts run in parallel)

1. Problems (``jaxgo.proof.problems.all_problems``): GNU Go reading tests (attack code 1, defend code 0,
   including the tests GNU Go itself fails) and tesuji-collection problems (sanderland/tsumego) whose goal string a
   reference PNS run proves capturable (for the extra collections also by the book's first move); duplicates up
   to symmetry removed; split into training and test sets by a hash of the canonical position (1 in 3 to test).
2. No knowledge: PNS and PP (prior 0.5) on every problem: nodes developed (Figure 4 analogue,
   ``proof_pns_vs_pp_nodes.png``).
3. For each model: train on the training set (repeated passes re-attempting failures, harvesting throughout,
   updates after each search), then time PP + frozen model on the test set against PNS with the same per-problem
   timeout: newly solved, newly failed, speedup factors (Figure 8 analogue, ``proof_learning_speedup.png``;
   cumulative solved vs time, ``proof_learning_cumulative.png``).
   With ``--fallback F`` each model is also timed as "<model>+fallback": its search gets the fraction F of the
   budget and PNS without knowledge finishes with the rest when it has not proved the goal; with ``--pns-order``
   also as "<model>+pns-order": PNS whose children are ordered by the model's prior (ties in proof numbers).
   ``--test-max-nodes`` / ``--test-timeout`` time the test set with other budgets than training
   (``--baseline-test-only`` then skips the Figure 4 run on every problem); ``--save-models`` / ``--load-models``
   pickle trained models (loading skips training).
Writes ``proof_learning.json`` (all per-problem rows) next to the figures and prints a summary table.
For problems mined from the game archives (``jaxgo solve mine``) the same protocol is ``jaxgo solve learn``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import sys
import time


def _log(msg: str) -> None:
    print(msg, flush=True)


def make_model(name: str):
    from jaxgo.proof.models import BetaModel, HierarchicalGaussian

    if name == "beta1":
        return BetaModel(1, 1), 0
    if name == "beta1000":
        return BetaModel(1000, 1000), 0
    if name == "gauss":
        return HierarchicalGaussian(), 0
    if name == "gauss_tuned":
        return HierarchicalGaussian(), 1
    if name.startswith("gauss_noise"):  # e.g. gauss_noise4: observation noise 4 (each solved node counts less)
        return HierarchicalGaussian(noise=float(name[len("gauss_noise"):])), 0
    raise ValueError(f"unknown model {name!r}")


def load_problems(n: int, seed: int, verify_nodes: int, cache: str | None, extra: bool = True,
                  per_collection: int = 0) -> list[dict]:
    """The problem set of ``problems.all_problems`` (cached as JSON), shuffled with ``seed``; the first ``n``."""
    from jaxgo.proof.problems import all_problems

    if cache and os.path.exists(cache):
        with open(cache) as fh:
            probs = json.load(fh)
    else:
        probs = all_problems(verify_nodes=verify_nodes, verify_seconds=3.0, extra=extra,
                             per_collection=per_collection or None, log=_log)
        if cache:
            with open(cache, "w") as fh:
                json.dump(probs, fh)
    rng = random.Random(seed)
    rng.shuffle(probs)
    return probs[:n] if n else probs


def plot(out_dir: str, result: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nk = result.get("no_knowledge")   # absent with --baseline-test-only
    if nk:
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        both = [(a["nodes"], b["nodes"]) for a, b in zip(nk["pns"], nk["pp"]) if a["solved"] and b["solved"]]
        xs, ys = [max(a, 1) for a, _ in both], [max(b, 1) for _, b in both]
        ax.loglog(xs, ys, ".", alpha=0.6)
        lim = [1, max(xs + ys + [10]) * 1.5]
        ax.plot(lim, lim, "k--", lw=0.8)
        ax.set_xlabel("PNS nodes developed")
        ax.set_ylabel("PP (prior 0.5) nodes developed")
        ax.set_title(f"{len(nk['pns'])} capture problems: PNS solves {nk['solved_pns']}, PP {nk['solved_pp']}\n"
                     f"{len(both)} solved by both, median PP/PNS = {nk['median_ratio']:.2f}", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "proof_pns_vs_pp_nodes.png"), dpi=110)
        plt.close(fig)

    models = result["models"]
    if not models:
        return
    fig, axes = plt.subplots(2, len(models), figsize=(4.2 * len(models), 8.2), squeeze=False)
    to = result["config"].get("test_timeout") or result["config"]["timeout"]
    budget = result["config"].get("test_max_nodes") or result["config"]["max_nodes"]
    for col, (name, m) in enumerate(models.items()):
        pns, pp = result["test_pns"], m["test"]
        s = m["summary"]
        for row, (field, cap, unit) in enumerate((("seconds", to, "time (s)"), ("nodes", budget, "nodes"))):
            ax = axes[row][col]
            for a, b in zip(pns, pp):
                floor = 1e-3 if field == "seconds" else 1
                x = max(a[field], floor) if a["solved"] else cap * 1.3
                y = max(b[field], floor) if b["solved"] else cap * 1.3
                if a["solved"] and b["solved"]:
                    ax.plot(x, y, "k.", alpha=0.6)
                elif b["solved"]:
                    ax.plot(x, y, "bx")
                elif a["solved"]:
                    ax.plot(x, y, "ro", mfc="none")
            ax.set_xscale("log")
            ax.set_yscale("log")
            lo = 1e-3 if field == "seconds" else 0.8
            ax.plot([lo, cap * 1.5], [lo, cap * 1.5], "k--", lw=0.8)
            if row == 0:
                ax.set_title(f"{name}: mean speedup {s['mean_speedup']:.2f}x (median {s['median_speedup']:.2f})\n"
                             f"newly solved {s['newly_solved']} (x), newly failed {s['newly_failed']} (o)", fontsize=9)
            else:
                ax.set_title(f"nodes: mean ratio {s['mean_node_ratio']:.2f}, median {s['median_node_ratio']:.2f}",
                             fontsize=9)
            ax.set_xlabel(f"PNS {unit}")
            ax.set_ylabel(f"{'PNS ordered by prior' if m.get('solver') == 'pns' else 'PP + learned prior'} {unit}")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "proof_learning_speedup.png"), dpi=100)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    curves = {"PNS": result["test_pns"], "PP prior 0.5": result["test_pp_plain"]}
    curves.update({f"PP {k}": v["test"] for k, v in models.items()})
    for ax, field, label in ((axes[0], "seconds", "time per problem (s; runs under different loads)"),
                             (axes[1], "nodes", "nodes developed per problem")):
        for name, rows in curves.items():
            xs = sorted(max(r[field], 1e-6 if field == "seconds" else 1) for r in rows if r["solved"])
            ax.step(xs, range(1, len(xs) + 1), where="post", label=name)
        ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("test problems solved within that budget")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "proof_learning_cumulative.png"), dpi=110)
    plt.close(fig)


def _summary_line(name: str, summary: dict) -> str:
    return (f"[{name}] test: solved {summary['solved']} (PNS {summary['solved_base']}), newly solved "
            f"{summary['newly_solved']}, newly failed {summary['newly_failed']}, mean speedup "
            f"{summary['mean_speedup']:.2f}x (median {summary['median_speedup']:.2f}, geomean "
            f"{summary['geomean_speedup']:.2f}; node ratio mean {summary['mean_node_ratio']:.2f}, median "
            f"{summary['median_node_ratio']:.2f})")


def no_knowledge(probs: list[dict], test: list[dict], kw: dict, t0: float, kw_test: dict | None = None) -> dict:
    """PNS and PP (prior 0.5) on every problem of ``probs`` (Figure 4 analogue; skipped when ``probs`` is empty)
    and the test-set rows of both, taken from that run or, when the test budgets ``kw_test`` differ (or there is
    no such run), timed on the test set alone."""
    from jaxgo.proof.learning import compare, evaluate

    kw_test = kw_test or kw
    out = {}
    if probs:
        pns_all = evaluate(probs, "pns", **kw)
        _log(f"PNS done ({time.time() - t0:.0f} s)")
        pp_all = evaluate(probs, "pp", **kw)
        _log(f"PP done ({time.time() - t0:.0f} s)")
        ratios = sorted(max(b["nodes"], 1) / max(p["nodes"], 1) for p, b in zip(pns_all, pp_all)
                        if p["solved"] and b["solved"])
        nk = dict(pns=pns_all, pp=pp_all, solved_pns=sum(r["solved"] for r in pns_all),
                  solved_pp=sum(r["solved"] for r in pp_all),
                  median_ratio=ratios[len(ratios) // 2] if ratios else float("nan"),
                  nodes_per_s_pns=sum(r["nodes"] for r in pns_all) / max(sum(r["seconds"] for r in pns_all), 1e-9),
                  nodes_per_s_pp=sum(r["nodes"] for r in pp_all) / max(sum(r["seconds"] for r in pp_all), 1e-9))
        _log(f"no knowledge: PNS solved {nk['solved_pns']}, PP solved {nk['solved_pp']} of {len(probs)}; "
             f"median PP/PNS node ratio {nk['median_ratio']:.3f}; nodes/s PNS {nk['nodes_per_s_pns']:.0f}, "
             f"PP {nk['nodes_per_s_pp']:.0f}")
        out["no_knowledge"] = nk
    if probs and kw_test == kw:
        index = {p["name"]: i for i, p in enumerate(probs)}
        test_pns = [pns_all[index[p["name"]]] for p in test]
        test_pp_plain = [pp_all[index[p["name"]]] for p in test]
    else:
        test_pns = evaluate(test, "pns", **kw_test)
        test_pp_plain = evaluate(test, "pp", **kw_test)
        _log(f"test set at {kw_test}: PNS solved {sum(r['solved'] for r in test_pns)}, PP solved "
             f"{sum(r['solved'] for r in test_pp_plain)} of {len(test)} ({time.time() - t0:.0f} s)")
    return dict(out, test_pns=test_pns, test_pp_plain=test_pp_plain, pp_plain_vs_pns=compare(test_pns, test_pp_plain))


def merge(paths: list[str]) -> dict:
    """Combine part results (one with the no-knowledge rows, others with models) and compute the comparisons."""
    from jaxgo.proof.learning import compare

    parts = []
    for path in paths:
        with open(path) as fh:
            parts.append(json.load(fh))
    base = next((p for p in parts if p.get("test_pns")), None)
    if base is None:
        raise SystemExit("merge: no part holds the no-knowledge rows (run one part without --no-baseline)")
    result = dict(base, models={}, parts=[p["config"] for p in parts])
    names = [r["name"] for r in base["test_pns"]]
    for part in parts:
        for name, m in part.get("models", {}).items():
            by_name = {r["name"]: r for r in m["test"]}
            if sorted(by_name) != sorted(names):
                raise SystemExit(f"merge: model {name} was tested on other problems")
            m = dict(m, test=[by_name[n] for n in names])
            m["summary"] = compare(base["test_pns"], m["test"])
            result["models"][name] = m
            _log(_summary_line(name, m["summary"]))
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=int, default=0, help="number of problems used (0 = all)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds per problem (default 120 s as in the paper; the node budget usually binds first)")
    ap.add_argument("--max-nodes", type=int, default=20000, help="node budget per problem")
    ap.add_argument("--verify-nodes", type=int, default=3000, help="PNS budget when building tesuji problems")
    ap.add_argument("--per-collection", type=int, default=0,
                    help="read at most this many records of each extra tesuji collection (0 = all)")
    ap.add_argument("--no-extra", action="store_true", help="only the Lee Changho books and GNU Go tests")
    ap.add_argument("--only-problems", action="store_true", help="build/cache the problem set and stop")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--models", default="beta1,beta1000,gauss,gauss_tuned")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the no-knowledge runs (a part to be merged with one that has them)")
    ap.add_argument("--name", default="proof_learning.json", help="result file name under --out")
    ap.add_argument("--merge", nargs="+", default=None,
                    help="merge these part files into --out/--name and draw the figures")
    ap.add_argument("--out", default="docs/figures")
    ap.add_argument("--cache", default="/tmp/proof_problems_v2.json", help="problem-set cache ('' = none)")
    ap.add_argument("--replot", default="", help="only redraw the figures from this proof_learning.json")
    ap.add_argument("--fallback", type=float, default=0.0,
                    help="also time each model with this fraction of the budget, PNS finishing with the rest")
    ap.add_argument("--pns-order", action="store_true",
                    help="also time each model as PNS with the children ordered by the model's prior")
    ap.add_argument("--test-max-nodes", type=int, default=0, help="node budget on the test set (0 = --max-nodes)")
    ap.add_argument("--test-timeout", type=float, default=0.0, help="seconds per test problem (0 = --timeout)")
    ap.add_argument("--baseline-test-only", action="store_true",
                    help="no-knowledge runs on the test set only (skip the Figure 4 run on every problem)")
    ap.add_argument("--train-on-test", action="store_true",
                    help="diagnostic upper bound: train on the test problems themselves (not a valid speedup figure)")
    ap.add_argument("--save-models", default="", help="pickle each trained model into this folder")
    ap.add_argument("--load-models", default="", help="load <name>.pkl from this folder instead of training")
    a = ap.parse_args(argv)
    if a.replot:
        with open(a.replot) as fh:
            plot(a.out, json.load(fh))
        return 0
    os.makedirs(a.out, exist_ok=True)
    out_json = os.path.join(a.out, a.name)
    if a.merge:
        result = merge(a.merge)
        with open(out_json, "w") as fh:
            json.dump(result, fh, default=str)
        plot(a.out, result)
        _log(f"merged {len(a.merge)} parts into {out_json}; figures in {a.out}")
        return 0

    from jaxgo.proof.learning import compare, evaluate, train

    t0 = time.time()
    probs = load_problems(a.problems, a.seed, a.verify_nodes, a.cache or None, not a.no_extra, a.per_collection)
    if a.only_problems:
        _log(f"{len(probs)} problems cached in {a.cache}")
        return 0
    test = [p for p in probs if p["split"] == "test"]
    training = [p for p in probs if p["split"] != "test"]
    if a.train_on_test:
        training = test
        _log("diagnostic run: training on the test problems (--train-on-test)")
    sources = {}
    for p in probs:
        key = "gnugo" if p["source"].startswith("gnugo") else p["source"].split(":", 1)[1][:24]
        sources[key] = sources.get(key, 0) + 1
    _log(f"{len(probs)} problems: {len(training)} training, {len(test)} test (split by canonical position hash); "
         f"sources {sources}")
    kw = dict(max_nodes=a.max_nodes, max_seconds=a.timeout)
    kw_test = dict(max_nodes=a.test_max_nodes or a.max_nodes, max_seconds=a.test_timeout or a.timeout)
    result = dict(config=vars(a) | dict(n_train=len(training), n_test=len(test), sources=sources,
                                        test_names=[p["name"] for p in test]), models={})
    if not a.no_baseline:
        result.update(no_knowledge([] if a.baseline_test_only else probs, test, kw, t0, kw_test))

    def save():
        with open(out_json, "w") as fh:
            json.dump(result, fh, default=str)

    save()
    for name in [m for m in a.models.split(",") if m]:
        t1 = time.time()
        if a.load_models:
            with open(os.path.join(a.load_models, f"{name}.pkl"), "rb") as fh:
                model, hist = pickle.load(fh), "loaded from " + a.load_models
            _log(f"[{name}] loaded ({len(model)} patterns)")
        else:
            model, tune_after = make_model(name)
            _log(f"[{name}] training")
            hist = train(model, training, "pp", max_passes=a.passes, tune_after=tune_after, log=_log, **kw)
            if a.save_models:
                os.makedirs(a.save_models, exist_ok=True)
                with open(os.path.join(a.save_models, f"{name}.pkl"), "wb") as fh:
                    pickle.dump(model, fh)
        train_seconds = time.time() - t1
        variants = [(name, "pp", 0.0)] + ([(f"{name}+fallback", "pp", a.fallback)] if a.fallback else [])
        variants += [(f"{name}+pns-order", "pns", 0.0)] if a.pns_order else []
        for label, solver, fraction in variants:
            t2 = time.time()
            rows = evaluate(test, solver, model, fallback=fraction, **kw_test)
            entry = dict(history=hist, test=rows, table=len(model), betas=getattr(model, "betas2", None),
                         train_seconds=train_seconds, test_seconds=time.time() - t2, fallback=fraction, solver=solver)
            entry["seconds"] = train_seconds + entry["test_seconds"]
            if "test_pns" in result:
                entry["summary"] = compare(result["test_pns"], rows)
                _log(_summary_line(label, entry["summary"]))
            else:
                _log(f"[{label}] test: solved {sum(r['solved'] for r in rows)} of {len(rows)} "
                     f"({time.time() - t2:.0f} s)")
            result["models"][label] = entry
            save()
    if "test_pns" in result and result["models"]:
        plot(a.out, result)
    _log(f"done in {time.time() - t0:.0f} s; results in {out_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
