"""How results, reports, aggregates and specs show themselves: short reprs, notebook tables, axis labels."""

import pickle
import re

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import cli
from ldpnum._results import named

N = 20_000
BOUNDS = (0.0, 1440.0)
# A float printed with all its digits: what a short repr must not contain.
LONG_FLOAT = re.compile(r"\d\.\d{7,}")


@pytest.fixture(scope="module")
def sw():
    m = ldp.SquareWave(epsilon=1.0, bounds=BOUNDS)
    x = np.random.default_rng(0).uniform(*BOUNDS, N)
    return m, m.aggregate(m.privatize(x, rng=1))


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(3)
    return pd.DataFrame({"dep_time": rng.uniform(*BOUNDS, N), "carrier": rng.integers(0, 12, N)})


@pytest.fixture(scope="module")
def reports(frame):
    mechs = {"dep_time": ldp.SquareWave(epsilon=2.0, bounds=BOUNDS), "carrier": ldp.GRR(epsilon=2.0, k=12)}
    return frame.ldp.privatize(mechs, rng=4, strategy="one-column-per-row")


# -- reprs ---------------------------------------------------------------------------------------------------

def test_spec_repr_is_short_and_str_stays_exact():
    hh = ldp.HierarchicalHistogram(epsilon=1.0, bounds=BOUNDS, n_leaves=4096, branching=2)
    spec = hh.spec
    text = repr(spec)
    assert text.startswith("Spec('hierarchical_histogram', epsilon=1, n_cells=")
    assert "items)" in text  # the 13-level tuples are elided
    assert len(text) < 300, text
    sw = ldp.SquareWave(epsilon=1.0, bounds=BOUNDS).spec
    assert repr(sw) == "Spec('square_wave', epsilon=1, n_cells=1024, bandwidth=0.256083, bounds=(0, 1440))"
    assert str(sw.get("bandwidth")) in str(sw)  # str keeps every digit (error messages compare specs)


def test_reports_and_aggregate_reprs_name_the_mechanism_not_the_whole_spec(sw):
    m, agg = sw
    r = m.privatize(np.full(10, 700.0), rng=0)
    assert repr(r) == "Reports(n=10, mechanism='square_wave', epsilon=1, dtype=uint16)"
    assert repr(agg) == f"Aggregate(n_reports={N}, mechanism='square_wave', epsilon=1, n_cells=1024)"
    for text in (repr(r), repr(agg)):
        assert "bandwidth" not in text and not LONG_FLOAT.search(text)


def test_mean_estimate_repr_shows_value_error_n_mechanism_and_epsilon(sw):
    m, agg = sw
    est = m.estimate_mean(agg)
    text = repr(est)
    assert len(text) < 150, text
    assert "Spec" not in text and "bandwidth" not in text and not LONG_FLOAT.search(text)
    for part in (f"value={est.value:.6g}", f"standard_error={est.standard_error:.4g}", f"n_reports={N}",
                 "mechanism='square_wave'", "epsilon=1"):
        assert part in text, (part, text)
    assert "name='dep_time'" in repr(named(est, "dep_time"))


def test_frequency_estimate_repr_shows_frequencies_truncated_for_large_k():
    small = ldp.GRR(epsilon=2.0, k=4)
    est = small.estimate_frequencies(small.privatize(np.arange(4000) % 4, rng=0))
    text = repr(est)
    assert all(f"{f:.4f}".rstrip("0") in text for f in est.frequencies), text
    assert "..." not in text
    big = ldp.OUE(epsilon=2.0, k=1000)
    est = big.estimate_frequencies(big.privatize(np.arange(20_000) % 1000, rng=0))
    text = repr(est)
    assert "..." in text and len(text) < 300, text
    assert f"{est.frequencies[0]:.4f}".rstrip("0") in text and f"{est.frequencies[-1]:.4f}".rstrip("0") in text
    assert "k=1000" in text and "mechanism='oue'" in text


def test_distribution_and_range_reprs_are_one_short_line(sw):
    m, agg = sw
    d = named(m.estimate_distribution(agg), "dep_time")
    hh = ldp.HierarchicalHistogram(epsilon=1.0, bounds=BOUNDS)
    r = named(hh.estimate_ranges(hh.privatize(np.full(1000, 60.0), rng=0)), "dep_time")
    for text in (repr(d), repr(r)):
        assert "\n" not in text and len(text) < 250 and "name='dep_time'" in text, text
    assert f"mean={d.mean:.6g}" in repr(d)


# -- notebook tables -----------------------------------------------------------------------------------------

def _cells(html):
    return re.findall(r"<t[hd]>(.*?)</t[hd]>", html)


def test_result_objects_render_html_tables(sw):
    m, agg = sw
    mean = m.estimate_mean(agg)
    dist = m.estimate_distribution(agg)
    oue = ldp.OUE(epsilon=2.0, k=100)
    freq = oue.estimate_frequencies(oue.privatize(np.arange(5000) % 100, rng=0))
    hh = ldp.HierarchicalHistogram(epsilon=1.0, bounds=BOUNDS)
    rng_est = hh.estimate_ranges(hh.privatize(np.random.default_rng(0).uniform(*BOUNDS, 5000), rng=0))
    for est in (mean, dist, freq, rng_est):
        html = est._repr_html_()
        assert html.startswith("<table") and html.endswith("</table>"), html
        assert html.count("<tr>") == html.count("</tr>") > 3
    lo, hi = mean.confidence_interval(0.95)
    assert {f"{mean.value:.6g}", f"[{lo:.6g}, {hi:.6g}]", f"{N:,}", "square_wave"} <= set(_cells(mean._repr_html_()))
    q1, med, q3 = dist.quantile([0.25, 0.5, 0.75])
    assert {f"{dist.mean:.6g}", f"{q1:.6g}", f"{med:.6g}", f"{q3:.6g}"} <= set(_cells(dist._repr_html_()))
    cells = _cells(freq._repr_html_())
    assert "…" in cells and "0" in cells and "99" in cells and "50" not in cells  # first and last rows only
    assert f"{freq.frequencies[99]:.4g}" in cells
    assert f"{float(rng_est.quantile(0.5)):.6g}" in _cells(rng_est._repr_html_())


def test_html_escapes_the_column_name(sw):
    m, agg = sw
    html = named(m.estimate_mean(agg), "<b>&co")._repr_html_()
    assert "<b>&co" not in html and "&lt;b&gt;&amp;co" in html


# -- the column name as provenance ---------------------------------------------------------------------------

def test_name_does_not_change_equality_and_survives_pickling(sw):
    m, agg = sw
    for est in (m.estimate_mean(agg), m.estimate_distribution(agg, n_bins=32)):
        n = named(est, "dep_time")
        assert n == est and n.name == "dep_time" and est.name is None
        assert pickle.loads(pickle.dumps(n)).name == "dep_time"
    with pytest.raises(TypeError, match="name"):
        ldp.DistributionEstimate([0, 1], [1.0], name=3)


def test_accessor_results_carry_the_column_name(reports):
    r = reports["dep_time"].ldp
    assert r.estimate_mean().name == "dep_time"
    assert r.estimate_distribution(n_bins=32).name == "dep_time"
    assert reports["carrier"].ldp.estimate_frequencies().name == "carrier"
    assert reports["carrier"].ldp.estimate_frequencies().to_series().sum() == pytest.approx(1, abs=0.2)


def test_range_tree_name_passes_to_its_distribution():
    hh = ldp.HierarchicalHistogram(epsilon=1.0, bounds=BOUNDS, n_leaves=64)
    s = pd.Series(np.random.default_rng(0).uniform(*BOUNDS, 5000), name="arr_time")
    est = s.ldp.privatize(hh, rng=0).ldp.estimate_ranges(consistency="nonnegative")
    assert est.name == "arr_time" and est.to_distribution().name == "arr_time"


# -- plots -----------------------------------------------------------------------------------------------------

@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_plot_x_axis_is_the_column_name(reports, plt):
    est = reports["dep_time"].ldp.estimate_distribution(n_bins=32)
    for kind in ("pdf", "cdf"):
        assert est.plot(kind=kind).get_xlabel() == "dep_time"
    hh = ldp.HierarchicalHistogram(epsilon=1.0, bounds=BOUNDS, n_leaves=64)
    s = pd.Series(np.random.default_rng(0).uniform(*BOUNDS, 5000), name="arr_time")
    tree = s.ldp.privatize(hh, rng=0).ldp.estimate_ranges()
    assert tree.plot().get_xlabel() == "arr_time"
    # without a name, the axis says what it shows
    m = ldp.SquareWave(epsilon=1.0, bounds=BOUNDS)
    assert m.estimate_distribution(m.privatize(np.full(500, 60.0), rng=0), n_bins=16).plot().get_xlabel() == "value"
    ax = ldp.plot.compare(s.to_numpy(), tree)
    assert ax.get_xlabel() == "arr_time"


def test_cli_plot_is_labelled_with_the_column(frame, tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("pyarrow")
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    frame.to_parquet(src)
    assert cli.main(["privatize", str(src), str(out), "-c", "dep_time", "-m", "sw", "-e", "2", "-b", "0", "1440",
                     "--rng", "5"]) == 0
    drawn = []
    original = cli.write_plot

    def spy(dist, path, title):
        drawn.append(dist)
        return original(dist, path, title)

    monkeypatch.setattr(cli, "write_plot", spy)
    assert cli.main(["estimate", str(out), "-c", "dep_time", "--plot", str(tmp_path / "d.png")]) == 0
    capsys.readouterr()
    assert [d.name for d in drawn] == ["dep_time"]
    import matplotlib

    matplotlib.use("Agg")
    assert drawn[0].plot().get_xlabel() == "dep_time"
