"""HDG's grids made consistent (``ldpnum/estimation/grids.py``): the variance-weighted consistency step against a
naive reference."""

import numpy as np
import pytest

from ldpnum.estimation.grids import consistency_step
from ldpnum.multi.hdg import HDGPlan


def naive_weighted_consistency_step(ests, grids, d, g1, g2, variances):
    """Per attribute and coarse interval, plain loops: each grid's interval mass and its variance (cells x
    cell variance); the inverse-variance mean; each cell of the interval shifted by its share of the gap."""
    ests = [np.array(e, dtype=float) for e in ests]
    r = g1 // g2
    for t in range(d):
        holders = [i for i, attrs in enumerate(grids) if t in attrs]
        for v in range(g2):
            cells = {}
            for i in holders:
                if len(grids[i]) == 1:
                    cells[i] = [(c,) for c in range(v * r, v * r + r)]
                elif grids[i][0] == t:
                    cells[i] = [(v, c) for c in range(g2)]
                else:
                    cells[i] = [(c, v) for c in range(g2)]
            mass = {i: sum(ests[i][c] for c in cells[i]) for i in holders}
            weight = {i: 1.0 / (len(cells[i]) * variances[i]) for i in holders}
            target = sum(weight[i] * mass[i] for i in holders) / sum(weight.values())
            for i in holders:
                for c in cells[i]:
                    ests[i][c] += (target - mass[i]) / len(cells[i])
    return ests


@pytest.mark.parametrize("d", [2, 3])
def test_weighted_consistency_step_matches_a_naive_reference(d):
    rng = np.random.default_rng(d)
    g1, g2 = 8, 4
    grids = HDGPlan(d, g1, g2, 1.0).grids
    ests = [rng.dirichlet(np.ones(g1)) if len(a) == 1 else rng.dirichlet(np.ones(g2 * g2)).reshape(g2, g2)
            for a in grids]
    variances = rng.uniform(1e-5, 1e-4, len(grids))
    got = [e.copy() for e in ests]
    consistency_step(got, grids, d, g1, g2, variances)
    for a, b in zip(got, naive_weighted_consistency_step(ests, grids, d, g1, g2, variances)):
        np.testing.assert_allclose(a, b, atol=1e-12)
    # equal variances: the paper's weights 1 / C_i
    got, paper = [e.copy() for e in ests], [e.copy() for e in ests]
    consistency_step(got, grids, d, g1, g2, [3e-5] * len(grids))
    consistency_step(paper, grids, d, g1, g2)
    for a, b in zip(got, paper):
        np.testing.assert_allclose(a, b, atol=1e-12)
