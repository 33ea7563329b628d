"""DistributionEstimate: the piecewise-uniform model, its queries, provenance, immutability and validation."""

import dataclasses
import doctest
import pickle
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate

import ldpnum as ldp
import ldpnum._results
from ldpnum import DistributionEstimate


def random_estimate(seed=3, d=20, lo=-5.0, hi=15.0, zero_bins=(0, 4, 5, 19)):
    """An irregular estimate: random unequal bins, some empty (flat CDF parts), including both ends."""
    rng = np.random.default_rng(seed)
    inner = np.sort(rng.uniform(lo, hi, d - 1))
    edges = np.concatenate(([lo], inner, [hi]))
    p = rng.uniform(0.1, 1.0, d)
    p[list(zero_bins)] = 0.0
    return DistributionEstimate(edges, p / p.sum())


# -- hand-computed cases -----------------------------------------------------------------------------------

def test_uniform():
    d = DistributionEstimate(np.linspace(0, 1, 5), np.full(4, 0.25))
    x = np.array([-1.0, 0.0, 0.1, 0.25, 0.6, 1.0, 2.0])
    np.testing.assert_allclose(d.pdf, 1.0)
    np.testing.assert_allclose(d.cdf(x), np.clip(x, 0, 1), atol=1e-15)
    q = np.linspace(0, 1, 11)
    np.testing.assert_allclose(d.quantile(q), q, atol=1e-15)
    assert d.mean == pytest.approx(0.5, abs=1e-15)
    assert d.var == pytest.approx(1 / 12, rel=1e-14)
    assert d.range(0.2, 0.7) == pytest.approx(0.5, abs=1e-15)
    assert d.bounds == (0.0, 1.0) and d.n_bins == 4


def test_point_mass_in_one_bin():
    d = DistributionEstimate([0, 1, 2, 3, 4], [0, 0, 1, 0])
    np.testing.assert_array_equal(d.pdf, [0, 0, 1, 0])
    np.testing.assert_array_equal(d.cdf([0, 1.5, 2, 2.25, 3, 3.5, 9]), [0, 0, 0, 0.25, 1, 1, 1])
    # Flat parts: the quantile is the left end of the flat part.
    assert d.quantile(0) == 0.0
    assert d.quantile(1) == 3.0
    assert d.quantile(0.5) == 2.5
    assert d.quantile(1e-12) == pytest.approx(2.0, abs=1e-11)
    assert d.mean == 2.5
    assert d.var == pytest.approx(1 / 12, rel=1e-14)
    assert d.range(0, 2) == 0.0 and d.range(2, 3) == 1.0 and d.range(2.5, 10) == 0.5
    np.testing.assert_array_equal(d.pdf_at([1.99, 2.0, 2.5, 3.0, 3.5]), [0, 1, 1, 0, 0])


def test_two_unequal_bins_exact():
    d = DistributionEstimate([0, 1, 3], [0.25, 0.75])
    np.testing.assert_allclose(d.pdf, [0.25, 0.375])
    assert d.cdf(2.0) == pytest.approx(0.25 + 0.75 * 0.5)
    assert d.cdf(0.5) == pytest.approx(0.125)
    assert d.quantile(0.625) == pytest.approx(2.0)
    mean = Fraction(1, 4) * Fraction(1, 2) + Fraction(3, 4) * 2
    second = Fraction(1, 4) * Fraction(1, 3) + Fraction(3, 4) * Fraction(27 - 1, 3 * 2)  # E[X^2] per bin
    assert d.mean == pytest.approx(float(mean), rel=1e-15)
    assert d.var == pytest.approx(float(second - mean**2), rel=1e-14)
    assert d.std == pytest.approx(float(second - mean**2) ** 0.5)
    # The high bound belongs to the last bin (as numpy.histogram), 0 outside.
    np.testing.assert_array_equal(d.pdf_at([-0.1, 0, 0.99, 1, 3, 3.01]), [0, 0.25, 0.25, 0.375, 0.375, 0])
    assert np.isnan(d.pdf_at(np.nan)) and np.isnan(d.cdf(np.nan))


# -- consistency between the queries ------------------------------------------------------------------------

def test_cdf_and_quantile_are_inverse():
    d = random_estimate()
    q = np.linspace(0, 1, 2001)
    np.testing.assert_allclose(d.cdf(d.quantile(q)), q, atol=1e-12)
    x = np.random.default_rng(1).uniform(*d.bounds, 5000)
    pos = d.pdf_at(x) > 0
    np.testing.assert_allclose(d.quantile(d.cdf(x[pos])), x[pos], atol=1e-9)
    # The quantile function is non-decreasing, and Q(q) is the smallest x with F(x) >= q.
    assert np.all(np.diff(d.quantile(q)) >= 0)
    xq = d.quantile(q[1:])
    assert np.all(d.cdf(xq - 1e-9) < q[1:] + 1e-12)


def test_quantile_flat_part_left_end():
    d = random_estimate()
    e, cum = d.bin_edges, d._cum
    # bins 4 and 5 are empty: F is flat on [e4, e6]; its level's quantile is e4, the left end.
    assert cum[4] == cum[5] == cum[6]
    assert d.quantile(cum[5]) == pytest.approx(e[4], abs=1e-12)
    # bin 0 empty: quantile(0) is the low bound; bin 19 empty: quantile(1) is the left end of it.
    assert d.quantile(0.0) == e[0]
    assert d.quantile(1.0) == e[19]


def test_vectorisation_and_broadcasting():
    d = random_estimate()
    x = np.random.default_rng(2).uniform(-8, 18, (3, 4, 5))
    for f in (d.cdf, d.pdf_at):
        out = f(x)
        assert out.shape == x.shape
        np.testing.assert_array_equal(out.ravel(), [f(float(v)) for v in x.ravel()])
        assert isinstance(f(1.0), float) and isinstance(f(np.float32(1.0)), float)
    q = np.random.default_rng(3).random((2, 7))
    assert d.quantile(q).shape == (2, 7)
    np.testing.assert_array_equal(d.quantile(q).ravel(), [d.quantile(float(v)) for v in q.ravel()])
    assert isinstance(d.quantile(0.5), float)
    assert d.quantile([0.5]).shape == (1,)
    lo = np.array([[-6.0], [0.0], [3.0]])
    hi = np.array([3.0, 4.0, 9.0, 20.0])
    r = d.range(lo, hi)
    assert r.shape == (3, 4)
    np.testing.assert_allclose(r, d.cdf(hi) - d.cdf(lo), atol=1e-15)
    assert isinstance(d.range(0, 1), float)
    assert d.cdf([]).shape == (0,)


def test_mean_and_var_against_numerical_integration():
    d = random_estimate()
    lo, hi = d.bounds
    pts = list(d.bin_edges[1:-1])
    mean = integrate.quad(lambda x: x * d.pdf_at(x), lo, hi, points=pts, limit=200, epsabs=1e-13)[0]
    var = integrate.quad(lambda x: (x - mean) ** 2 * d.pdf_at(x), lo, hi, points=pts, limit=200,
                         epsabs=1e-13)[0]
    assert d.mean == pytest.approx(mean, rel=1e-10)
    assert d.var == pytest.approx(var, rel=1e-10)
    total = integrate.quad(d.pdf_at, lo, hi, points=pts, limit=200)[0]
    assert total == pytest.approx(1.0, rel=1e-12)


def test_range_equals_cdf_difference():
    d = random_estimate()
    rng = np.random.default_rng(4)
    a = rng.uniform(-10, 20, 1000)
    b = a + rng.uniform(0, 10, 1000)
    np.testing.assert_allclose(d.range(a, b), d.cdf(b) - d.cdf(a), atol=1e-15)
    assert d.range(-np.inf, np.inf) == 1.0
    assert d.range(*d.bounds) == pytest.approx(1.0, abs=1e-15)
    assert d.range(3.0, 3.0) == 0.0


def test_range_rejects_reversed_and_nan():
    d = random_estimate()
    with pytest.raises(ValueError, match=r"2 query\(ies\) have lo > hi, first at index 1"):
        d.range([0, 5, 6], [1, 4, 5])
    with pytest.raises(ValueError, match="lo > hi, first at index 0"):
        d.range(2, 1)
    with pytest.raises(ValueError, match="hi must not be NaN"):
        d.range(0, np.nan)
    with pytest.raises(ValueError, match="broadcast"):
        d.range([0, 1], [1, 2, 3])
    with pytest.raises(TypeError):
        d.range("a", 1)


# -- sampling -----------------------------------------------------------------------------------------------

def test_sample_moments_within_closed_form_tolerance():
    d = random_estimate()
    n = 200_000
    x = d.sample(n, rng=12345)
    lo, hi = d.bounds
    pts = list(d.bin_edges[1:-1])
    mu4 = integrate.quad(lambda t: (t - d.mean) ** 4 * d.pdf_at(t), lo, hi, points=pts, limit=200)[0]
    z_mean = (x.mean() - d.mean) / np.sqrt(d.var / n)
    z_var = (x.var() - d.var) / np.sqrt((mu4 - d.var**2) / n)
    assert abs(z_mean) < 4.5 and abs(z_var) < 4.5
    # Each bin's share against its probability (binomial z), and nothing in empty bins.
    counts, _ = np.histogram(x, bins=d.bin_edges)
    p = d.probabilities
    sd = np.sqrt(n * p * (1 - p))
    pos = p > 0
    assert np.all(np.abs(counts[pos] - n * p[pos]) < 4.5 * sd[pos])
    assert np.all(counts[~pos] == 0)


def test_sample_rng_convention():
    d = random_estimate()
    state = np.random.get_state()[1].copy()
    a = d.sample(100, rng=7)
    np.testing.assert_array_equal(a, d.sample(100, rng=7))
    np.testing.assert_array_equal(a, d.sample(100, rng=np.random.default_rng(7)))
    np.testing.assert_array_equal(d.sample(5, rng=np.random.SeedSequence(1)),
                                  d.sample(5, rng=np.random.SeedSequence(1)))
    assert not np.array_equal(d.sample(100, rng=None), d.sample(100, rng=None))
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # global state untouched
    assert isinstance(d.sample(rng=0), float)
    assert d.sample((3, 2), rng=0).shape == (3, 2)
    with pytest.raises(TypeError, match="bool"):
        d.sample(3, rng=True)
    with pytest.raises(TypeError):
        d.sample(3, rng="seed")


# -- conversions, display ------------------------------------------------------------------------------------

def test_to_series():
    pd = pytest.importorskip("pandas")
    d = DistributionEstimate([0, 1, 3, 6], [0.2, 0.3, 0.5])
    s = d.to_series()
    assert isinstance(s, pd.Series) and s.name == "probability"
    assert isinstance(s.index, pd.IntervalIndex) and s.index.closed == "left"
    np.testing.assert_array_equal(s.index.left, [0, 1, 3])
    np.testing.assert_array_equal(s.index.right, [1, 3, 6])
    np.testing.assert_array_equal(s.to_numpy(), d.probabilities)
    assert s.loc[2.0] == 0.3
    s.iloc[0] = 0.9  # the series is a copy
    assert d.probabilities[0] == 0.2


def test_repr_and_str_show_provenance():
    spec = ldp.Spec("square_wave", 1.0, 1024)
    d = DistributionEstimate(np.linspace(0, 1440, 9), np.full(8, 1 / 8), spec=spec, n_reports=100_000,
                             method="ems", n_iter=57, converged=True, log_likelihood=[-3.0, -2.5])
    for text in (repr(d), str(d)):
        for part in ("8", "1440", "720", "ems", "57", "converged=True", "epsilon=1", "100000", "square_wave"):
            assert part in text, (part, text)
    assert repr(d).startswith("DistributionEstimate(n_bins=8")
    assert "quartiles" in str(d)


def _pyplot():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def test_plot_pdf_and_cdf(monkeypatch):
    plt = _pyplot()
    from matplotlib.axes import Axes

    monkeypatch.setattr(plt, "show", lambda *a, **k: pytest.fail("plot must not call show()"))
    d = random_estimate()
    values = d.sample(500, rng=0)
    before = set(plt.get_fignums())
    ax = d.plot()
    try:
        assert isinstance(ax, Axes) and len(ax.patches) == 1
        assert ax.get_ylabel() == "density" and ax.get_xlabel()
        assert set(plt.get_fignums()) - before  # a new figure only because ax was None
    finally:
        plt.close(ax.figure)
    fig, ax = plt.subplots()
    try:
        n_figs = len(plt.get_fignums())
        assert d.plot(ax, true=values) is ax
        assert len(ax.patches) == 2 and ax.get_legend() is not None
        assert d.plot(ax, true=d, kind="cdf") is ax
        assert len(ax.lines) == 2 and ax.get_ylabel() == "cumulative probability"
        assert d.plot(ax, true=np.concatenate([values, d.sample(30_000, rng=1)]), kind="cdf") is ax
        assert d.plot(ax, true=d, kind="pdf") is ax
        assert len(plt.get_fignums()) == n_figs  # no new figure when ax is given
        line = d.plot(ax, kind="cdf").lines[-1]
        np.testing.assert_array_equal(line.get_xdata(), d.bin_edges)
    finally:
        plt.close(fig)


def test_plot_rejects_bad_arguments():
    plt = _pyplot()
    d = random_estimate()
    fig, ax = plt.subplots()
    try:
        with pytest.raises(ValueError, match="kind"):
            d.plot(ax, kind="hist")
        with pytest.raises(ValueError, match="finite"):
            d.plot(ax, true=[1.0, np.nan])
        with pytest.raises(TypeError):
            d.plot(ax, true=["a", "b"])
    finally:
        plt.close(fig)


# -- immutability, equality, pickling ------------------------------------------------------------------------

def test_immutable_and_not_aliased():
    edges, p = np.linspace(0, 1, 4), np.array([0.2, 0.3, 0.5])
    d = DistributionEstimate(edges, p)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.method = "em"
    for arr in (d.bin_edges, d.probabilities, d.pdf):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 1.0
    edges[1], p[0] = 0.01, 0.9
    assert d.bin_edges[1] == pytest.approx(1 / 3) and d.probabilities[0] == 0.2
    assert d.bin_edges.dtype == np.float64 and d.probabilities.dtype == np.float64


def test_equality_replace_and_pickle():
    d = DistributionEstimate([0, 1, 2], [0.5, 0.5], method="em", n_iter=3, log_likelihood=(-2.0, -1.5, -1.4))
    assert d == DistributionEstimate([0.0, 1.0, 2.0], [0.5, 0.5], method="em", n_iter=3,
                                     log_likelihood=[-2.0, -1.5, -1.4])
    assert d != DistributionEstimate([0, 1, 2], [0.5, 0.5])
    assert d != DistributionEstimate([0, 1, 3], [0.5, 0.5], method="em", n_iter=3,
                                     log_likelihood=(-2.0, -1.5, -1.4))
    e = dataclasses.replace(d, converged=False)
    assert e.converged is False and e.n_iter == 3
    back = pickle.loads(pickle.dumps(d))
    assert back == d and not back.probabilities.flags.writeable and not back._cum.flags.writeable


def test_probabilities_renormalised_and_cdf_ends_exactly():
    p = np.full(7, 1 / 7)
    p[0] += 1e-10
    d = DistributionEstimate(np.linspace(0, 7, 8), p)
    assert d.probabilities.sum() == pytest.approx(1.0, abs=1e-15)
    assert d._cum[0] == 0.0 and d._cum[-1] == 1.0
    assert np.all(np.diff(d._cum) >= 0)
    assert d.cdf(7.0) == 1.0 and d.quantile(1.0) == 7.0


def test_provenance_fields():
    spec = ldp.Spec("square_wave", 2.0, 1024)
    d = DistributionEstimate([0, 1], [1.0], spec=spec, n_reports=np.int64(10), n_iter=np.int32(4),
                             converged=np.bool_(False), log_likelihood=np.array([-1.0, -0.5]))
    assert d.epsilon == 2.0 and d.n_reports == 10 and type(d.n_reports) is int
    assert d.n_iter == 4 and type(d.n_iter) is int and d.converged is False
    assert d.log_likelihood == (-1.0, -0.5) and all(type(v) is float for v in d.log_likelihood)
    plain = DistributionEstimate([0, 1], [1.0])
    assert plain.spec is None and plain.epsilon is None and plain.n_reports is None
    assert plain.method == "given" and plain.n_iter == 0 and plain.converged and plain.log_likelihood == ()


# -- validation -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("edges, probs, exc, match", [
    ([0, 1, 1, 2], [0.3, 0.3, 0.4], ValueError, r"increasing; 1 step\(s\) are not, first from index 1"),
    ([0, 2, 1], [0.5, 0.5], ValueError, "strictly increasing"),
    ([0], [], ValueError, "at least 2 edges"),
    ([[0, 1], [1, 2]], [1.0], ValueError, "one-dimensional"),
    ([0, np.nan, 2], [0.5, 0.5], ValueError, "bin_edges must be finite; 1 edge"),
    ([0, 1, np.inf], [0.5, 0.5], ValueError, "bin_edges must be finite"),
    (["a", "b"], [1.0], TypeError, "bin_edges must be real numbers"),
    ([0, 1, 2], [1.0], ValueError, "one entry per bin: 2 for 3 bin_edges; got 1"),
    ([0, 1, 2], [[0.5, 0.5]], ValueError, "probabilities must be one-dimensional"),
    ([0, 1, 2, 3], [0.6, -0.1, 0.5], ValueError, "non-negative; 1 are negative, first at index 1"),
    ([0, 1, 2], [0.5, np.nan], ValueError, "probabilities must be finite; 1 are not, first at index 1"),
    ([0, 1, 2], [0.5, 0.6], ValueError, "sum to 1"),
    ([0, 1, 2], [0.0, 0.0], ValueError, "sum to 1"),
    ([0, 1, 2], [True, False], TypeError, "probabilities must be real numbers"),
    ([0, 1, 2], None, TypeError, "probabilities"),
    ([0, 1, 2], "ab", TypeError, "probabilities"),
])
def test_constructor_rejects(edges, probs, exc, match):
    with pytest.raises(exc, match=match):
        DistributionEstimate(edges, probs)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"spec": "square_wave"}, TypeError, "spec must be an ldpnum Spec"),
    ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
    ({"epsilon": True}, TypeError, "epsilon"),
    ({"epsilon": -1.0}, ValueError, "epsilon must be a finite number > 0; got -1.0"),
    ({"epsilon": np.nan}, ValueError, "epsilon must be a finite number > 0; got nan"),
    ({"spec": ldp.Spec("square_wave", 1.0, 8), "epsilon": 2.0}, ValueError, "disagrees with the spec"),
    ({"n_reports": 1.5}, TypeError, "n_reports"),
    ({"n_reports": -1}, ValueError, "n_reports must be >= 0; got -1"),
    ({"method": None}, TypeError, "method must be a str"),
    ({"n_iter": 2.0}, TypeError, "n_iter must be an int"),
    ({"n_iter": -1}, ValueError, "n_iter must be >= 0; got -1"),
    ({"converged": 1}, TypeError, "converged must be a bool"),
    ({"log_likelihood": 3.0}, TypeError, "log_likelihood"),
    ({"log_likelihood": [1.0, np.nan]}, ValueError, "NaN; 1 entries do, first at index 1"),
    ({"log_likelihood": [[1.0]]}, ValueError, "one-dimensional"),
])
def test_provenance_rejects(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        DistributionEstimate([0, 1, 2], [0.5, 0.5], **kwargs)
    if not {"method", "n_iter", "converged", "log_likelihood"} & set(kwargs):
        with pytest.raises(exc, match=match):  # the range tree checks its provenance the same way
            ldp.RangeEstimate([[1.0], [0.5, 0.5]], bounds=(0, 2), branching=2, **kwargs)


@pytest.mark.parametrize("q, exc, match", [
    (1.5, ValueError, r"q must be in \[0, 1\]; 1 value\(s\) are not, first at index 0"),
    (-0.1, ValueError, r"\[0, 1\]"),
    (np.nan, ValueError, r"\[0, 1\]"),
    ([0.5, 0.2, 2.0, -1.0], ValueError, "2 value\\(s\\) are not, first at index 2"),
    ([[0.5, 0.2], [0.1, 7.0]], ValueError, r"first at index \(1, 1\)"),
    ("0.5", TypeError, "q must be"),
    (None, TypeError, "q must be"),
    ([0.5, None], TypeError, "q must be real numbers"),
    (True, TypeError, "q must be real numbers"),
    (1 + 0j, TypeError, "q must be real numbers"),
])
def test_quantile_rejects(q, exc, match):
    d = random_estimate()
    with pytest.raises(exc, match=match):
        d.quantile(q)


def test_cdf_rejects_non_numeric():
    d = random_estimate()
    with pytest.raises(TypeError, match="x must be"):
        d.cdf("1.0")
    with pytest.raises(TypeError, match="x must be"):
        d.pdf_at(np.array(["a"]))


def test_accepts_pandas_inputs():
    pd = pytest.importorskip("pandas")
    d = DistributionEstimate(pd.Series([0.0, 1.0, 2.0]), pd.Series([0.5, 0.5]))
    np.testing.assert_array_equal(d.cdf(pd.Series([0.5, 1.5])), [0.25, 0.75])
    out = d.cdf(pd.Series([0.5, None], dtype="Float64"))
    assert out[0] == 0.25 and np.isnan(out[1])


# -- documentation examples ---------------------------------------------------------------------------------

@pytest.mark.parametrize("obj", [ldpnum._results.DistributionEstimate, ldp.metrics],
                         ids=["DistributionEstimate", "metrics"])
def test_docstring_examples(obj):
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, getattr(obj, "__name__", "obj"), globs={})
    assert sum(len(t.examples) for t in tests) > 5
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0


def test_thaw_is_the_one_copy_of_a_frozen_field_as_plain_values():
    # heavy results (provenance) and the command line (--json) thaw frozen fields with this one function;
    # it recurses into lists as well as tuples (the results' copy did not) and keeps keys (the CLI's str()ed them)
    import types

    from ldpnum._results import thaw

    frozen = types.MappingProxyType({"a": (1, [2, (3,)]), 7: types.MappingProxyType({"b": ()})})
    assert thaw(frozen) == {"a": [1, [2, [3]]], 7: {"b": []}}
    assert type(thaw(frozen)[7]) is dict and thaw("text") == "text"


def test_mean_estimate_is_frozen():
    m = ldp.Duchi(1.0, (0, 1))
    est = m.estimate_mean(m.privatize(np.full(1000, 0.5), rng=0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.value = 0.0
    assert est.epsilon == 1.0 and est.n_reports == 1000 and est.spec == m.spec
    assert "duchi" in str(est)


def test_frequency_estimate_object():
    g = ldp.GRR(1.0, 4)
    x = np.random.default_rng(0).integers(0, 4, 10_000)
    est = g.estimate_frequencies(g.privatize(x, rng=1))
    lo, hi = est.confidence_interval(0.95)
    assert np.all(lo < est.frequencies) and np.all(est.frequencies < hi)
    s = est.to_series()
    assert list(s.index) == [0, 1, 2, 3] and s.name == "frequency"
    assert est.counts.sum() == pytest.approx(10_000)
    assert not est.frequencies.flags.writeable
    assert est.spec == g.spec and est.k == 4


def test_frequency_estimate_of_chosen_categories_is_indexed_by_them():
    """An estimate of some categories only (candidates) says which: entry i is categories[i] everywhere."""
    from ldpnum.spec import Spec

    spec = Spec("grr", 1.0, 10)
    est = ldp.FrequencyEstimate(counts=np.array([5.0, 7.0]), frequencies=np.array([0.05, 0.07]),
                                standard_errors=np.array([0.01, 0.01]), n_reports=100, epsilon=1.0, spec=spec,
                                categories=np.array([7, 2]))
    assert est.to_series().to_dict() == {7: 0.05, 2: 0.07} and not est.categories.flags.writeable
    assert "<th>7</th>" in est._repr_html_() and "categories=[7, 2]" in repr(est)
    assert est != dataclasses.replace(est, categories=None)
    assert pickle.loads(pickle.dumps(est)) == est
    with pytest.raises(ValueError, match="categories has shape"):
        dataclasses.replace(est, categories=np.array([1, 2, 3]))


def test_frequency_estimate_to_frame_is_indexed_by_its_labels():
    """to_frame: frequency, standard_error and the level interval per category, labels as the index."""
    from ldpnum.spec import Spec

    est = ldp.FrequencyEstimate(counts=np.array([40.0, 60.0]), frequencies=np.array([0.4, 0.6]),
                                standard_errors=np.array([0.05, 0.05]), n_reports=100, epsilon=1.0,
                                spec=Spec("grr", 1.0, 2), categories=np.array(["tea", "coffee"], dtype=object))
    table = est.to_frame()
    assert table.columns.tolist() == ["frequency", "standard_error", "low", "high"]
    assert table.index.tolist() == ["tea", "coffee"] and table.index.name == "category"
    z = 1.959963984540054
    np.testing.assert_allclose(table["low"], [0.4 - z * 0.05, 0.6 - z * 0.05])
    np.testing.assert_allclose(table.loc["coffee", "high"], 0.6 + z * 0.05)
    narrow = est.to_frame(level=0.5)
    assert (narrow["high"] - narrow["low"] < table["high"] - table["low"]).all()
    assert dataclasses.replace(est, categories=None).to_frame().index.tolist() == [0, 1]
    with pytest.raises(ValueError, match="level"):
        est.to_frame(level=1.5)
    # MLE estimates give their profile-likelihood intervals
    grr = ldp.GRR(1.0, categories=["a", "b", "c"])
    mle = grr.estimate_frequencies(ldp.Aggregate([2, 40, 58], grr.spec), method="mle")
    lo, hi = mle.confidence_interval(0.9)
    frame = mle.to_frame(0.9)
    np.testing.assert_array_equal(frame["low"], lo)
    np.testing.assert_array_equal(frame["high"], hi)
    assert frame.index.tolist() == ["a", "b", "c"]


def test_distribution_estimate_discrete_queries():
    d = DistributionEstimate(np.arange(5) - 0.5, [0.1, 0.2, 0.3, 0.4], discrete=True)
    assert d.range(1, 2) == pytest.approx(0.5) and d.range(1.2, 1.8) == 0
    np.testing.assert_allclose(d.cdf([-1, 0, 0.5, 1, 3, np.nan]), [0, 0.1, 0.1, 0.3, 1, np.nan])
    assert d.quantile([0, 0.1, 0.15, 0.3, 0.31, 1]).tolist() == [0, 0, 1, 1, 2, 3]
    assert d.mean == pytest.approx(2.0)
    assert d.var == pytest.approx(1.0)  # sum p (k - 2)^2 = 0.4 + 0.2 + 0 + 0.4, no within-bin term
    s = d.sample(10_000, rng=0)
    assert set(np.unique(s)) <= {0.0, 1.0, 2.0, 3.0}
    assert abs(np.mean(s == 3) - 0.4) < 4 * np.sqrt(0.24 / 10_000)
    assert pickle.loads(pickle.dumps(d)) == d and d != DistributionEstimate(np.arange(5) - 0.5, [0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="consecutive integers"):
        DistributionEstimate(np.arange(5), [0.1, 0.2, 0.3, 0.4], discrete=True)
    with pytest.raises(ValueError, match="consecutive integers"):
        DistributionEstimate([-0.5, 0.5, 2.5], [0.5, 0.5], discrete=True)
    reps = np.array([[0.1, 0.2, 0.3, 0.4], [0.3, 0.2, 0.3, 0.2], [0.1, 0.1, 0.4, 0.4]] * 10)
    b = d._with_replicates(reps)
    q = b.quantile(0.5, ci=0.9)
    assert all(isinstance(v, int) for v in q) and q.low <= q.estimate <= q.high


@pytest.mark.parametrize("dof,exc,match", [
    (2.5, TypeError, "degrees_of_freedom must be an integer or None; got float 2.5"),
    ("3", TypeError, "degrees_of_freedom must be an integer or None; got str '3'"),
    (0, ValueError, "degrees_of_freedom must be >= 1; got 0"),
])
def test_mean_estimate_degrees_of_freedom_are_checked_by_kind_then_value(dof, exc, match):
    # a wrong kind was a ValueError ("must be None or a positive integer"); R5: a TypeError
    est = ldp.Duchi(1.0, (0, 1)).estimate_mean(ldp.Duchi(1.0, (0, 1)).privatize(np.full(100, 0.5), rng=0))
    with pytest.raises(exc, match=match):
        dataclasses.replace(est, degrees_of_freedom=dof)


def test_mean_estimate_method_and_likelihood_agree():
    rr = ldp.RandomizedResponse(1.0)
    agg = ldp.Aggregate([15, 5], rr.spec)
    unb, mle = rr.estimate_mean(agg), rr.estimate_mean(agg, method="mle")
    with pytest.raises(ValueError, match="method='mle' needs a likelihood"):
        dataclasses.replace(mle, likelihood=None)
    with pytest.raises(ValueError, match="method='unbiased' needs no likelihood"):
        dataclasses.replace(unb, likelihood=mle.likelihood)
    with pytest.raises(ValueError, match="method must be one of 'unbiased', 'mle'; got 'ml'"):
        dataclasses.replace(mle, method="ml")
    assert mle != dataclasses.replace(mle, likelihood=dataclasses.replace(mle.likelihood, ones=4))
    assert pickle.loads(pickle.dumps(mle)) == mle
    assert "method='mle'" in repr(mle) and "method" not in repr(unb) and "method='mle'" in str(mle)
    assert "likelihood ratio" in mle._repr_html_() and "maximum-likelihood" in mle._repr_html_()
    assert "likelihood ratio" not in unb._repr_html_()
