"""Combinatorial game theory for Go research (Lew's thesis, chapter 5).

Where each concept lives:

* ``games``          game trees, sums, exact minimax, the toy sum G + H + I (section 5.1)
* ``thermograph``    exact thermographs: taxed stops by (5.1)-(5.2), mean, temperature, shape (section 5.6)
* ``triangle``       the four-number triangle approximation and its recursion (section 5.7)
* ``cgtd``           CG-TD(0): Algorithms 4-6, with the right-options half derived by symmetry (section 5.8)
* ``strategies``     HOTSTRAT, minimax, random; optimality checks and value loss
* ``linear_failure`` Algorithms 2-3 (linear value model) and the indifference limits (sections 5.3-5.4)
* ``toy``            the full G + H + I experiment behind ``jaxgo cgt toy``
* ``random_sums``    value-loss table on random sums
* ``go_patterns``    adaptive-pattern failure on a Go position (section 5.2; needs ``jaxgo.go.rules``)
* ``cli``            ``jaxgo cgt ...``
"""
