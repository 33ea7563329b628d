"""
The mean of handwritten-digit images under PrivUnitG
====================================================

Each of the 1,797 images of 8×8 pixels (:func:`ldpnum.data.load_digits`, UCI), normalized to a unit vector, is
one person's value. Each person sends one compressed report, a 32-bit seed index of a public direction family
(:class:`ldpnum.PrivUnitG`), at ε = 4; the collector estimates the mean image. The squared error is printed
next to its closed-form expectation.
"""

import matplotlib.pyplot as plt
import numpy as np

import ldpnum as ldp
from ldpnum.data import load_digits

x, digit = load_digits(normalize=True)  # (1797, 64) unit vectors and their labels
truth = x.mean(axis=0)
m = ldp.PrivUnitG(epsilon=4.0, dim=x.shape[1])
est = m.estimate_mean(m.aggregate(m.privatize(x, rng=0)))
err = float(np.sum((est.mean - truth) ** 2))
print(f"n = {len(x):,}, {m!r}: squared error {err:.4f}, expected {m.expected_squared_error(x):.4f}")

# %%
# The true mean image and its estimate from the randomized reports.
fig, axes = plt.subplots(1, 2, figsize=(7, 3.6), layout="constrained")
vmax = max(truth.max(), est.mean.max())
for ax, image, title in zip(axes, (truth, est.mean), ("true mean", "PrivUnitG estimate, ε = 4")):
    shown = ax.imshow(image.reshape(8, 8), cmap="gray_r", vmin=0, vmax=vmax)
    ax.set_title(title)
    ax.set_axis_off()
fig.colorbar(shown, ax=axes, shrink=0.8)
plt.show()
