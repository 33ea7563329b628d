"""Plots: every function returns its Axes and draws the expected artists (Agg backend, no display)."""

import sys

import numpy as np
import pytest

import ldpnum as ldp

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    x = np.random.default_rng(0).beta(5, 2, 5000)
    sw = ldp.SquareWave(epsilon=2.0, bounds=(0, 1))
    hh = ldp.HierarchicalHistogram(epsilon=2.0, bounds=(0, 1), n_leaves=32)
    return x, sw.estimate_distribution(sw.privatize(x, rng=1), n_bins=64), hh.estimate_ranges(hh.privatize(x, rng=2))


def test_compare_cdf_and_pdf_artists(data):
    x, dist, ranges = data
    fig, ax = plt.subplots()
    assert ldp.plot.compare(x, dist, ranges, ax=ax) is ax
    assert len(ax.lines) == 3 and len(ax.patches) == 0
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["true (empirical CDF)", "square_wave (ε = 2)", "hierarchical_histogram (ε = 2)"]
    fig, ax = plt.subplots()
    ldp.plot.compare(x, dist, ranges, ax=ax, kind="pdf", labels=["SW", "HH"])
    assert len(ax.patches) == 3 and len(ax.lines) == 0
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["true (histogram)", "SW", "HH"]


def test_compare_new_axes_and_large_truth(data):
    x, dist, _ = data
    big = np.random.default_rng(1).beta(5, 2, 50_000)
    ax = ldp.plot.compare(big, dist)
    assert len(ax.lines) == 2 and len(ax.lines[0].get_xdata()) == 4097


def test_compare_bad_input(data):
    x, dist, ranges = data
    with pytest.raises(ValueError, match="at least one estimate"):
        ldp.plot.compare(x)
    with pytest.raises(TypeError, match=r"estimates\[0\]"):
        ldp.plot.compare(x, np.zeros(3))
    with pytest.raises(ValueError, match="kind"):
        ldp.plot.compare(x, dist, kind="hist")
    with pytest.raises(ValueError, match="one label per estimate"):
        ldp.plot.compare(x, dist, labels=["a", "b"])
    with pytest.raises(ValueError, match="finite; 1 value"):
        ldp.plot.compare(np.array([0.1, np.nan]), dist)
    other = ldp.DistributionEstimate([0, 2], [1.0])
    with pytest.raises(ValueError, match="share bounds"):
        ldp.plot.compare(x, dist, other)


def test_range_estimate_plot_kinds(data):
    x, _, ranges = data
    fig, ax = plt.subplots()
    assert ranges.plot(ax) is ax
    assert len(ax.patches) == 1 and ax.get_ylabel() == "density"
    fig, ax = plt.subplots()
    ranges.plot(ax, true=x, kind="pdf")
    assert len(ax.patches) == 2 and ax.get_legend() is not None
    fig, ax = plt.subplots()
    ranges.plot(ax, true=x, kind="cdf")
    assert len(ax.lines) == 2 and ax.get_ylabel() == "cumulative probability"
    np.testing.assert_allclose(ax.lines[1].get_ydata()[[0, -1]], [0.0, 1.0], atol=1e-9)
    with pytest.raises(ValueError, match="kind"):
        ranges.plot(ax, kind="hist")


def test_distribution_estimate_plot_kinds(data):
    x, dist, _ = data
    fig, ax = plt.subplots()
    assert dist.plot(ax, true=x, kind="cdf") is ax
    assert len(ax.lines) == 2


@pytest.mark.parametrize("kind", ["pdf", "cdf"])
def test_estimates_draw_the_truth_as_compare_does(data, kind):
    """One drawing of the true values serves compare and both estimates' plot(true=...)."""
    x, dist, ranges = data
    big = np.random.default_rng(1).beta(5, 2, 50_000)
    for est in (dist, ranges):
        for truth in (x, big):
            fig, (a, b) = plt.subplots(1, 2)
            ldp.plot.compare(truth, est, ax=a, kind=kind)
            est.plot(b, true=truth, kind=kind)
            if kind == "cdf":
                np.testing.assert_array_equal(a.lines[0].get_xydata(), b.lines[0].get_xydata())
                np.testing.assert_array_equal(a.lines[1].get_xydata(), b.lines[1].get_xydata())
            else:
                for pa, pb in zip(a.patches, b.patches):
                    np.testing.assert_array_equal(pa.get_path().vertices, pb.get_path().vertices)
            assert b.get_legend().get_texts()[0].get_text() == a.get_legend().get_texts()[0].get_text()


def test_bad_truth_raises_before_a_figure_is_made(data):
    x, dist, ranges = data
    before = plt.get_fignums()
    for est in (dist, ranges):
        with pytest.raises(ValueError, match=r"true must be finite; 1 value\(s\) are not, first at index 1"):
            est.plot(true=[0.5, np.inf])
        with pytest.raises(ValueError, match="true must be a non-empty one-dimensional array"):
            est.plot(true=[])
        with pytest.raises(ValueError, match="kind"):
            est.plot(true=x, kind="hist")
    assert plt.get_fignums() == before


def test_plots_from_the_accessor(data):
    pd = pytest.importorskip("pandas")
    x, _, _ = data
    r = pd.Series(x, name="x").ldp.privatize(ldp.SquareWave(2.0, (0, 1)), rng=0)
    ax = ldp.plot.compare(x, r.ldp.estimate_distribution(), kind="cdf")
    assert len(ax.lines) == 2


def test_no_global_style_change_and_no_show(data, monkeypatch):
    x, dist, ranges = data
    before = dict(matplotlib.rcParams)
    monkeypatch.setattr(plt, "show", lambda *a, **k: pytest.fail("plots must not call show()"))
    ldp.plot.compare(x, dist, ranges, kind="pdf")
    ranges.plot(true=x, kind="cdf")
    assert dict(matplotlib.rcParams) == before


def test_importing_plot_does_not_import_matplotlib(fresh_imports):
    """A fresh interpreter's ``import ldpnum.plot`` (conftest's ``fresh_imports``)."""
    assert "matplotlib" not in fresh_imports["ldpnum.plot"]


@pytest.mark.parametrize("what", ["distribution", "ranges", "compare"])
def test_plot_without_matplotlib_says_how_to_install_it(data, monkeypatch, what):
    """matplotlib hidden (as on a machine without the ``plot`` extra): an ImportError naming the extra, not a
    bare ModuleNotFoundError from deep inside the plot."""
    x, dist, ranges = data
    for mod in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, mod, None)  # `import matplotlib...` now raises ImportError
    draw = {"distribution": lambda: dist.plot(), "ranges": lambda: ranges.plot(),
            "compare": lambda: ldp.plot.compare(x, dist)}[what]
    with pytest.raises(ImportError, match=r'plotting needs matplotlib.*pip install "ldpnum\[plot\]"') as info:
        draw()
    assert info.value.name == "matplotlib"


def test_a_band_with_few_replicates_is_drawn_at_the_level_they_support():
    """20 replicates cannot support a 95% band (39 are needed): the plot draws their 90% band and says so,
    instead of refusing to plot."""
    d = ldp.DistributionEstimate([0, 1, 2], [0.5, 0.5], replicates=np.column_stack(
        [np.linspace(0.3, 0.7, 20), 1 - np.linspace(0.3, 0.7, 20)]))
    ax = d.plot(kind="cdf")
    assert [c.get_label() for c in ax.collections] == ["90% band"]
