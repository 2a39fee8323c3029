"""``jaxgo gtp`` with the heavy-playout / progressive-bias search options, until jaxgo/gtp.py exposes them.

    python scripts/heavy_gtp.py --size 9 --playouts 1000 --playout-policy heavy --bias 1.0 [--gammas FILE]

Every ``jaxgo gtp`` option works; the extra ones set ``SearchConfig.playouts``, ``bias_c2`` and ``gammas``.
"""

from __future__ import annotations

import sys

from jaxgo import gtp


def main(argv: list[str]) -> int:
    parser = gtp.build_parser()
    parser.add_argument("--playout-policy", choices=["light", "heavy"], default="light",
                        help="leaf playouts: light (uniform) or heavy (gamma-proportional)")
    parser.add_argument("--bias", type=float, default=0.0,
                        help="progressive-bias weight c2 (K(s,a) = move-model probability; 0 = off)")
    parser.add_argument("--gammas", default=None, help="gamma file (default: the shipped gammas)")
    args = parser.parse_args(argv)
    from jaxgo import jitcache

    jitcache.enable()
    rules = gtp.Rules(size=args.size, komi=args.komi, ko_rule=args.rules, suicide=args.suicide)
    options = {"playouts": args.playout_policy, "bias_c2": args.bias, "gammas": args.gammas}
    if args.leaves:
        options["leaves_per_batch"] = args.leaves
    if args.playouts_per_leaf:
        options["playouts_per_leaf"] = args.playouts_per_leaf
    engine = gtp.GtpEngine(rules, seed=args.seed, log=None if args.quiet else sys.stderr, strategy=args.strategy,
                           playouts=args.playouts, seconds=args.seconds, search_options=options)
    for raw in sys.stdin.buffer:
        response = engine.handle(raw.decode("utf-8", "replace"))
        if response is not None:
            sys.stdout.write(response)
            sys.stdout.flush()
        if engine.quit:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
