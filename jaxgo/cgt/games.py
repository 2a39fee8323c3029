"""Combinatorial games as trees, sums of games, and exact minimax of a sum (Lew's thesis, section 5.1).

Rules of the thesis's toy model (Figure 5.2):

* every subgame is a finite tree; a leaf carries a number, an inner node has at least one Left option and at
  least one Right option (``{G^L | G^R}``);
* Left (Max, +1) and Right (Min, -1) alternate; a move picks a subgame whose current node is not a leaf and
  moves it to one of the mover's options there; there is no passing and a leaf subgame cannot be played;
* the game ends when every subgame is at a leaf; the score (for Left) is the sum of the leaf values.

Because every inner node offers a move to both players, the side to move always has a move until the end.

A :class:`Game` is stored flat: node ``0`` is the root, ``left[n]`` / ``right[n]`` list the option node ids,
``value[n]`` is the leaf value (``None`` for inner nodes) and ``label[n]`` names the node by its path from the
root in the thesis's superscript style (``""`` for the root, ``"R"``, ``"RL"``; with several options of one
player the index is appended: ``"L2"``).  A sum is a tuple of games; its state is a tuple of node ids, one per
subgame.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

LEFT = 1
RIGHT = -1


def opponent(player: int) -> int:
    """The other player."""
    return -player


@dataclass(frozen=True)
class Game:
    """A finite game tree in flat form (node 0 is the root)."""

    left: tuple[tuple[int, ...], ...]
    right: tuple[tuple[int, ...], ...]
    value: tuple[float | None, ...]
    label: tuple[str, ...]
    name: str = "G"

    @property
    def n_nodes(self) -> int:
        return len(self.value)

    def is_leaf(self, node: int) -> bool:
        return self.value[node] is not None

    def options(self, node: int, player: int) -> tuple[int, ...]:
        """Option node ids of ``player`` (LEFT or RIGHT) at ``node``; empty at a leaf."""
        return self.left[node] if player == LEFT else self.right[node]

    def node_name(self, node: int) -> str:
        """Thesis-style name, e.g. ``I^RL`` (``I`` for the root)."""
        return self.name + ("^" + self.label[node] if self.label[node] else "")

    def leaf_values(self) -> list[float]:
        return [v for v in self.value if v is not None]

    def __str__(self) -> str:
        return to_text(self)


# ----------------------------------------------------------------------------------------------------------
# Building games


def from_nested(spec, name: str = "G") -> Game:
    """Build a game from a nested spec: a number is a leaf, a pair ``(lefts, rights)`` of non-empty lists of
    specs is an inner node.  Example: ``from_nested(([3], [([0], [-6])]), "I")`` is ``{3 | {0 | -6}}``."""
    left, right, value, label = [], [], [], []

    def add(node_spec, path: str) -> int:
        idx = len(value)
        left.append(())
        right.append(())
        label.append(path)
        if isinstance(node_spec, (int, float)):
            value.append(float(node_spec))
            return idx
        lefts, rights = node_spec
        if not lefts or not rights:
            raise ValueError(f"inner node {path or 'root'} needs at least one option for each player")
        value.append(None)
        left[idx] = tuple(add(s, path + "L" + (str(k + 1) if len(lefts) > 1 else "")) for k, s in enumerate(lefts))
        right[idx] = tuple(add(s, path + "R" + (str(k + 1) if len(rights) > 1 else "")) for k, s in enumerate(rights))
        return idx

    add(spec, "")
    return Game(tuple(left), tuple(right), tuple(value), tuple(label), name)


_TOKEN = re.compile(r"\s*([{}|,]|[-+]?\d+(?:\.\d+)?(?:/\d+)?)")


def parse(text: str, name: str = "G") -> Game:
    """Parse CGT notation, e.g. ``"{3 | {0 | -6}}"`` or ``"{2, {4|1} | -2}"`` (commas separate options)."""
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot parse {text!r} at {pos}")
        tokens.append(m.group(1))
        pos = m.end()
    tokens.append("$")
    i = 0

    def number(tok: str) -> float:
        if "/" in tok:
            a, b = tok.split("/")
            return float(a) / float(b)
        return float(tok)

    def expr():
        nonlocal i
        tok = tokens[i]
        if tok != "{":
            i += 1
            return number(tok)
        i += 1
        lefts: list = []
        rights: list | None = None
        side = lefts
        while tokens[i] != "}":
            tok = tokens[i]
            if tok == "$":
                raise ValueError("unclosed '{'")
            if tok == "|":
                if rights is not None:
                    raise ValueError("two '|' in one pair of braces")
                rights = side = []
                i += 1
            elif tok == ",":
                i += 1
            else:
                side.append(expr())
        i += 1
        if rights is None:
            raise ValueError("missing '|'")
        return (lefts, rights)

    spec = expr()
    if tokens[i] != "$":
        raise ValueError(f"trailing text in {text!r}")
    return from_nested(spec, name)


def to_text(game: Game, node: int = 0) -> str:
    """CGT notation of ``game`` below ``node`` (inverse of :func:`parse`)."""
    if game.is_leaf(node):
        v = game.value[node]
        return str(int(v)) if float(v).is_integer() else repr(v)
    lefts = ", ".join(to_text(game, c) for c in game.left[node])
    rights = ", ".join(to_text(game, c) for c in game.right[node])
    return "{" + lefts + " | " + rights + "}"


def negate(game: Game) -> Game:
    """``-G``: swap the players' options and negate the leaves (the thesis's Left/Right symmetry)."""
    value = tuple(None if v is None else -v for v in game.value)
    swap = str.maketrans("LR", "RL")
    label = tuple(s.translate(swap) for s in game.label)
    return Game(game.right, game.left, value, label, "-" + game.name)


def toy_sum() -> tuple[Game, Game, Game]:
    """The thesis's sum G + H + I of Figure 5.2: G = {2|-2}, H = {4|-4}, I = {3|{0|-6}}.

    The text does not give I^RR; -6 reproduces the stated principal variation and its score 2."""
    return (parse("{2|-2}", "G"), parse("{4|-4}", "H"), parse("{3|{0|-6}}", "I"))


# ----------------------------------------------------------------------------------------------------------
# Sums of games

Move = tuple[int, int]  # (subgame index, option node id)


def initial_state(games) -> tuple[int, ...]:
    return tuple(0 for _ in games)


def all_states(games) -> list[tuple[int, ...]]:
    """Every configuration of the sum (product of the subgames' node sets); 3 x 3 x 5 = 45 for the toy."""
    return list(itertools.product(*(range(g.n_nodes) for g in games)))


def is_terminal(games, state) -> bool:
    return all(g.is_leaf(n) for g, n in zip(games, state))


def legal_moves(games, state, player: int) -> list[Move]:
    """All moves of ``player``: (subgame, option) for each non-leaf subgame."""
    return [(i, c) for i, (g, n) in enumerate(zip(games, state)) for c in g.options(n, player)]


def play(state, move: Move) -> tuple[int, ...]:
    i, child = move
    return state[:i] + (child,) + state[i + 1 :]


def score(games, state) -> float:
    """Final score for Left: the sum of the leaf values (state must be terminal)."""
    assert is_terminal(games, state), "score of a non-terminal state"
    return float(sum(g.value[n] for g, n in zip(games, state)))


class Minimax:
    """Exact minimax values of a sum of games, memoised over (state, player to move)."""

    def __init__(self, games):
        self.games = tuple(games)
        self._memo: dict = {}

    def value(self, state, player: int) -> float:
        """Score under optimal play by both sides from ``state`` with ``player`` to move."""
        key = (state, player)
        if key not in self._memo:
            if is_terminal(self.games, state):
                v = score(self.games, state)
            else:
                vals = [self.value(play(state, m), opponent(player)) for m in legal_moves(self.games, state, player)]
                v = max(vals) if player == LEFT else min(vals)
            self._memo[key] = v
        return self._memo[key]

    def move_values(self, state, player: int) -> dict[Move, float]:
        return {m: self.value(play(state, m), opponent(player)) for m in legal_moves(self.games, state, player)}

    def optimal_moves(self, state, player: int, tol: float = 1e-9) -> list[Move]:
        """The moves that keep the minimax value."""
        best = self.value(state, player)
        return [m for m, v in self.move_values(state, player).items() if abs(v - best) <= tol]

    def principal_variation(self, state, player: int) -> list[Move]:
        """One optimal line (first optimal move in move order at each step)."""
        line = []
        while not is_terminal(self.games, state):
            m = self.optimal_moves(state, player)[0]
            line.append(m)
            state, player = play(state, m), opponent(player)
        return line


def playout(games, state, player: int, strategies: dict) -> tuple[float, list[Move]]:
    """Play to the end, ``strategies[player](games, state, player) -> move``; returns (score, moves)."""
    moves = []
    while not is_terminal(games, state):
        m = strategies[player](games, state, player)
        moves.append(m)
        state, player = play(state, m), opponent(player)
    return score(games, state), moves


def state_name(games, state) -> str:
    """E.g. ``G + H^L + I^RL``."""
    return " + ".join(g.node_name(n) for g, n in zip(games, state))


def moves_made(games, state) -> tuple[int, int]:
    """(Left moves, Right moves) it took to reach ``state`` from the roots (read off the node paths)."""
    path = "".join(g.label[n] for g, n in zip(games, state))
    return path.count("L"), path.count("R")


def reachable(games, state, player: int) -> bool:
    """Whether ``state`` with ``player`` to move arises in alternating play from the roots (either player
    starting): Left has made as many moves as Right or one fewer when Left is to move, and symmetrically."""
    n_left, n_right = moves_made(games, state)
    d = n_left - n_right
    return d in ((0, -1) if player == LEFT else (0, 1))
