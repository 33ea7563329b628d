"""
Mean oracles: the standard error of each mechanism across ε
===========================================================

The flights' distances (336,776 flights, miles, public bounds 0 to 5,000) privatized with every mean oracle at
ε = 0.5 to 4. Each mechanism's ``variance(x)`` is exact (from its integer plan), so the standard error of the
mean at these very values is known before anything is drawn; the plot shows it for each mechanism, with the
error of one seeded collection per cell. Piecewise and Hybrid overtake the one-bit mechanisms as ε grows;
StochasticRounding and Duchi are one randomizer under two labels, so their lines coincide.
"""

import matplotlib.pyplot as plt
import numpy as np

import ldpnum as ldp
from ldpnum.data import load_flights

distance = load_flights(["distance"])["distance"].to_numpy(dtype=np.float64)
epsilons = [0.5, 1.0, 2.0, 4.0]
fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
for j, cls in enumerate([ldp.StochasticRounding, ldp.Duchi, ldp.Piecewise, ldp.Hybrid, ldp.Laplace]):
    se, error = [], []
    for i, eps in enumerate(epsilons):
        m = cls(epsilon=eps, bounds=(0, 5000))
        est = m.estimate_mean(m.aggregate(m.privatize(distance, rng=10 * j + i)))
        se.append(np.sqrt(np.mean(m.variance(distance)) / distance.size))  # exact, at these values
        error.append(abs(est.value - distance.mean()))
        print(f"{cls.__name__:<18} ε = {eps:<4g} SE {se[-1]:6.2f}  |error| {error[-1]:6.2f}  "
              f"(estimate's own SE {est.standard_error:.2f})")
    line, = ax.plot(epsilons, se, marker="o", label=cls.__name__)
    ax.scatter(epsilons, error, marker="x", color=line.get_color())
ax.set(xscale="log", yscale="log", xlabel="ε", ylabel="miles",
       title="Standard error of the mean (lines) and one collection's |error| (×)")
ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
ax.xaxis.set_minor_locator(plt.NullLocator())
ax.legend()
plt.show()
