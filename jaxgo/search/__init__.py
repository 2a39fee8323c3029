"""Search algorithms over the engine (decision-theoretic search control lives in ``jaxgo.bpip``)."""
