import math

from jaxgo.go.hostboard import Board
from jaxgo.go.ladder import ladder_captures
from jaxgo.proof.capture import solve_capture
from jaxgo.proof.tree import and_logodds, logodds, or_logodds, pns_values, prob

INF = math.inf


def test_pp_rules_match_products():
    ps = [0.3, 0.9, 0.5]
    ls = [logodds(p) for p in ps]
    assert abs(prob(and_logodds(ls)) - 0.3 * 0.9 * 0.5) < 1e-12
    assert abs(prob(or_logodds(ls)) - (1 - 0.7 * 0.1 * 0.5)) < 1e-12


def test_pp_rules_safe_at_extremes():
    assert and_logodds([INF, INF]) == INF
    assert and_logodds([-INF, 0.0]) == -INF
    assert or_logodds([INF, -INF]) == INF
    assert or_logodds([-INF, -INF]) == -INF
    assert math.isfinite(or_logodds([40.0, 40.0])) and or_logodds([40.0, 40.0]) > 40.0
    assert math.isfinite(and_logodds([-40.0, -40.0])) and and_logodds([-40.0, -40.0]) < -40.0


def test_pns_rules():
    assert pns_values(True, [(1, 1), (2, 3), (INF, 0)]) == (1, 4)
    assert pns_values(False, [(1, 1), (2, 3)]) == (3, 1)


LADDER = """
.......
...X...
..XO...
....X..
.......
.......
.......
"""


def test_ladder_reader_and_search():
    b = Board.from_ascii(LADDER, to_play=1)
    assert ladder_captures(b, 17)
    res, _ = solve_capture(b, 17, attacker_to_move=True, solver="pns")
    assert res.value is True


def test_pns_and_pp_agree_on_atari():
    # O at 17 in atari after X plays: attacker to move captures at once
    b = Board.from_ascii("""
.......
...X...
..XOX..
.......
.......
.......
.......
""", to_play=1)
    for solver in ("pns", "pp"):
        res, _ = solve_capture(b, 17, True, solver)
        assert res.value is True


def test_parse_tst(tmp_path):
    import pathlib

    from jaxgo.proof.regression import parse_tst

    cases = parse_tst(pathlib.Path(__file__).parents[1] / "fixtures" / "proof_mini.tst")
    assert [(c["id"], c["cmd"], c["vertex"], c["move"], c["expected"]) for c in cases] == [
        (1, "attack", "E3", 12, "0"), (2, "defend", "F1", 12, "1 (G1|H1)")]


def test_gtp_attack_defend():
    from jaxgo.go.config import Rules
    from jaxgo.gtp.engine import make_gtp_engine

    eng = make_gtp_engine(Rules(size=7))
    for cmd in ("play b D6", "play b C5", "play w D5", "play b E4"):
        assert eng.handle(cmd).startswith("=")
    # the ladder of LADDER above: white D5 can be captured; moving first, white reaches three liberties by an
    # extension (deeper reading runs out of budget, so that disproof at L = 2 is the answer)
    assert eng.handle("attack D5").startswith("= 1")
    assert eng.handle("defend D5 pp 400").strip() in ("= 1 E5", "= 1 D4")


def test_initial_proof_numbers_from_a_prior():
    from jaxgo.proof.tree import initial_proof_numbers

    assert initial_proof_numbers(0.5, 0.7) == (1.0, 1.0)
    pn, dn = initial_proof_numbers(0.9, 0.5)
    assert pn < 1.0 < dn and abs(pn * dn - 1.0) < 1e-12 and abs(math.log(dn) - 0.5 * logodds(0.9)) < 1e-12
    assert initial_proof_numbers(1.0, 1.0) == (math.exp(-20.0), math.exp(20.0))   # clipped, never 0 or inf


class _FixedPrior:
    """A stand-in pattern model: every move gets the same prior."""

    def __init__(self, p):
        self.p = p

    def predict(self, stack):
        return self.p

    def harvest(self, stack):
        return None


def test_prior_init_pns_with_a_neutral_prior_is_plain_pns():
    b = Board.from_ascii(LADDER, to_play=1)
    kw = dict(problem_kw={"use_ladder": False}, max_l=3)
    plain, _ = solve_capture(b, 17, True, "pns", **kw)
    neutral, _ = solve_capture(b, 17, True, "pns", model=_FixedPrior(0.5), prior_init=1.0, **kw)
    assert plain.value is neutral.value is True and neutral.nodes == plain.nodes and neutral.move == plain.move
    # a strong constant prior changes the leaves' proof numbers but the search still proves the ladder
    skewed, _ = solve_capture(b, 17, True, "pns", model=_FixedPrior(0.9), prior_init=1.0, **kw)
    assert skewed.value is True
    # PP ignores the option
    pp, _ = solve_capture(b, 17, True, "pp", model=_FixedPrior(0.9), **kw)
    pp_init, _ = solve_capture(b, 17, True, "pp", model=_FixedPrior(0.9), prior_init=1.0, **kw)
    assert pp.nodes == pp_init.nodes


def test_prior_init_must_not_be_negative():
    import pytest

    from jaxgo.proof.tree import Tree

    with pytest.raises(ValueError):
        Tree(None, "pns", prior_init=-1.0)
