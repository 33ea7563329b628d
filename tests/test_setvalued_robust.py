"""Set-valued data (SVIM, SVSM): robustness of the run, payload and state paths (TESTING.md "bad-input matrix").

Every bad input gets one clear error (TypeError for a wrong kind, ValueError for a wrong value, naming the field and
the value) raised before any random word is drawn; small and extreme cases either work or are refused before the
first phase draws; encoding is O(n log n) in the size of a set.
"""

import time

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum.heavy.setvalued import encode_sets


@pytest.fixture
def no_draws(monkeypatch):
    """Fail the test if any random word is drawn (every draw of ldpnum goes through WordSource.draw)."""
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: pytest.fail("words drawn for a bad input"))


# -- encoding: O(m log m) per set ------------------------------------------------------------------------------

def test_one_huge_set_encodes_in_n_log_n():
    """Regression: the per-person insertion sort was quadratic in a set's size (one set of 240,000 str items took
    11 s, 10^6 about 7 min; 200,000 took 7.5 s). Sorting long sets with NumPy first: 0.1 s for 240,000 and 0.3 s
    for 10^6 measured; the 2.5 s limit leaves room for a loaded machine and still fails the quadratic sort."""
    sets = [{f"i{j}" for j in range(200_000)}, {"b", "a"}]
    start = time.perf_counter()
    enc = encode_sets(sets, 64)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.5, elapsed
    assert enc.lengths.tolist() == [200_000, 2]
    big = enc.words[:200_000]
    assert np.all(big[1:] > big[:-1])  # ascending and distinct
    assert enc.words[200_000] < enc.words[200_001]


def test_a_long_list_repeating_an_item_is_still_refused(no_draws):
    long_list = [f"w{j}" for j in range(500)] + ["w7"]
    with pytest.raises(ValueError, match=r"1 list\(s\) repeat an item .*first at index 1"):
        ldp.SVIM(4.0, top_k=2).run([{"a"}, long_list, {"b"}], rng=0)
