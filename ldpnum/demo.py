"""The demos behind ``make demo`` / ``python -m ldpnum demo``, on the embedded real data.

:func:`demo_distribution` is the analyst's workflow through the ``.ldp`` pandas accessor: two columns of the
NYC flights DataFrame are privatized with "one-column-per-row", both distributions are reconstructed from the
report columns, compared with the truth in a table and a plot. :func:`demo` then compares every mean oracle
on the distances. :func:`demo_heavy_hitters` (``python -m ldpnum demo heavy-hitters``) finds the most
frequent words of a population sampled from the embedded English word list with :class:`~ldpnum.PEM`.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ._random import child_rng

if TYPE_CHECKING:
    from .heavy import HeavyHittersEstimate

__all__ = ["demo", "demo_distribution", "demo_joint", "demo_vectors", "demo_heavy_hitters", "demo_telemetry",
           "telemetry_population"]

#: Seed of the population the heavy-hitter demo samples from the word list (the privatization's randomness
#: is separate: ``rng``).
WORDS_SAMPLE_SEED = 0

#: Item width of the heavy-hitter demo: words are cut to their first 8 UTF-8 bytes.
WORDS_ITEM_BITS = 64

#: People of the heavy-hitter demo's warm-up call (the first of the population): above
#: ``ldpnum._kernels._jit.INTERPRET_MAX_ELEMENTS``, so it runs the compiled client kernel, compiling it or
#: loading it from Numba's on-disk cache, and the timed call measures throughput only.
WARMUP_PEOPLE = 1 << 15

#: The columns the accessor demo privatizes: label, unit, public bounds.
DEMO_COLUMNS = {"dep_time": ("minutes after midnight", (0.0, 1440.0)), "distance": ("miles", (0.0, 5000.0))}

#: Bootstrap replicates per column in the flights demo (quartile intervals, CDF bands).
BOOTSTRAP = 100
#: Where ``make demo`` writes the comparison plot (relative to the working directory).
PLOT_PATH = "demo-output/flights_accessor.png"


def flights_frame() -> Any:
    """The flights that departed, with ``dep_time`` in minutes after midnight and ``distance`` in miles.

    Cancelled flights (no departure time) are not part of this population; the bounds are public facts
    about the columns (a day; the longest route from New York is 4,983 miles), never derived from the data.
    """
    import pandas as pd

    from .data import dep_time_minutes, load_flights

    flights = load_flights(["dep_time", "distance"])
    df = pd.DataFrame({"dep_time": dep_time_minutes(flights["dep_time"].to_numpy()),
                       "distance": flights["distance"].to_numpy(dtype=np.float64)})
    return df[df["dep_time"].notna()].reset_index(drop=True)


def demo_distribution(out: TextIO | None = None, *, epsilon: float = 1.0, rng: Any = None,
                      plot_path: str | None = PLOT_PATH) -> int:
    """The accessor on the flights: privatize two columns, one per flight, and reconstruct both.

    Every flight reports **one** of its two columns (``strategy="one-column-per-row"``, the column drawn
    independently of the values) through Square Wave with ε, so each flight spends ε in total; the server
    estimates each column's distribution (the default estimator, with ``BOOTSTRAP`` parametric bootstrap
    replicates), mean (unbiased, with a 95% interval) and quartiles with their 95% intervals from the report
    columns alone, and measures the Wasserstein-1 distance to the truth. The comparison plot
    (:func:`ldpnum.plot.compare`, CDFs with their 95% bands) is written to ``plot_path`` (None: no plot).

    Printed to ``out`` (default: ``sys.stdout`` at the time of the call). Returns 0.
    """
    from . import SquareWave, metrics

    out = sys.stdout if out is None else out
    df = flights_frame()
    mechanisms = {c: SquareWave(epsilon=epsilon, bounds=bounds) for c, (_, bounds) in DEMO_COLUMNS.items()}
    t0 = time.perf_counter()
    reports = df.ldp.privatize(mechanisms, rng=rng, strategy="one-column-per-row")
    t1 = time.perf_counter()
    # 100 bootstrap replicates per column: the quartiles' 95% intervals and the plotted CDF bands
    estimates = {c: reports[c].ldp.estimate_distribution(bootstrap=BOOTSTRAP, rng=child_rng(rng, 1, j))
                 for j, c in enumerate(DEMO_COLUMNS)}
    means = {c: reports[c].ldp.estimate_mean() for c in DEMO_COLUMNS}
    t2 = time.perf_counter()

    print(f"NYC flights 2013: {len(df):,} flights that departed; columns "
          + ", ".join(f"{c} ({unit}, bounds {bounds[0]:g}-{bounds[1]:g})" for c, (unit, bounds) in DEMO_COLUMNS.items()),
          file=out)
    print(f"reports = df.ldp.privatize({{dep_time: SquareWave, distance: SquareWave}}, epsilon = {epsilon:g}, "
          f'strategy="one-column-per-row")', file=out)
    counts = ", ".join(f"{c} {int(reports[c].notna().sum()):,}" for c in DEMO_COLUMNS)
    print(f"each flight reports one column: {counts} reports; epsilon per flight = {reports.ldp.epsilon_per_row:g} "
          f"(recorded in reports.attrs)", file=out)
    qs = (0.25, 0.5, 0.75)
    header = f"{'column':<10}{'statistic':<18}{'true':>10}{'estimated':>12}"
    print(header, file=out)
    print("-" * len(header), file=out)
    for c, (_, (lo, hi)) in DEMO_COLUMNS.items():
        truth = df[c].to_numpy()
        est, mean = estimates[c], means[c]
        ci_lo, ci_hi = mean.confidence_interval(0.95)
        rows = [("mean", truth.mean(), mean.value, f"  95% CI [{ci_lo:.1f}, {ci_hi:.1f}]")]
        intervals = [est.quantile(q, ci=0.95) for q in qs]
        rows += [(f"quantile {q:g}", t, iv.estimate, f"  95% CI [{iv.low:.1f}, {iv.high:.1f}]")
                 for q, t, iv in zip(qs, np.quantile(truth, qs), intervals)]
        for i, (name, t, e, extra) in enumerate(rows):
            print(f"{c if i == 0 else '':<10}{name:<18}{t:>10.1f}{e:>12.1f}{extra}", file=out)
        w1, ks = metrics.wasserstein(est, truth), metrics.ks(est, truth)
        print(f"{'':<10}{'W1':<18}{'':>10}{w1 * (hi - lo):>12.1f}  ({w1:.4f} of the domain; KS {ks:.3f}; "
              f"EMS {est.n_bins} bins, {est.n_iter} iterations, converged = {est.converged})", file=out)
    print(f"time: privatize {1000 * (t1 - t0):.0f} ms (the first call in a process includes loading the compiled "
          f"kernels), estimate both columns with {BOOTSTRAP} bootstrap replicates each {1000 * (t2 - t1):.0f} ms",
          file=out)
    if plot_path:
        _plot(df, estimates, epsilon, plot_path, out)
    return 0


def _plot(df, estimates, epsilon, plot_path, out):
    try:
        import matplotlib
    except ImportError:
        print("(matplotlib is not installed: no plot; pip install 'ldpnum[plot]')", file=out)
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from . import plot

    fig, axes = plt.subplots(1, len(estimates), figsize=(11, 4))
    for ax, (c, est) in zip(axes, estimates.items()):
        plot.compare(df[c], est, ax=ax, kind="cdf", labels=[f"Square Wave + EMS ({est.n_reports:,} reports)"])
        ax.set_xlabel(f"{c} ({DEMO_COLUMNS[c][0]})")
        ax.set_title(c)
    fig.suptitle(f"{len(df):,} flights, one column per flight, epsilon = {epsilon:g} per flight: estimate vs truth")
    os.makedirs(os.path.dirname(plot_path) or ".", exist_ok=True)
    fig.savefig(plot_path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"plot written to {os.path.abspath(plot_path)}", file=out)


def demo_joint(out: TextIO | None = None, *, epsilon: float = 1.0, rng: Any = None) -> float:
    """One question across two columns of the flights, from one :class:`~ldpnum.HDG` report per flight.

    The share of departures between 6 and 9 am that fly under 1,000 miles (through the ``.ldp`` accessor), next to the
    truth. Returns the estimated share.
    """
    import ldpnum as ldp

    out = sys.stdout if out is None else out
    df = flights_frame()
    query = {"dep_time": (360.0, 540.0), "distance": (0.0, 1000.0)}
    truth = float(np.mean(df["dep_time"].between(*query["dep_time"]) & df["distance"].between(*query["distance"])))
    hdg = ldp.HDG(epsilon, bounds={c: DEMO_COLUMNS[c][1] for c in ("dep_time", "distance")}, n=len(df))
    t0 = time.perf_counter()
    reports = df.ldp.privatize({("dep_time", "distance"): hdg}, rng=rng)
    est = reports["dep_time,distance"].ldp.range(query)
    elapsed = time.perf_counter() - t0
    print(f"Across two columns: flights departing 6-9 am that fly under 1,000 miles, one HDG report per flight at "
          f"epsilon = {epsilon:g} (granularities {hdg.granularities}):", file=out)
    print(f"  true share {truth:.4f}, estimated {float(est):.4f} (error {float(est) - truth:+.4f}); "
          f"{len(df):,} flights, {elapsed:.2f} s", file=out)
    return float(est)


def demo(out: TextIO | None = None, *, epsilons: Sequence[float] = (0.5, 1.0, 2.0, 4.0),
         rng: Any = None) -> int:
    """Privatize the flights' distances with every mean oracle and compare the estimates with the truth.

    Each of the 336,776 flights is one "person": its distance (miles, public bounds 0–5000) is randomized
    by the mechanism, and the mean is estimated from the reports alone. Uses secure randomness unless
    ``rng`` is given. Printed to ``out`` (default: ``sys.stdout`` at the time of the call).
    """
    from . import Duchi, Hybrid, Laplace, Piecewise, StochasticRounding
    from .data import load_flights

    out = sys.stdout if out is None else out
    distance = load_flights(["distance"])["distance"].to_numpy(dtype=np.float64)
    bounds = (0.0, 5000.0)
    true_mean = distance.mean()
    print(f"NYC flights 2013: n = {distance.size:,} distances (miles), public bounds {bounds}, "
          f"true mean {true_mean:.2f}", file=out)
    print(f"{'mechanism':<20}{'epsilon':>8}{'estimate':>12}{'95% CI':>24}{'error':>10}{'covers':>8}{'time':>9}",
          file=out)
    for cls in (StochasticRounding, Duchi, Piecewise, Hybrid, Laplace):
        for eps in epsilons:
            t0 = time.perf_counter()
            m = cls(epsilon=eps, bounds=bounds)
            est = m.estimate_mean(m.aggregate(m.privatize(distance, rng=rng)))
            elapsed = time.perf_counter() - t0
            lo, hi = est.confidence_interval(0.95)
            print(f"{cls.__name__:<20}{eps:>8g}{est.value:>12.2f}{f'[{lo:.2f}, {hi:.2f}]':>24}"
                  f"{est.value - true_mean:>+10.2f}{'yes' if lo <= true_mean <= hi else 'NO':>8}"
                  f"{elapsed * 1000:>7.0f}ms", file=out)
    print("Each row: privatize all flights + aggregate + estimate (first rows include JIT start-up).", file=out)
    print(file=out)
    demo_joint(out, rng=rng)
    return 0


def _word_truth(words, ranks, item_bits):
    """The truth the heavy-hitter demo scores against, counted on the truncated items people report.

    ``words``: the vocabulary (object array of str); ``ranks``: each person's index into it. A word longer than
    ``item_bits / 8`` UTF-8 bytes is reported as its first bytes, decoded as :class:`~ldpnum.PEM` decodes
    results (:func:`ldpnum.heavy.decode_items`), so words sharing those bytes are one item. Returns
    ``(items, counts, rank_of, item_of_word, long_word)``: the items held by someone, by decreasing count (ties
    by item), their counts, a dict item -> true rank (1-based), each vocabulary word's item, and the boolean
    mask of the vocabulary's truncated words.
    """
    from .heavy import decode_items, encode_items

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the truncation is counted below, per person
        codes, item_type, _ = encode_items(words, item_bits)
    item_of_word = np.empty(len(words), dtype=object)
    item_of_word[:] = decode_items(codes, item_type, item_bits)
    long_word = np.fromiter((len(w.encode("utf-8")) * 8 > item_bits for w in words), dtype=bool, count=len(words))
    items, inverse = np.unique(item_of_word, return_inverse=True)
    counts = np.bincount(inverse, weights=np.bincount(ranks, minlength=len(words)), minlength=len(items))
    held = counts > 0
    items, counts = items[held], counts[held]
    order = np.lexsort((items, -counts))
    items, counts = items[order], counts[order].astype(np.int64)
    rank_of = {item: r + 1 for r, item in enumerate(items.tolist())}
    return items, counts, rank_of, item_of_word, long_word


def demo_heavy_hitters(out: TextIO | None = None, *, epsilon: float = 4.0, n: int = 1_000_000, top_k: int = 20,
                       rng: Any = None) -> HeavyHittersEstimate:
    r"""Find the most frequent words of a sampled population with PEM, and compare them with the truth.

    Population: ``n`` people, each holding one word of the embedded list of the 50,000 most frequent English
    words (:func:`ldpnum.data.load_words`, from wordfreq), word :math:`i` drawn with probability
    :math:`f_i / \sum_j f_j` (NumPy ``default_rng(WORDS_SAMPLE_SEED)``, so the population is the same in every
    run). Each person privatizes their word once with :class:`~ldpnum.PEM` at ``epsilon``
    (``item_bits=64, item_type="str"``), the server aggregates the reports and estimates the ``top_k`` heavy
    hitters, each with its estimated share :math:`\hat f_v` of the people and the 95% interval
    :math:`\hat f_v \pm 1.96\,\hat\sigma_v`.

    Items are the words' first 8 UTF-8 bytes: longer words are cut, and words sharing those bytes are one item
    (e.g. "business" with "businesses"). The truth is counted on these same truncated items, as PEM decodes
    them: the true share of item :math:`v` is :math:`|\{i : x_i = v\}| / n` and its true rank is its place
    among all items held by someone, by decreasing count. The precision of the top k is
    :math:`|\hat T_k \cap T_k| / k` for the returned items :math:`\hat T_k` and the true top k :math:`T_k`
    (both have k items, so it is also the recall).

    Printed to ``out`` (default: ``sys.stdout`` at the time of the call): the population, the mechanism, a
    table (estimated rank, word, estimated share ± 1.96·SE, true rank, true share; a word marked "…" is an item
    that also holds longer words cut to it), the precision, the true top-k words missed, and the time taken:
    a first call on the first ``WARMUP_PEOPLE`` people (it compiles the client kernel, or loads it from
    Numba's on-disk cache), then privatize (including the encoding of the words), aggregate, estimate and their
    total for all ``n``.

    Parameters
    ----------
    out : file-like, optional
        Where to print.
    epsilon : float, default 4.0
        The privacy parameter of each person's one report, in (0, 20].
    n : int, default 1,000,000
        Number of people (at least 1).
    top_k : int, default 20
        How many heavy hitters to find.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Randomness of the privatization: ``None`` (default) is secure randomness, anything else a reproducible
        simulation. The warm-up call draws from a separate generator, so it does not change the result.

    Returns
    -------
    HeavyHittersEstimate
        The estimate the table shows.

    Notes
    -----
    Each person's report is ε-LDP (one call of ``privatize`` on their word); everything after it is
    post-processing. Memory: about 100 bytes per person (the sampled words, their encoding and the reports).

    References
    ----------
    T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 2021.
    R. Speer, "wordfreq: v3.0", Zenodo 2022 (the word frequencies; CC BY-SA 4.0).

    Examples
    --------
    >>> import io
    >>> from ldpnum.demo import demo_heavy_hitters
    >>> buf = io.StringIO()
    >>> est = demo_heavy_hitters(buf, epsilon=8.0, n=100_000, top_k=5, rng=0)
    >>> est.k, est.items[0]
    (5, 'the')
    >>> "precision of the top 5" in buf.getvalue()
    True
    """
    from . import PEM
    from ._validation import check_scalar
    from .data import load_words
    from .heavy import item_label

    n = check_scalar(n, "n", int, low=1)
    out = sys.stdout if out is None else out
    mech = PEM(epsilon, item_bits=WORDS_ITEM_BITS, top_k=top_k, item_type="str")  # validates epsilon and top_k
    words, freq = load_words()
    ranks = np.random.default_rng(WORDS_SAMPLE_SEED).choice(len(words), size=n, p=freq / freq.sum())
    people = words[ranks]
    items, counts, rank_of, item_of_word, long_word = _word_truth(words, ranks, WORDS_ITEM_BITS)
    n_long = int(np.count_nonzero(long_word[ranks]))
    cut_items = set(item_of_word[long_word].tolist())  # items that stand for longer words too

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TruncationWarning: its count is printed below
        warm = people[:WARMUP_PEOPLE]
        mech.estimate_heavy_hitters(mech.aggregate(mech.privatize(warm, rng=None if rng is None else 0)))
        t1 = time.perf_counter()
        reports = mech.privatize(people, rng=rng)
    t2 = time.perf_counter()
    agg = mech.aggregate(reports)
    t3 = time.perf_counter()
    est = mech.estimate_heavy_hitters(agg)
    t4 = time.perf_counter()

    nbytes = WORDS_ITEM_BITS // 8
    print(f"English words (wordfreq, {len(words):,} most frequent): n = {n:,} people sampled by word frequency "
          f"(seed {WORDS_SAMPLE_SEED}), one word each; {len(items):,} distinct items held", file=out)
    mode = "secure randomness" if rng is None else f"a seeded simulation (rng={rng!r})"
    print(f"{mech!r}: one report per person at epsilon = {epsilon:g}, {mode}", file=out)
    print(f"truncation: items are the words' first {nbytes} UTF-8 bytes (item_bits = {WORDS_ITEM_BITS}); "
          f"{n_long:,} people ({n_long / n:.1%}) hold one of the {int(long_word.sum()):,} longer words, counted "
          "with every word sharing those bytes (marked …); the truth is counted on the same truncated items",
          file=out)
    ci = est.confidence_interval(0.95)
    lows, highs = np.asarray(ci.low), np.asarray(ci.high)  # one entry per item
    labels = [item_label(v, one_line=True) + ("…" if v in cut_items else "") for v in est.items]
    width = max([len("word")] + [len(v) for v in labels])
    header = f"{'rank':>4}  {'word':<{width}}  {'estimated % ± 1.96·SE':>22}  {'true rank':>9}  {'true %':>7}"
    print(header, file=out)
    print("-" * len(header), file=out)
    for r, (item, label) in enumerate(zip(est.items, labels)):
        half = (highs[r] - lows[r]) / 2
        true_rank = rank_of.get(item)
        true_share = 0.0 if true_rank is None else counts[true_rank - 1] / n
        print(f"{r + 1:>4}  {label:<{width}}  {f'{100 * est.frequencies[r]:.3f} ± {100 * half:.3f}':>22}  "
              f"{'-' if true_rank is None else true_rank:>9}  {100 * true_share:>7.3f}", file=out)
    true_top = items[:top_k].tolist()
    found = set(est.items) & set(true_top)
    missed = [f"{item_label(v, one_line=True)} ({r})" for r, v in enumerate(true_top, 1) if v not in found]
    print(f"precision of the top {top_k}: {len(found)}/{top_k} = {len(found) / top_k:.2f} of the returned words "
          f"are in the true top {top_k}" + (f" (only {est.k} returned)" if est.k < top_k else ""), file=out)
    print("missed (true rank): " + (", ".join(missed) if missed else "none"), file=out)
    print(f"time: privatize {1000 * (t2 - t1):.0f} ms (encoding the words included), aggregate "
          f"{1000 * (t3 - t2):.0f} ms, estimate {1000 * (t4 - t3):.0f} ms; total {t4 - t1:.2f} s for {n:,} "
          f"people; before it, a first call on {len(warm):,} people took {1000 * (t1 - t0):.0f} ms (compiling the "
          "client kernel, or loading it from Numba's cache)", file=out)
    return est


def demo_vectors(out: TextIO | None = None, *, epsilon: float = 4.0, rng: Any = None) -> Any:
    """The mean of the normalized handwritten-digit images (64 pixels each) under :class:`~ldpnum.PrivUnitG`.

    Each of the 1,797 images of ``ldpnum.data.load_digits`` is one person's unit vector; each person sends one
    compressed report (a 32-bit seed index per repetition) at ``epsilon``; the collector estimates the mean image.
    Prints the squared ℓ2 error against the true mean next to its closed-form expectation, the mean's own
    squared norm, the cosine between estimate and truth, the report size and the time, then the same with
    :class:`~ldpnum.SampledDimensions` (Piecewise, pixels bounded in [0, 1]) for comparison. Returns the
    :class:`~ldpnum.vectors.VectorMeanEstimate` of PrivUnitG.
    """
    import ldpnum as ldp
    from .data import load_digits

    out = sys.stdout if out is None else out
    x, digits = load_digits(normalize=True)
    n, dim = x.shape
    truth = x.mean(axis=0)
    m = ldp.PrivUnitG(epsilon, dim)
    t0 = time.perf_counter()
    reports = m.privatize(x, rng=rng)
    t1 = time.perf_counter()
    est = m.estimate_mean(m.aggregate(reports))
    t2 = time.perf_counter()
    err = float(np.sum((est.mean - truth) ** 2))
    cos = float(est.mean @ truth / (np.linalg.norm(est.mean) * np.linalg.norm(truth)))
    mode = "secure randomness" if rng is None else f"a seeded simulation, rng={rng}"
    print(f"Handwritten digits (UCI, 8x8): n = {n:,} people, one unit vector of {dim} pixels each; {mode}", file=out)
    print(f"{m!r}: {m.repetitions} report(s) of 32 bits per person at epsilon = {epsilon:g} in all", file=out)
    print(f"  squared error |mean_hat - mean|^2 = {err:.4f} (expected {m.expected_squared_error(x):.4f} from the "
          f"closed form); |mean|^2 = {float(truth @ truth):.4f}; cosine(estimate, truth) = {cos:.3f}", file=out)
    print(f"  time: privatize {t1 - t0:.2f} s ({n / (t1 - t0):,.0f} vectors/s; the process's first call: it "
          f"loads the compiled kernel from Numba's cache, filled by `ldpnum compile`, or compiles it if the cache "
          f"is empty), aggregate + estimate {t2 - t1:.3f} s", file=out)
    # the same question with per-pixel bounds: each person reports k of the 64 pixels
    sd = ldp.SampledDimensions("piecewise", epsilon, [(0.0, 1.0)] * dim)
    sd_est = sd.estimate_mean(sd.aggregate(sd.privatize(x, rng=None if rng is None else rng + 1)))
    sd_err = float(np.sum((sd_est.mean - truth) ** 2))
    print(f"SampledDimensions(piecewise, k={sd.k}) on the same pixels in [0, 1]: squared error {sd_err:.4f} "
          f"(PrivUnitG's is {err / sd_err:.2f}x of it)", file=out)
    rows = [" ".join(f"{v:5.2f}" for v in row) for row in truth.reshape(8, 8)]
    est_rows = [" ".join(f"{v:5.2f}" for v in row) for row in est.mean.reshape(8, 8)]
    print("true mean image" + " " * 34 + "PrivUnitG estimate", file=out)
    for a, b in zip(rows, est_rows):
        print(f"{a}   {b}", file=out)
    return est


#: Seed of the telemetry demo's simulated devices (their daily values; the privatization's randomness and the
#: devices' keys come from ``rng``).
TELEMETRY_SEED = 0


def telemetry_population(n: int, rounds: int, k: int, change: float, seed: int = TELEMETRY_SEED) -> np.ndarray:
    """The telemetry demo's generator: ``n`` devices' values over ``rounds`` days, an ``(n, rounds)`` int array.

    Each device reports which of ``k`` apps it used most that day. Apps have Zipf popularity, ``P[app j] ∝
    1/(j + 1)``; on day 0 each device draws its app from it, and every following day each device, independently
    with probability ``change``, switches to an app drawn from the same popularity but different from its own
    (the others keep theirs). Seeded by ``seed`` (NumPy ``default_rng``), so the truth is the same on every run.
    """
    gen = np.random.default_rng(seed)
    pop = 1.0 / np.arange(1, k + 1)
    pop /= pop.sum()
    out = np.empty((n, rounds), dtype=np.int64)
    out[:, 0] = gen.choice(k, size=n, p=pop)
    for r in range(1, rounds):
        today = out[:, r - 1].copy()
        movers = np.flatnonzero(gen.random(n) < change)
        pick = gen.choice(k, size=movers.size, p=pop)
        same = np.flatnonzero(pick == today[movers])
        while same.size:  # a new app: draw again (from the same popularity) until it differs from the current one
            pick[same] = gen.choice(k, size=same.size, p=pop)
            same = same[pick[same] == today[movers[same]]]
        today[movers] = pick
        out[:, r] = today
    return out


def demo_telemetry(out: TextIO | None = None, *, n: int = 100_000, rounds: int = 30, k: int = 8,
                   epsilon_permanent: float = 2.0, epsilon_report: float = 0.5, change: float = 0.10,
                   rng: Any = None) -> Any:
    """A daily collection from the same devices over many rounds, with memoized responses.

    This is ``ldpnum demo telemetry``.

    ``n`` devices (:func:`telemetry_population`: each day's most used app among ``k``, 10% of devices switching
    each day) report every day through :class:`~ldpnum.LGRR` with their own :class:`~ldpnum.ClientKeys`: a
    permanent response per app (ε∞ = ``epsilon_permanent``) memoized from the key, then a fresh instantaneous
    response (ε1 = ``epsilon_report`` per report). Each day is one round (``round=`` in the reports' spec,
    estimated on its own); a :class:`~ldpnum.PrivacyLedger` charges each device per memoized app
    (:meth:`~ldpnum.PrivacyLedger.record_longitudinal`). Prints per round the true and estimated share of the most
    popular app (with a 95% interval) and the ε spent so far per device under memoization (median and largest)
    against naive repeated collection (ε1 per report, the same for every device). Returns the ledger.
    """
    import pandas as pd

    import ldpnum as ldp

    out = sys.stdout if out is None else out
    values = telemetry_population(n, rounds, k, change)
    m = ldp.LGRR(epsilon_permanent=epsilon_permanent, epsilon_report=epsilon_report, k=k)
    keys = ldp.ClientKeys.generate(n, rng=None if rng is None else child_rng(rng, 0))
    ledger = ldp.PrivacyLedger()
    mode = "secure randomness and keys" if rng is None else f"a seeded simulation, rng={rng}"
    print(f"Telemetry: {n:,} devices report their most used app (k = {k}) every day for {rounds} days; each day "
          f"{change:.0%} of devices switch apps ({mode})", file=out)
    print(f"{m!r}: each report is {epsilon_report:g}-LDP; all reports about one app are {epsilon_permanent:g}-LDP "
          "(memoized from each device's key)", file=out)
    header = (f"{'day':>4} {'true app 0':>11} {'estimate':>9} {'95% interval':>17}   {'eps/device memoized':>19} "
              f"{'(max)':>6} {'naive':>6}")
    print(header, file=out)
    t0 = time.perf_counter()
    for r in range(rounds):
        day = pd.Series(values[:, r], name="app")
        reports = day.ldp.privatize(m, keys=keys, round=r, ledger=ledger, label=f"day {r}",
                                    rng=None if rng is None else child_rng(rng, 1, r))
        est = reports.ldp.estimate_frequencies()
        lo, hi = est.confidence_interval(0.95) if hasattr(est, "confidence_interval") else (np.nan, np.nan)
        totals = ledger.totals()
        print(f"{r:>4} {np.mean(values[:, r] == 0):>11.4f} {est.frequencies[0]:>9.4f} "
              f"[{float(np.atleast_1d(lo)[0]):>7.4f}, {float(np.atleast_1d(hi)[0]):>7.4f}]   "
              f"{float(totals.median()):>19.2f} {float(totals.max()):>6.2f} {(r + 1) * epsilon_report:>6.2f}",
              file=out)
    elapsed = time.perf_counter() - t0
    distinct = np.array([len(np.unique(row)) for row in values])
    print(f"after {rounds} days: a device held {np.median(distinct):.0f} distinct app(s) (median; max "
          f"{distinct.max()}); memoization charged it at most min(eps_inf, reports x eps_1) per app: median "
          f"{float(ledger.totals().median()):.2f}, against {rounds * epsilon_report:g} for naive daily collection. "
          f"Time: {elapsed:.1f} s for {rounds} rounds ({n * rounds / elapsed:,.0f} reports/s with the ledger).",
          file=out)
    return ledger
