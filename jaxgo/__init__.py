"""jaxgo: a JAX engine for computer Go research.

Data flows one way: ``rules`` -> ``playout`` -> search -> front ends (``gtp``).
"""

__version__ = "0.1"
