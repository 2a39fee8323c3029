"""A handful of fast GNU Go reading.tst cases (the full file runs through ``jaxgo solve``)."""

import os

import pytest

from jaxgo.proof.cli import run_case
from jaxgo.proof.regression import answer_matches, expectation, parse_tst
from jaxgo.util.paths import data_dir

REG = str(data_dir() / "problems" / "gnugo-regression" / "regression")
FAST_IDS = (2, 3, 4, 8, 9, 15, 16, 29, 93)   # 29, 93: break-chain moves of the attacker


def test_expectation_parsing_and_matching():
    assert expectation("1 (S4|T5)") == ("1 (S4|T5)", False, False, 1)
    assert expectation("1 H6]*"[:-2] + "*")[2] is True
    assert expectation("!0")[:2] == ("0", True)
    assert expectation("(2|3) P5")[3] == 2
    assert answer_matches("1 T5", "1 (S4|T5)") and not answer_matches("1 T4", "1 (S4|T5)")
    assert answer_matches("1 G1", "!0") and not answer_matches("0", "!0")


@pytest.mark.skipif(not os.path.isdir(REG), reason=f"GNU Go regression data not found at {REG} (set JAXGO_DATA)")
def test_fast_reading_cases_agree_with_gnugo():
    cases = [c for c in parse_tst(os.path.join(REG, "reading.tst")) if c["id"] in FAST_IDS]
    assert len(cases) == len(FAST_IDS)
    rows = [run_case(c, REG, "pns", max_nodes=1000, max_seconds=60.0) for c in cases]
    bad = [(r["id"], r["expected"], r["answer"]) for r in rows if not r["agree_full"]]
    assert not bad
    ko = [r for r in rows if r["id"] == 4][0]
    assert ko["answer"] == "2 D19" and ko["category"] == "ko"
