"""The Adapter (Figure 2): adapts a linear value function over binary features to a given state.

Trials start at the state; at each step the current state's value is moved towards the look-ahead-1 q-value
maximum (``LearnState``), then an operator is chosen epsilon-greedily and applied.  An operator is an abstract
stochastic transition: the mover's move followed by the adversary's response drawn from a response model
(the response that is best for the adversary under the current value function with probability 1 - epsilon,
a uniformly random response otherwise).  A trial ends on STOPOP (a terminal or ``stop`` state, e.g. a
promotion in chess) or after ``max_steps`` steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class LinearVF:
    """V(s) = base(s) + sum of the weights of the active binary basis functions (value for the side to move)."""

    weights: dict = field(default_factory=dict)

    def value(self, base: float, basis) -> float:
        """Value from the fixed part ``base`` and the active basis functions."""
        w = self.weights
        return base + sum(w.get(b, 0.0) for b in basis)

    def update(self, basis, error: float, rate: float) -> None:
        """Normalised LMS step: spread ``rate * error`` over the active basis functions."""
        basis = list(basis)
        if not basis:
            return
        step = rate * error / len(basis)
        for b in basis:
            self.weights[b] = self.weights.get(b, 0.0) + step

    def copy(self) -> "LinearVF":
        return LinearVF(dict(self.weights))


@dataclass
class AdapterSettings:
    """Adapter constants (documented in docs/bpip.md)."""

    trials: int = 30
    max_steps: int = 12
    epsilon: float = 0.1  # exploration: own operator choice and the sampled adversary response
    rate: float = 0.3
    target_epsilon: float = 0.0  # response noise inside the q-value target (0: the adversary's best reply)


def _value(domain, vf: LinearVF, state) -> float:
    """Value for the side to move: exact where the domain knows it, else the linear VF."""
    t = domain.terminal_value(state)
    if t is not None:
        return float(t)
    base, basis = domain.vf_parts(state)
    return vf.value(base, basis)


def _responses(domain, vf, after, rng, epsilon):
    """Response model after the mover's move: list of (probability, next state), next state back to the mover."""
    replies = domain.moves(after)
    states = [domain.play(after, r) for r in replies]
    vals = np.array([_value(domain, vf, s) for s in states])  # for the original mover
    probs = np.full(len(states), epsilon / len(states))
    probs[int(np.argmin(vals))] += 1.0 - epsilon
    return probs, states, vals


def q_values(domain, vf: LinearVF, state, rng, epsilon: float, target_epsilon: float | None = None):
    """Look-ahead-1 q-values of the mover's operators: list of (q, move, response model or None).

    The response model used to sample transitions mixes the best reply with uniform noise (``epsilon``); the
    q-value itself is the expectation under ``target_epsilon`` (default: the same).  With a noisy target every
    q is inflated by the occasional blunder reply (worth a queen in a pawn race), and the LMS update then
    drifts the weights of the always-active features (king control) upwards, so the default Adapter uses the
    best reply (``AdapterSettings.target_epsilon = 0``).
    """
    target_epsilon = epsilon if target_epsilon is None else target_epsilon
    out = []
    for mv in domain.moves(state):
        after = domain.play(state, mv)
        if domain.terminal_value(after) is not None or domain.stop(after) or not domain.moves(after):
            out.append((-_value(domain, vf, after), mv, None))
        else:
            probs, states, vals = _responses(domain, vf, after, rng, epsilon)
            target = np.full(len(vals), target_epsilon / len(vals))
            target[int(np.argmin(vals))] += 1.0 - target_epsilon
            out.append((float(target @ vals), mv, (probs, states)))
    return out


def adapt_vf(domain, vf: LinearVF, state, settings: AdapterSettings, rng: np.random.Generator) -> dict:
    """AdaptVF(V, S, n) of Figure 2; updates ``vf`` in place and returns simple statistics."""
    steps_total, updates = 0, 0
    for _ in range(settings.trials):
        s = state
        for _step in range(settings.max_steps):
            steps_total += 1
            if domain.terminal_value(s) is not None or domain.stop(s):
                break  # STOPOP
            qs = q_values(domain, vf, s, rng, settings.epsilon, settings.target_epsilon)
            if not qs:
                break
            target = max(q for q, _, _ in qs)
            base, basis = domain.vf_parts(s)
            vf.update(basis, target - vf.value(base, basis), settings.rate)  # policy.LearnState(S_c)
            updates += 1
            if rng.random() < settings.epsilon:  # policy.ChooseNextOp(S_c)
                q, mv, model = qs[int(rng.integers(len(qs)))]
            else:
                q, mv, model = max(qs, key=lambda t: t[0])
            if model is None:
                break  # the operator ends the trial (STOPOP)
            probs, states = model
            s = states[int(rng.choice(len(states), p=probs))]
    return {"steps": steps_total, "updates": updates}
