"""Capture goal for proof search: can the attacker capture the goal string?

g(n): TRUE if the goal point is empty (string captured), or the goal string has one liberty with the attacker
to move, or a ladder works (``ladder_move``); FALSE if the string has more than L liberties; else UNKNOWN.
``solve_capture`` runs the search with L = 2, 3, ... repeating with L + 1 while the result is a disproof
(the paper's scheme) up to ``max_l``.

Candidate moves (``CaptureProblem.candidates``):

- both sides: liberties of the goal string and the empty points next to them (second-order liberties); the
  liberties of attacker strings adjacent to the goal with at most ``weak_libs`` (attacker to move) or
  ``weak_libs_defender`` (defender to move) liberties (the defender captures them, the attacker saves them);
  the liberties of other defender strings that touch a goal liberty, with at most ``near_libs`` liberties
  (connections for the defender, to be blocked by the attacker);
- break-chain moves around weak attacker strings adjacent to the goal: when such a string has at most
  ``rescue_weak`` liberties (attacker to move; 1: in atari) the attacker may save it by capturing a defender
  string pressing on it (liberties of those with at most ``rescue_libs`` liberties, other than the goal); when
  it has at most ``support_weak`` liberties (defender to move) the defender may save or extend the defender
  strings pressing on it (liberties of those with at most ``support_libs`` liberties);
- the defender also: liberties of attacker strings touching a goal liberty (at most ``weak_libs_defender``
  liberties), and a pass (last; never at the root of a defence), so that it is never forced to fill its own
  liberties.

Ko (GNU Go result codes): ``ko_rule`` maps a colour to "simple" (simple ko rule; locally, with no ko threats,
the side that takes a ko first wins it) or "free" (this side may retake a ko at once: it wins every ko; a goal
captured by a ko while the defender is "free" is not yet captured).  ``solve_capture_ko`` tries code 1 (the
side to succeed "simple", the opponent "free": success although the opponent wins every ko), then code 2
(both "simple": success if the side takes the ko first), then code 3 (the side "free", the opponent "simple":
success only if the side also wins kos the opponent takes first).  Cycles count as failures for the attacker.
"""

from __future__ import annotations

from jaxgo.go.hostboard import Board
from jaxgo.go.ladder import ladder_captures, ladder_move
from jaxgo.go.tables import neighbour_lists
from jaxgo.proof.patterns import board_stack_keys
from jaxgo.proof.tree import Result, Tree


class CaptureProblem:
    """The capture goal as a search problem for ``Tree`` (attacker = OR, defender = AND)."""

    def __init__(self, goal: int, attacker: int, max_libs: int = 3, use_ladder: bool = True,
                 weak_libs: int = 2, weak_libs_defender: int = 3, ko_rule=None, defender_pass: bool = True,
                 root_key=None, near_libs: int = 3, rescue_weak: int = 1,
                 rescue_libs: int = 1, support_weak: int = 2, support_libs: int = 2):
        self.goal = goal
        self.attacker = attacker
        self.max_libs = max_libs
        self.use_ladder = use_ladder
        self.weak_libs = weak_libs
        self.weak_libs_defender = weak_libs_defender
        self.near_libs = near_libs
        self.rescue_libs = rescue_libs
        self.rescue_weak = rescue_weak
        self.support_weak = support_weak
        self.support_libs = support_libs
        self.root_key = root_key   # no defender pass at this position (a defence must name a move)
        self.ko_rule = dict(ko_rule or {})   # colour -> "simple" | "free"
        self.defender_pass = defender_pass
        self.model = None

    def set_model(self, model) -> None:
        """Use a pattern model (``models.BetaModel`` / ``HierarchicalGaussian``) for leaf priors: the tree then
        calls ``prior_batch``; each new node keeps its move's pattern stack (T0..T7 keys) as ``Node.info``."""
        self.model = model
        self.prior_batch = self._prior_batch

    def _prior_batch(self, b: Board, moves, children):
        keys = board_stack_keys(b, moves, self.attacker, self.goal)
        priors, infos = [], []
        for row in keys.tolist():
            stack = tuple(row)
            priors.append(self.model.predict(stack))
            self.model.harvest(stack)
            infos.append(stack)
        return priors, infos

    def key(self, b: Board):
        return b.key()

    def is_or(self, b: Board) -> bool:
        return b.to_play == self.attacker

    def _defender_free(self) -> bool:
        return self.ko_rule.get(-self.attacker) == "free"

    def evaluate(self, b: Board):
        if b.stones[self.goal] == 0:
            if b.ko == self.goal and self._defender_free() and b.to_play != self.attacker:
                return None   # captured by a ko: the defender retakes at once
            return True
        _, libs = b.chain(self.goal)
        if len(libs) > self.max_libs:
            return False
        if b.to_play == self.attacker:
            if len(libs) == 1:
                if self._defender_free():
                    c = b.play(next(iter(libs)))
                    if c is None or c.ko == self.goal:
                        return None
                return True
            if self.use_ladder and len(libs) == 2 and ladder_captures(b, self.goal):
                return True
        return None

    def candidates(self, b: Board) -> list[int]:
        """Candidate move points (sorted; the defender's pass is added by ``children``)."""
        if b.stones[self.goal] == 0:
            return [self.goal]   # retake a ko on the goal point
        pts, libs = b.chain(self.goal)
        nb = neighbour_lists(b.size)
        moves = set(libs)
        for lib in libs:
            for n in nb[lib]:
                if b.stones[n] == 0:
                    moves.add(n)
        attacking = b.to_play == self.attacker
        weak = self.weak_libs if attacking else self.weak_libs_defender
        for rep in b.neighbour_chains(pts, self.attacker):
            sp, chain_libs = b.chain(rep)
            if len(chain_libs) <= weak:
                moves |= chain_libs
                if len(chain_libs) <= (self.rescue_weak if attacking else self.support_weak):
                    # defender strings pressing on a weak attacker string next to the goal: the attacker saves
                    # its string by capturing them (break-chain), the defender saves them (keeps the pressure)
                    lim = self.rescue_libs if attacking else self.support_libs
                    for rep2 in b.neighbour_chains(sp, -self.attacker):
                        sp2, l2 = b.chain(rep2)
                        if self.goal not in sp2 and len(l2) <= lim:
                            moves |= l2
        if self.near_libs:
            # strings touching the goal's liberties: the defender's connections and the attacker's blockers
            for rep in b.neighbour_chains(libs, -self.attacker):
                sp, chain_libs = b.chain(rep)
                if self.goal not in sp and len(chain_libs) <= self.near_libs:
                    moves |= chain_libs
            if not attacking:
                for rep in b.neighbour_chains(libs, self.attacker):
                    _, chain_libs = b.chain(rep)
                    if len(chain_libs) <= weak:
                        moves |= chain_libs
        return sorted(moves)

    def _play(self, b: Board, m: int):
        rule = self.ko_rule.get(b.to_play, "simple")
        if rule == "free" and m == b.ko:
            b = Board(b.size, b.stones, b.to_play, -1)
        c = b.play(m)
        return c

    def children(self, b: Board):
        out = []
        for m in self.candidates(b):
            c = self._play(b, m)
            if c is not None:
                out.append((m, c))
        if self.defender_pass and b.to_play != self.attacker and b.key() != self.root_key:
            out.append((b.size * b.size, b.play(b.size * b.size)))
        return out


def _root_move(b: Board, goal: int):
    """Attacker's capturing move when the root position is already TRUE (atari or ladder)."""
    return ladder_move(b, goal)


def solve_capture(board: Board, goal: int, attacker_to_move: bool = True, solver: str = "pns",
                  max_nodes: int = 20000, max_seconds: float = 10.0, l_start: int = 2, max_l: int = 4,
                  prior=None, ko_rule=None, problem_kw=None, model=None, trees=None,
                  order_by_prior: bool = False, keep_disproof: bool = True,
                  prior_init: float = 0.0) -> tuple[Result, int]:
    """Attack (attacker to move) or defend (defender to move) the string at ``goal``.

    Returns (result of the last search, L used).  With the attacker to move, ``result.value`` True means the
    string can be captured; with the defender to move, False means the defender saves it (``result.move`` is
    then the saving move, ``board.size ** 2`` for a pass).  On a disproof at L the search is repeated with
    L + 1 up to ``max_l``.  ``prior(state, move, child) -> P(TRUE)`` is used by PP; ``ko_rule`` maps a colour to
    "simple" / "free" (see the module docstring).  ``model``: a pattern model giving the priors (PP) and, with
    ``order_by_prior``, the child order (both solvers); ``prior_init`` > 0: PNS starts new leaves at proof numbers
    from the model's prior (``tree.initial_proof_numbers``); every searched ``Tree`` is appended to ``trees`` if given.
    With ``keep_disproof``, when the search at L + 1 runs out of budget after a disproof at L by a defender move
    (defender to move), that disproof is returned (the defender reaches L + 1 liberties and deeper reading is out
    of budget: the string is taken as safe, as liberty cut-offs in a reading engine do); nodes and seconds still
    count every search.  Attacks are unaffected (unknown and disproved both mean failure).
    """
    if board.stones[goal] == 0:
        raise ValueError("goal point is empty")
    attacker = -board.stones[goal]
    b = board.copy()
    want = attacker if attacker_to_move else -attacker
    if b.to_play != want:
        b.to_play, b.ko = want, -1
    total_nodes, total_time = 0, 0.0
    res, L = None, l_start
    last_false = None
    for L in range(l_start, max_l + 1):
        prob = CaptureProblem(goal, attacker, L, ko_rule=ko_rule, root_key=b.key(), **(problem_kw or {}))
        if prior is not None:
            prob.prior = prior
        if model is not None:
            prob.set_model(model)
        tree = Tree(prob, solver, order_by_prior, prior_init if model is not None else 0.0)
        res = tree.search(b, max_nodes=max(1, max_nodes - total_nodes), max_seconds=max(0.0, max_seconds - total_time))
        if trees is not None:
            trees.append(res.tree)
        total_nodes += res.nodes
        total_time += res.seconds
        if res.value is False and res.move is not None:   # a disproof by a defender move (not a trivial one)
            last_false = (res, L)
        if res.value is not False or total_nodes >= max_nodes or total_time >= max_seconds:
            break
    if res.value is None and keep_disproof and last_false is not None:
        res, L = last_false
    if res.value is True and res.move is None and attacker_to_move:
        res.move = _root_move(b, goal)
    res.nodes, res.seconds = total_nodes, total_time
    return res, L


def solve_capture_ko(board: Board, goal: int, attack: bool = True, solver: str = "pns",
                     max_nodes: int = 20000, max_seconds: float = 10.0, codes=(1, 2, 3), **kw):
    """GNU Go-style answer for ``attack``/``defend``: (code, move, total nodes, total seconds, L).

    code 1: success even if the side to succeed loses every ko; 2: success if it may take a ko first
    (simple ko rule, no ko threats); 3: success only if it also wins kos the opponent took first; 0: failure
    (or budget exhausted).  ``codes`` limits which levels are tried (``(1,)`` skips ko detection).
    """
    attacker = -board.stones[goal] if board.stones[goal] else 0
    side = attacker if attack else -attacker
    rules = {1: {side: "simple", -side: "free"}, 2: {side: "simple", -side: "simple"},
             3: {side: "free", -side: "simple"}}
    nodes, secs, last_l = 0, 0.0, None
    for code in codes:
        res, L = solve_capture(board, goal, attack, solver, max_nodes=max(1, max_nodes - nodes),
                               max_seconds=max(0.0, max_seconds - secs), ko_rule=rules[code], **kw)
        nodes += res.nodes
        secs += res.seconds
        last_l = L
        ok = (res.value is True) if attack else (res.value is False)
        if ok:
            return code, res.move, nodes, secs, L
        if nodes >= max_nodes or secs >= max_seconds:
            break
    return 0, None, nodes, secs, last_l
