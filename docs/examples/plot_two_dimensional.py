"""
Two columns at once: departure time × distance with HDG
=======================================================

One report per flight answers questions across two columns: :class:`ldpnum.HDG` (hybrid-dimensional grids)
collects the flights' departure time and distance at ε = 1 per flight, and the collector estimates their joint
distribution and any 2-D range, here the share of departures between 6 and 9 am that fly under 1,000 miles.
"""

import matplotlib.pyplot as plt
import numpy as np

import ldpnum as ldp
from ldpnum.demo import flights_frame

df = flights_frame()
bounds = {"dep_time": (0, 1440), "distance": (0, 5000)}
hdg = ldp.HDG(1.0, bounds=bounds, n=len(df))
reports = df.ldp.privatize({("dep_time", "distance"): hdg}, rng=0)
est = reports["dep_time,distance"].ldp.estimate_ranges()

query = {"dep_time": (360, 540), "distance": (0, 1000)}
inside = [df[c].between(lo, hi, inclusive="left") for c, (lo, hi) in query.items()]
truth = np.mean(inside[0] & inside[1])
print(f"granularities {hdg.granularities}; 6-9 am and under 1,000 miles: "
      f"estimated {float(est.range(query)):.4f}, true {truth:.4f}")

# %%
# The estimated joint density next to the true one on the same grid.
table, edges_t, edges_d = est.joint("dep_time", "distance", as_frame=False)
true_table, _, _ = np.histogram2d(df["dep_time"], df["distance"], bins=[edges_t, edges_d])
fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
area = np.outer(np.diff(edges_t), np.diff(edges_d))
# one colour scale for both; the true distances sit on a few hundred values (point masses), which no grid
# collected at ε = 1 resolves, so the scale stops at the truth's 99th percentile
vmax = np.quantile(true_table / true_table.sum() / area, 0.99)
est.plot("dep_time", "distance", ax=axes[0], vmin=0, vmax=vmax)
mesh = axes[1].pcolormesh(edges_t, edges_d, (true_table / true_table.sum() / area).T, vmin=0, vmax=vmax)
fig.colorbar(mesh, ax=axes[1], label="density")
axes[1].set(title="truth", xlabel="dep_time", ylabel="distance")
plt.show()
