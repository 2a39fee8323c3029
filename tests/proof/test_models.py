import math

import pytest

from jaxgo.proof.models import BetaModel, HierarchicalGaussian, norm_cdf, truncated_moments

STACK = tuple(range(100, 108))
SIBLING = STACK[:7] + (999,)          # same T0..T6 patterns, another T7 pattern


def test_beta_prior_from_largest_seen_pattern_and_counts():
    m = BetaModel(alpha=1, beta=1)
    assert m.predict(STACK) == 0.5
    m.harvest(STACK)
    m.update(STACK, True)
    m.update(STACK, True)
    m.update(STACK, False)
    assert m.predict(STACK) == pytest.approx((1 + 2) / (2 + 3))
    # the sibling's largest pattern is unseen: its prior comes from the T6 pattern, which holds the same counts
    assert m.predict(SIBLING) == pytest.approx(3 / 5)
    m.update(SIBLING, False)          # T7 of the sibling is not in H: only the shared patterns count it
    assert m.predict(STACK) == pytest.approx(3 / 5)
    assert m.predict(SIBLING) == pytest.approx(3 / 6)
    # a larger pattern harvested but never counted does not hide the counts of the smaller ones
    cousin = STACK[:6] + (555, 556)
    m.harvest(cousin)
    assert m.predict(cousin) == pytest.approx(3 / 6)   # the shared T5 pattern: 2 proofs, 2 disproofs
    peaked = BetaModel(alpha=1000, beta=1000)
    peaked.harvest(STACK)
    peaked.update(STACK, True)
    assert peaked.predict(STACK) == pytest.approx(1001 / 2001)


def test_truncated_moments_match_numeric_integration():
    mu, var = 0.7, 2.5
    s = math.sqrt(var)
    xs = [mu + s * (-10 + 20 * i / 20000) for i in range(20001)]
    for positive in (True, False):
        w = [math.exp(-0.5 * ((x - mu) / s) ** 2) * ((x > 0) == positive) for x in xs]
        z = sum(w)
        mean = sum(wi * x for wi, x in zip(w, xs)) / z
        second = sum(wi * x * x for wi, x in zip(w, xs)) / z
        m, v = truncated_moments(mu, var, positive)
        assert m == pytest.approx(mean, abs=2e-3)
        assert v == pytest.approx(second - mean ** 2, abs=5e-3)


def test_gaussian_prior_predictive_is_chain_sum():
    g = HierarchicalGaussian(mu0=1.0, sigma0=1.0, betas=[0.5] * 7)
    mu, var = g.predictive(STACK)
    assert mu == pytest.approx(1.0) and var == pytest.approx(1 + 3.5 + 1)
    assert g.predict(STACK) == pytest.approx(norm_cdf(1.0 / math.sqrt(5.5)))


def test_gaussian_update_is_moment_matched_conditioning():
    g = HierarchicalGaussian()                 # x7 ~ N(0, 8) a priori, y = x7 + N(0, 1)
    g.update(STACK, True)
    m, v = truncated_moments(0.0, 9.0, True)   # matched posterior of y
    # Gaussian conditioning of x7 on a Gaussian message for y that turns N(0, 9) into N(m, v)
    post_mean = 8 / 9 * m
    post_var = 8 - (8 / 9) ** 2 * (9 - v)
    mu, var = g.predictive(STACK)
    assert mu == pytest.approx(post_mean, rel=1e-9)
    assert var == pytest.approx(post_var + 1, rel=1e-9)
    assert g.predict(STACK) > 0.5


def test_gaussian_hierarchy_shares_evidence_and_larger_patterns_dominate():
    g = HierarchicalGaussian()
    for _ in range(20):
        g.update(STACK, True)
    p_stack, p_sib = g.predict(STACK), g.predict(SIBLING)
    assert p_stack > p_sib > 0.5                       # the sibling inherits through the shared T6 pattern
    for _ in range(20):
        g.update(SIBLING, False)
    assert g.predict(SIBLING) < 0.5 < g.predict(STACK)  # its own T7 evidence dominates the shared parents


def test_estimate_betas_and_refit_keep_predictions_consistent():
    g = HierarchicalGaussian()
    for _ in range(10):
        g.update(STACK, True)
        g.update(SIBLING, False)
    betas = g.estimate_betas(min_precision=0.1)
    assert len(betas) == 7 and all(b > 0 for b in betas)
    fresh = HierarchicalGaussian(betas=betas)
    for stack, value in g.observations:
        fresh.update(stack, value)
    assert g.predict(STACK) == pytest.approx(fresh.predict(STACK))
    assert g.predict(STACK) > 0.5 > g.predict(SIBLING)
