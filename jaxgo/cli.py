"""The ``jaxgo`` command: a thin dispatcher to the subcommand modules.

Each subcommand lives in its own module exposing ``main(argv: list[str]) -> int``, so adding one never touches
another's code.  ``python -m jaxgo`` runs the same dispatcher.  ``jaxgo --help`` prints the usage and exits 0;
``jaxgo`` without a command prints it on stderr and exits 2 (a usage error, as argparse does).
"""

from __future__ import annotations

import importlib
import sys
import textwrap

from jaxgo.search.config import SearchConfig

SUBCOMMANDS = {
    "demo": ("jaxgo.demo", "the main job: light-playout benchmark, then a short 9x9 game of the default engine"),
    "bench": ("jaxgo.bench", "benchmarks: `jaxgo bench playouts --size 9 --batch 1024 --compare pgx,openspiel`"),
    "gtp": ("jaxgo.gtp.cli", "Go Text Protocol engine on stdin/stdout"),
    "match": ("jaxgo.match", "GTP engines against each other: two (default jaxgo vs GNU Go) or a round robin, Elo"),
    "eval": ("jaxgo.eval.cli", "evaluation tools: strength vs GNU Go, SPSA tuning, move and playout quality, ..."),
    "solve": ("jaxgo.proof.cli", "proof search on GNU Go capture regressions: `jaxgo solve FILE.tst`"),
    "cgt": ("jaxgo.cgt.cli", "combinatorial game theory: thermographs, CG-TD, HOTSTRAT experiments"),
    "bpip": ("jaxgo.bpip.cli", "decision-theoretic search control (BPIP/QSS/TRQSS/ATRQSS)"),
    "gammas": ("jaxgo.learn.cli", "Bradley-Terry move-pattern gammas: extract, train (mm/lmp/sgd), eval"),
    "territory": ("jaxgo.crf.cli", "territory CRF: label, train and evaluate Boltzmann5 / BoltzmannLiberties"),
    "serve": ("jaxgo.server.cli", "batched analysis server (KataGo JSON lines; stdin, TCP, Unix socket, HTTP)"),
    "analyze": ("jaxgo.server.analyze",
                "win-rate / score-lead graph of an SGF game: `jaxgo analyze GAME.sgf --plot OUT.png`"),
}


DEFAULT_ENGINE = textwrap.fill(f"The default engine (jaxgo gtp, serve, demo, match): {SearchConfig().describe()}; see "
                               "`jaxgo gtp --help` for every option and its default.", width=110)


def usage() -> str:
    lines = ["usage: jaxgo COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<9} {text}" for name, (_, text) in SUBCOMMANDS.items()]
    lines += ["", DEFAULT_ENGINE, "", "`jaxgo COMMAND --help` describes each command."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(usage(), file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if argv[0] in ("-V", "--version"):
        from jaxgo import __version__

        print(__version__)
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"jaxgo: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    if name != "bench":  # benchmarks time compilation themselves; everything else reuses compiled kernels
        from jaxgo.util import jitcache

        jitcache.enable()
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
