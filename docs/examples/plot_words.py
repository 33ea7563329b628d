"""
The most frequent English words, without listing the words
==========================================================

A population of 200,000 people, each holding one word drawn by its frequency from the 50,000 most frequent
English words shipped with ldpnum (:func:`ldpnum.data.load_words`, from wordfreq). Each person reports their
word once with :class:`ldpnum.PEM` at ε = 4; the collector finds the top 10 from the reports alone, with no
dictionary of candidates, and estimates their shares with 95% intervals. Items are the words' first 8 bytes.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np

import ldpnum as ldp
from ldpnum.data import load_words

words, freq = load_words()
people = words[np.random.default_rng(0).choice(len(words), size=200_000, p=freq / freq.sum())]

pem = ldp.PEM(epsilon=4.0, top_k=10, item_bits=64, item_type="str")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ldp.TruncationWarning)  # longer words are cut to 8 bytes
    reports = pem.privatize(people, rng=1)
top = pem.estimate_heavy_hitters(pem.aggregate(reports))
print(top.to_frame())

# %%
# The estimated shares with their 95% intervals, next to the true shares of the same (cut) items.
cut = np.array([w.encode()[:8].decode(errors="ignore") for w in people])
true_share = [np.mean(cut == item) for item in top.items]
ax = top.plot()  # rank 1 at the top
ax.scatter(true_share, np.arange(top.k)[::-1], marker="x", color="k", zorder=3, label="true share")
ax.set_title("PEM, ε = 4, 200,000 people: top 10 words with 95% intervals")
ax.legend(loc="lower right")
plt.show()
