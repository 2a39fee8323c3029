"""Chess pawn endings for the BPIP controller (python-chess, the optional extra ``chess``, imported lazily).

Evaluator (all values in pawn units, for the side to move):
  M  = material (Q 9, R 4.5, B 3, N 3, P 1; Table 2) + linear VF over side-relative binary features (Table 1
       style: "moving side has a pawn on b5", "waiting side king controls g7", "moving side passed pawn on b6";
       squares are seen from the owner's side, so a black pawn on b4 is a "pawn on b5" of its side);
       initial weights give 0.2 per rank a pawn stands beyond its 4th rank, so the paper's position is 0.6.
  Up = M + promotion potential of the side to move + 0.5, Lw = M - potential of the waiting side - 0.5, where
       the potential of a side is 8 / 2**(steps - 1) for its most advanced pawn (8 one step from queening).
  OET = 1 + 0.25 * (number of pawns) + 1.0 * (number of passed pawns)  (ETU; a hand-set linear function).
Promotions other than to a queen are not generated.  Terminal: checkmate -MATE, stalemate / bare kings 0.

``evaluator="race"`` (the default of the controllers; the fixed-depth baselines use ``"material"``) adds the
knowledge the material evaluator lacks and the paper's king-control features can express:
  * race features (conjunctions of "pawn on s", "path clear" and "enemy king does not control the square of
    the pawn"): "the moving / waiting side wins the pawn race in k moves" from the fastest unstoppable passed
    pawn of each side (rule of the square, side to move counted); weight +-8 * 0.9**(k-1);
  * M is a capture/promotion quiescence search (stand pat allowed, at most ``qs_depth`` plies) over that VF;
  * the bounds may reverse a race: Up = max(M, M0 + P(mover)) + spread, Lw = min(M, M0 - P(waiter)) - spread,
    where M0 is the static value without race features (a lost race can still be turned by a breakthrough,
    a won one can still be stopped).
"""

from __future__ import annotations

import time

from jaxgo.bpip.adapter import LinearVF

MATE = 12.0
PIECE_VALUES = {1: 1.0, 2: 3.0, 3: 3.0, 4: 4.5, 5: 9.0, 6: 0.0}  # chess.PAWN .. chess.KING
POSITIONS = {
    # the paper's Figure 3 pawns with the kings far away; 1.b6! is the only win
    "paper": "7k/ppp5/8/PPP5/8/8/8/7K w - - 0 1",
}
# further endings tried (section 5 of the paper mentions "some other ending positions"; ours are our own choice)
OTHER_POSITIONS = {
    "mirror": "k7/5ppp/8/5PPP/8/8/8/K7 w - - 0 1",  # the same breakthrough on the f-h files: 1.g6!
    "outside-passer": "8/5k2/8/p7/8/8/5PPK/8 w - - 0 1",  # an outside passed pawn for Black, White to move
    "king-race": "8/8/1k6/8/8/6K1/P7/8 w - - 0 1",  # a-pawn vs king
}
PAWN_FEATURE, KING_CONTROL, PASSED, RACE = 0, 2, 4, 6  # feature blocks of 64 (mover block, waiter block = +1)
EVALUATORS = ("race", "material")


def require_chess():
    """Import python-chess or raise a clear error naming the optional extra."""
    try:
        import chess
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("python-chess is needed: pip install 'jaxgo[chess]'") from exc
    return chess


def initial_vf(passed_bonus: float = 0.0, race_weight: float = 8.0, race_decay: float = 0.9) -> LinearVF:
    """Hand-set weights: +-0.2 per rank beyond the 4th for moving / waiting side pawns, optionally
    +-``passed_bonus * 2**(rank - 5)`` for a passed pawn on relative rank 5..7, and +-``race_weight *
    race_decay**(k-1)`` for "moving / waiting side wins the pawn race in k moves" (only active with the race
    evaluator)."""
    w = {}
    for k in range(1, 8):
        w[RACE * 64 + k] = race_weight * race_decay ** (k - 1)
        w[(RACE + 1) * 64 + k] = -race_weight * race_decay ** (k - 1)
    for sq in range(64):
        rank = sq // 8 + 1
        if rank >= 5:
            w[(PAWN_FEATURE * 64) + sq] = 0.2 * (rank - 4)
            w[((PAWN_FEATURE + 1) * 64) + sq] = -0.2 * (rank - 4)
            if passed_bonus:
                w[(PASSED * 64) + sq] = passed_bonus * 2 ** (rank - 5)
                w[((PASSED + 1) * 64) + sq] = -passed_bonus * 2 ** (rank - 5)
    return LinearVF(w)


class ChessDomain:
    """The game interface of ``jaxgo.bpip.tree.Domain`` over python-chess boards."""

    def __init__(
        self, vf: LinearVF | None = None, potential_decay: float = 0.7, spread: float = 0.5, passed_bonus: float = 0.0,
        evaluator: str = "material", qs_depth: int = 6,
    ):
        if evaluator not in EVALUATORS:
            raise ValueError(f"unknown evaluator {evaluator!r}; one of {EVALUATORS}")
        self.chess = require_chess()
        self.evaluator = evaluator
        self.qs_depth = qs_depth
        self.potential_decay = potential_decay  # potential = 8 * decay**(steps - 1)
        self.spread = spread  # constant part of both bounds
        self.vf = vf or initial_vf(passed_bonus)
        self.evaluations = 0

    # -- game
    def moves(self, board) -> list:
        """Legal moves, promotions to a queen only; captures and promotions first."""
        out = [m for m in board.legal_moves if m.promotion in (None, self.chess.QUEEN)]
        out.sort(key=lambda m: (not (m.promotion or board.is_capture(m)),))
        return out

    def play(self, board, move):
        b = board.copy(stack=False)
        b.push(move)
        return b

    def terminal_value(self, board) -> float | None:
        if board.is_checkmate():
            return -MATE
        if board.is_stalemate() or board.is_insufficient_material():
            return 0.0
        return None

    def stop(self, board) -> bool:
        """Adapter STOPOP: a queen is on the board (a promotion decided the race)."""
        return bool(board.queens)

    def move_name(self, move) -> str:
        return move.uci()

    # -- features and evaluation
    def _relative(self, sq: int, white_mover: bool) -> int:
        return sq if white_mover else self.chess.square_mirror(sq)

    def _pawn_info(self, board):
        """Per colour: list of (square, steps to queen, passed)."""
        chess = self.chess
        info = {}
        for colour in (chess.WHITE, chess.BLACK):
            enemy = board.pieces(chess.PAWN, not colour)
            rows = []
            for sq in board.pieces(chess.PAWN, colour):
                f, r = chess.square_file(sq), chess.square_rank(sq)
                ahead = range(r + 1, 8) if colour == chess.WHITE else range(0, r)
                passed = not any(
                    chess.square(ff, rr) in enemy for ff in (f - 1, f, f + 1) if 0 <= ff < 8 for rr in ahead
                )
                steps = 7 - r if colour == chess.WHITE else r
                rows.append((sq, steps, passed))
            info[colour] = rows
        return info

    def race_steps(self, board, colour) -> int | None:
        """Moves the fastest unstoppable passed pawn of ``colour`` needs to queen (None: no such pawn).

        Passed, path to the queening square empty, and outside the square of the enemy king (Chebyshev
        distance to the queening square, one less when the enemy is to move, greater than the pawn's steps;
        a pawn on its second rank counts one step less for the double step).
        """
        chess = self.chess
        king = board.king(not colour)
        best = None
        for sq, steps, passed in self._pawn_info(board)[colour]:
            if not passed:
                continue
            f, r = chess.square_file(sq), chess.square_rank(sq)
            ahead = range(r + 1, 8) if colour == chess.WHITE else range(0, r)
            if any(board.piece_at(chess.square(f, rr)) for rr in ahead):
                continue
            if r == (1 if colour == chess.WHITE else 6):
                steps -= 1
            if king is not None:
                queening = chess.square(f, 7 if colour == chess.WHITE else 0)
                if chess.square_distance(king, queening) - (board.turn != colour) <= steps:
                    continue
            best = steps if best is None else min(best, steps)
        return best

    def race_feature(self, board) -> int | None:
        """Basis id of "the moving (or waiting) side wins the pawn race in k moves", or None."""
        mine, theirs = self.race_steps(board, board.turn), self.race_steps(board, not board.turn)
        if mine is not None and (theirs is None or mine <= theirs):  # the mover queens first on a tie
            return RACE * 64 + mine
        if theirs is not None:
            return (RACE + 1) * 64 + theirs
        return None

    def vf_parts(self, board):
        """(material balance for the side to move, active basis features; race features for ``race``)."""
        base, feats = self._plain_parts(board)
        if self.evaluator == "race":
            race = self.race_feature(board)
            if race is not None:
                feats = feats | {race}
        return base, feats

    def _plain_parts(self, board):
        """(material balance for the side to move, pawn / king-control / passed-pawn features)."""
        chess = self.chess
        mover = board.turn
        base = 0.0
        for pt, val in PIECE_VALUES.items():
            base += val * (len(board.pieces(pt, mover)) - len(board.pieces(pt, not mover)))
        feats = set()
        pawns = self._pawn_info(board)
        for block, colour in ((0, mover), (1, not mover)):
            for sq, _steps, passed in pawns[colour]:
                rsq = self._relative(sq, colour == chess.WHITE)
                feats.add((PAWN_FEATURE + block) * 64 + rsq)
                if passed:
                    feats.add((PASSED + block) * 64 + rsq)
            king = board.king(colour)
            if king is not None:
                for sq in board.attacks(king):
                    feats.add((KING_CONTROL + block) * 64 + self._relative(sq, colour == chess.WHITE))
        self.evaluations += 1
        return base, frozenset(feats)

    def features(self, board) -> frozenset:
        return self.vf_parts(board)[1]

    def potential(self, rows) -> float:
        """Promotion potential of one side: 8 * decay**(steps-1) for its most advanced pawn."""
        if not rows:
            return 0.0
        steps = min(r[1] for r in rows)
        return 8.0 * self.potential_decay ** (max(steps, 1) - 1)

    def quiescence(self, board, alpha: float, beta: float, depth: int = 0) -> float:
        """Fail-hard capture/promotion search with stand pat over the VF (value for the side to move)."""
        t = self.terminal_value(board)
        if t is not None:
            return t
        stand = self.vf.value(*self.vf_parts(board))
        if stand >= beta or depth >= self.qs_depth:
            return stand
        alpha = max(alpha, stand)
        for mv in self.moves(board):
            if not (mv.promotion or board.is_capture(mv)):
                break  # moves() lists captures and promotions first
            board.push(mv)
            v = -self.quiescence(board, -beta, -alpha, depth + 1)
            board.pop()
            if v >= beta:
                return v
            alpha = max(alpha, v)
        return alpha

    def evaluate(self, board) -> tuple[float, float, float]:
        pawns = self._pawn_info(board)
        if self.evaluator == "material":
            m = self.vf.value(*self.vf_parts(board))
            up = m + self.potential(pawns[board.turn]) + self.spread
            lw = m - self.potential(pawns[not board.turn]) - self.spread
            return m, up, lw
        m = self.quiescence(board.copy(stack=False), -4 * MATE, 4 * MATE)
        m0 = self.vf.value(*self._plain_parts(board))
        up = max(m, m0 + self.potential(pawns[board.turn])) + self.spread
        lw = min(m, m0 - self.potential(pawns[not board.turn])) - self.spread
        return m, up, lw

    def static_value(self, board) -> float:
        """Mean evaluation only (for the fixed-depth baselines)."""
        t = self.terminal_value(board)
        if t is not None:
            return t
        base, feats = self.vf_parts(board)
        return self.vf.value(base, feats)

    def expansion_time(self, board) -> float:
        pawns = self._pawn_info(board)
        rows = pawns[True] + pawns[False]
        return 1.0 + 0.25 * len(rows) + 1.0 * sum(1 for r in rows if r[2])


# ---------------------------------------------------------------------------------------------- baselines
def negamax(domain: ChessDomain, board, depth: int, counter: dict, alpha=None, beta=None) -> float:
    """Fixed-depth negamax on the static value; alpha-beta pruning when alpha/beta are given.

    ``counter['leaves']`` counts static evaluations (leaf expansions), ``counter['nodes']`` interior nodes.
    """
    t = domain.terminal_value(board)
    if t is not None:
        counter["leaves"] += 1
        return t
    if depth == 0:
        counter["leaves"] += 1
        return domain.static_value(board)
    counter["nodes"] += 1
    best = -float("inf")
    for mv in domain.moves(board):
        board.push(mv)
        if alpha is None:
            v = -negamax(domain, board, depth - 1, counter)
        else:
            v = -negamax(domain, board, depth - 1, counter, -beta, -max(alpha, best))
        board.pop()
        if v > best:
            best = v
        if alpha is not None and best >= beta:
            break
    return best


def root_search(domain: ChessDomain, board, depth: int, pruning: bool = True, exact_root: bool = False) -> dict:
    """Search every root move to ``depth`` plies in total; returns values, best move and counts.

    With ``exact_root`` every root move gets its exact depth-limited value (full window), which is what the
    verification needs; otherwise the root window is narrowed as in ordinary alpha-beta.
    """
    counter = {"leaves": 0, "nodes": 1}
    start = time.perf_counter()
    b = board.copy()
    values, best = {}, -float("inf")
    for mv in domain.moves(b):
        b.push(mv)
        if not pruning:
            v = -negamax(domain, b, depth - 1, counter)
        elif exact_root:
            v = -negamax(domain, b, depth - 1, counter, -float("inf"), float("inf"))
        else:
            v = -negamax(domain, b, depth - 1, counter, -float("inf"), -best)
        b.pop()
        values[mv.uci()] = v
        best = max(best, v)
    move = max(values, key=values.get)
    return {
        "move": move,
        "value": values[move],
        "values": values,
        "depth": depth,
        "leaves": counter["leaves"],
        "expansions": counter["nodes"],
        "seconds": time.perf_counter() - start,
    }


def winning_moves(domain: ChessDomain, board, depth: int = 9, threshold: float = 5.0) -> dict:
    """First moves whose ``depth``-ply negamax value is >= ``threshold``, by null-window alpha-beta.

    Returns {"winning": [uci...], "leaves": n, "seconds": s}.  The null window decides ``value >= threshold``
    exactly for every root move, far cheaper than exact values.
    """
    counter = {"leaves": 0, "nodes": 1}
    start = time.perf_counter()
    b = board.copy()
    winning = []
    for mv in domain.moves(b):
        b.push(mv)
        # value(mv) >= threshold  <=>  child value <= -threshold
        v = -negamax(domain, b, depth - 1, counter, -threshold, -threshold + 1e-9)
        b.pop()
        if v >= threshold:
            winning.append(mv.uci())
    return {"winning": winning, "leaves": counter["leaves"], "seconds": time.perf_counter() - start}
