"""``jaxgo cgt``: combinatorial game theory experiments (Lew's thesis, chapter 5).

    jaxgo cgt toy [--json] [--episodes 3000] [--seed 0] [--epochs 150]   G + H + I: CG-TD, HOTSTRAT, linear model
    jaxgo cgt thermograph "{3 | {0 | -6}}"                              exact + triangle thermograph of each node
    jaxgo cgt random-sums [--sums 100] [--games 3] [--hot] [--cgtd 0] [--json]  HOTSTRAT value-loss table
    jaxgo cgt go-patterns [--playouts 4096] [--json]                   adaptive-pattern failure on a Go board
"""

from __future__ import annotations

import argparse
import json


def _toy(args) -> int:
    from jaxgo.cgt.toy import run_toy

    res = run_toy(episodes=args.episodes, seed=args.seed, linear_epochs=args.epochs)
    if args.json:
        print(json.dumps(res))
        return 0
    pv = res["principal_variation"]
    print("G + H + I:", ", ".join(f"{k} = {v}" for k, v in res["games"].items()))
    print(f"configurations: {res['configurations']}; minimax value (Left first): {pv['minimax_value']}")
    print("thesis PV:", " -> ".join(pv["line"]), f"score {pv['score']}, every move optimal: {pv['all_moves_optimal']}")
    print(f"{'node':8} {'exact t':>8} {'exact m':>8} {'learnt t':>9} {'learnt m':>9}  shape")
    for n in res["nodes"]:
        e, lt = n["exact"], n["learnt"]
        print(f"{n['node']:8} {e['temperature']:8.3f} {e['mean']:8.3f} {lt['temperature']:9.3f} {lt['mean']:9.3f}"
              f"  {e['shape']}")
    print(f"temperature_error_max: {res['temperature_error_max']:.4f} after {args.episodes} CG-TD episodes")
    for key in ("hotstrat_learnt", "hotstrat_exact"):
        r = res[key]
        print(f"{key}: optimal for both players in {r['configurations_optimal']}/{r['configurations']} configurations, "
              f"{r['optimal_decisions']}/{r['decisions']} decisions "
              f"({r['reachable_optimal']}/{r['reachable_decisions']} of those reachable from the roots)")
    for f in res["hotstrat_learnt"]["failures"]:
        print(f"  fails: {f['state']}, {f['to_move']} to move: plays {f['hotstrat_move']} -> {f['hotstrat_value']}, "
              f"minimax {f['minimax_value']} via {f['optimal_moves']} (reachable: {f['reachable_from_roots']})")
    print("learnt HOTSTRAT move == exact HOTSTRAT move:", res["hotstrat_learnt_equals_exact_decisions"])
    for alg, lm in res.get("linear_model", {}).items():
        name = "Algorithm 3 TD(lambda)" if alg == "td" else "Algorithm 2 Monte Carlo"
        ch = lm["policy_change_epochs"]
        print(f"linear model, {name}, {lm['epochs']} epochs: greedy policy changed after epochs "
              f"{ch[:12]}{'...' if len(ch) > 12 else ''}; "
              f"changes in 2nd half {lm['policy_changes_second_half']} -> oscillates: {lm['oscillates']}")
    return 0


def _thermograph(args) -> int:
    from jaxgo.cgt.games import parse
    from jaxgo.cgt.thermograph import shape, thermographs
    from jaxgo.cgt.triangle import triangles

    g = parse(args.game, args.name)
    ex, tr = thermographs(g), triangles(g)
    rows = []
    for n in range(g.n_nodes):
        e, t = ex[n], tr[n]
        rows.append({"node": g.node_name(n), "game": _sub(g, n), "temperature": e.temperature,
                     "mean": e.mean, "ls": e.ls, "rs": e.rs, "shape": shape(e),
                     "triangle": [t.temperature, t.mean, t.ls, t.rs]})
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(f"{r['node']:10} {r['game']:24} t={r['temperature']:.3f} m={r['mean']:.3f} LS={r['ls']:.3f} "
                  f"RS={r['rs']:.3f} {r['shape']:14} triangle(t,m,LS,RS)={[round(x, 3) for x in r['triangle']]}")
    return 0


def _sub(g, n) -> str:
    from jaxgo.cgt.games import to_text

    return to_text(g, n)


def _random_sums(args) -> int:
    from jaxgo.cgt.random_sums import format_table, value_loss_table

    res = value_loss_table(args.sums, args.games, seed=args.seed, cgtd_episodes=args.cgtd, hot=args.hot)
    print(json.dumps(res) if args.json else format_table(res))
    return 0


def _go_patterns(args) -> int:
    from jaxgo.cgt.go_patterns import adaptive_pattern_experiment

    res = adaptive_pattern_experiment(args.playouts, args.seed)
    if args.json:
        print(json.dumps(res))
        return 0
    print("\n".join(res["position"]))
    print(f"A = {res['A']}, p = {res['p']}; {res['playouts']} random playouts; A swing {res['A_swing']:.2f}")
    for name, w in res["p_weights"].items():
        if w["mean_result"] is not None:
            print(f"  p weight, {name:28} n={w['playouts']:5}  {w['mean_result']:7.3f}")
    print(f"pattern weight gap for Black's p (A Black - A White): {res['pattern_weight_gap_p']:.2f}; value of p in "
          f"fixed circumstances: {res['value_of_p_given_A_black']:.2f} (A Black), "
          f"{res['value_of_p_given_A_white']:.2f} (A White)")
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="jaxgo cgt", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("toy", help="the thesis's G + H + I experiment")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--episodes", type=int, default=3000, help="CG-TD(0) episodes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=150,
                   help="linear-model policy-iteration epochs (N = 1000 playouts each; 0 skips it)")
    p.set_defaults(func=_toy)
    p = sub.add_parser("thermograph", help="thermographs of a game in CGT notation")
    p.add_argument("game", help='e.g. "{3 | {0 | -6}}"')
    p.add_argument("--name", default="G")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_thermograph)
    p = sub.add_parser("random-sums", help="HOTSTRAT value loss on random sums")
    p.add_argument("--sums", type=int, default=100)
    p.add_argument("--games", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hot", action="store_true", help="Go-like random games (every move gains for the mover)")
    p.add_argument("--cgtd", type=int, default=0,
                   help="also HOTSTRAT on CG-TD triangles learnt with this many episodes")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_random_sums)
    p = sub.add_parser("go-patterns", help="adaptive-pattern failure on a Go position (section 5.2)")
    p.add_argument("--playouts", type=int, default=4096)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_go_patterns)
    args = ap.parse_args(argv)
    return args.func(args)
