"""HeavyHittersEstimate: validation, queries, frame, plot, display, equality and pickling."""

import doctest
import pickle
import types

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.heavy import _result as result_module

SPEC = ldp.Spec("PEM", epsilon=4.0, n_cells=2, params=(("item_bits", 64),))


def make(**kw):
    args = dict(items=["the", "of", "and", "a"], frequencies=[0.05, 0.03, 0.02, 0.01],
                standard_errors=[0.002, 0.002, 0.001, 0.001], n_reports=100_000, epsilon=4.0, spec=SPEC,
                provenance={"method": "pem", "groups": 2, "n_per_group": np.array([50_000, 50_000]),
                            "levels": [16, 64], "candidates_kept": np.int64(8)})
    args.update(kw)
    return ldp.HeavyHittersEstimate(**args)


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_fields_are_frozen_read_only_and_copied():
    freqs = np.array([0.05, 0.03, 0.02, 0.01])
    est = make(frequencies=freqs, items=np.array(["the", "of", "and", "a"]))
    assert est.items == ("the", "of", "and", "a") and all(type(v) is str for v in est.items)
    freqs[0] = 1.0
    assert est.frequencies[0] == 0.05
    for arr in (est.frequencies, est.standard_errors, est.counts):
        assert arr.dtype == np.float64 and not arr.flags.writeable
    with pytest.raises(AttributeError):
        est.items = ()  # type: ignore[misc]
    assert est.k == 4 and est.item_type == "str" and est.n_reports == 100_000 and est.epsilon == 4.0


def test_provenance_is_frozen_plain_json_data():
    source = {"method": "pem", "levels": [16, 64], "nested": {"a": [1, 2]}}
    est = make(provenance=source)
    source["levels"].append(99)
    source["method"] = "changed"
    assert est.provenance["levels"] == (16, 64) and est.provenance["method"] == "pem"
    assert isinstance(est.provenance, types.MappingProxyType)
    with pytest.raises(TypeError):
        est.provenance["method"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        est.provenance["nested"]["b"] = 1  # type: ignore[index]
    numpy_prov = make().provenance
    assert numpy_prov["n_per_group"] == (50_000, 50_000) and type(numpy_prov["candidates_kept"]) is int
    assert make(provenance=None).provenance == {}


def test_counts_and_confidence_interval():
    est = make()
    np.testing.assert_allclose(est.counts, [5000, 3000, 2000, 1000])
    lo, hi = est.confidence_interval(0.95)
    np.testing.assert_allclose(lo, est.frequencies - 1.959963984540054 * est.standard_errors)
    np.testing.assert_allclose(hi, est.frequencies + 1.959963984540054 * est.standard_errors)
    lo99, hi99 = est.confidence_interval(0.99)
    assert np.all(lo99 < lo) and np.all(hi99 > hi)
    with pytest.raises(ValueError, match="level"):
        est.confidence_interval(1.0)


def test_to_frame_columns_and_rank_index():
    frame = make().to_frame()
    assert list(frame.columns) == ["item", "frequency", "standard_error", "ci_low", "ci_high", "count"]
    assert list(frame.index) == [1, 2, 3, 4] and frame.index.name == "rank"
    assert frame["item"].tolist() == ["the", "of", "and", "a"]
    lo, _ = make().confidence_interval()
    np.testing.assert_array_equal(frame["ci_low"], lo)
    np.testing.assert_allclose(frame["count"], [5000, 3000, 2000, 1000])
    bytes_frame = make(items=[b"\x00\x01", b"b", b"c", b"d"]).to_frame()
    assert bytes_frame["item"].tolist()[0] == b"\x00\x01"
    assert make(items=[], frequencies=[], standard_errors=[]).to_frame().shape == (0, 6)


def test_plot_draws_one_bar_per_item_top_item_at_the_top(plt):
    est = make(name="query")
    ax = est.plot()
    bars = ax.patches
    assert len(bars) == 4
    ys = [b.get_y() + b.get_height() / 2 for b in bars]
    assert ys[0] == max(ys)  # rank 1 drawn highest
    np.testing.assert_allclose([b.get_width() for b in bars], est.frequencies)
    labels = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
    assert labels["the"] > labels["a"]
    assert ax.get_xlabel() == "estimated share" and "query" in ax.get_title()
    fig, ax2 = plt.subplots()
    assert est.plot(ax=ax2) is ax2
    long = make(items=["x" * 100, "b", "c", b"d".decode()])
    assert len(long.plot().get_yticklabels()[0].get_text()) <= result_module.LABEL_MAX_CHARS


def test_importing_ldpnum_does_not_import_matplotlib(fresh_imports):
    """A fresh interpreter's ``import ldpnum`` (conftest's ``fresh_imports``)."""
    assert "ldpnum" in fresh_imports["ldpnum"]
    assert ("matplotlib" in fresh_imports["ldpnum"], "numba" in fresh_imports["ldpnum"]) == (False, False)


def test_repr_is_short_and_html_is_a_table():
    est = make(items=[f"w{i}" for i in range(30)], frequencies=np.linspace(0.3, 0.01, 30),
               standard_errors=np.full(30, 0.01), name="<query>")
    text = repr(est)
    assert text.startswith("HeavyHittersEstimate(k=30, n_reports=100000, mechanism='PEM', epsilon=4")
    assert "'w0'" in text and "'w2'" in text and "'w3'" not in text and "..." in text and "\n" not in text
    html = est._repr_html_()
    assert html.count("<tr>") == 1 + result_module.HTML_MAX_ROWS + 1  # header, shown rows, ellipsis row
    assert "&lt;query&gt;" in html and "<query>" not in html
    assert "no items" in make(items=[], frequencies=[], standard_errors=[])._repr_html_()


def test_equality_on_spec_items_and_frequencies_only():
    a = make()
    assert a == make(name="other", standard_errors=[0.1] * 4, provenance={})
    assert a != make(frequencies=[0.05, 0.03, 0.02, 0.02])
    assert a != make(items=["the", "of", "and", "b"])
    other_spec = ldp.Spec("TreeHist", epsilon=4.0, n_cells=2)
    assert a != make(spec=other_spec)
    assert (a == "x") is False
    with pytest.raises(TypeError):
        hash(a)


def test_pickles_with_provenance_and_name():
    est = make(name="query")
    back = pickle.loads(pickle.dumps(est))
    assert back == est and back.name == "query" and dict(back.provenance) == dict(est.provenance)
    assert not back.frequencies.flags.writeable


def test_int_and_bytes_items():
    ints = make(items=[np.uint64(2**64 - 1), 3, np.int64(5), 0])
    assert ints.items == (2**64 - 1, 3, 5, 0) and all(type(v) is int for v in ints.items)
    assert ints.item_type == "uint"
    assert make(items=[b"a", b"b", b"c", b"d"]).item_type == "bytes"


@pytest.mark.parametrize("kw, exc, match", [
    (dict(items="abcd"), TypeError, "items must be a sequence"),
    (dict(items=None), TypeError, "items must be a sequence"),
    (dict(items=["a", b"b", "c", "d"]), TypeError, "item 0 is str but item 1 is bytes"),
    (dict(items=["a", "b", True, "d"]), TypeError, "item 2 is bool"),
    (dict(items=["a", "b", 1.5, "d"]), TypeError, "item 2 is float"),
    (dict(items=[1, 2, -3, 4]), ValueError, r"1 are negative, first at index 2"),
    (dict(items=["a", "b", "a", "b"]), ValueError, r"distinct; 2 repeat an earlier item, first at index 2"),
    (dict(items=["a", "b", "c"]), ValueError, r"frequencies must be one-dimensional with one entry per item \(3\)"),
    (dict(frequencies=[[0.1, 0.1, 0.1, 0.1]]), ValueError, "frequencies must be one-dimensional"),
    (dict(frequencies=[0.1, np.nan, 0.1, np.inf]), ValueError, r"frequencies must be finite; 2 are not, first at index 1"),
    (dict(frequencies=["a", "b", "c", "d"]), TypeError, "frequencies"),
    (dict(standard_errors=[0.1, 0.1, -0.1, 0.1]), ValueError, r"standard_errors must be non-negative; 1 .* index 2"),
    (dict(standard_errors=[0.1, 0.1, 0.1, np.nan]), ValueError, r"standard_errors must be finite; 1 .* index 3"),
    (dict(standard_errors=[0.1]), ValueError, "standard_errors must be one-dimensional"),
    (dict(spec=None), TypeError, "spec must be an ldpnum Spec"),
    (dict(spec={"mechanism": "PEM"}), TypeError, "spec must be an ldpnum Spec"),
    (dict(epsilon=2.0), ValueError, "disagrees with the spec"),
    (dict(epsilon="4"), TypeError, "epsilon"),
    (dict(n_reports=-1), ValueError, "n_reports must be >= 0; got -1"),
    (dict(n_reports=1.5), TypeError, "n_reports must be an int"),
    (dict(n_reports=None), TypeError, "n_reports must be an int"),
    (dict(provenance=[1, 2]), TypeError, "provenance must be a mapping"),
    (dict(provenance={"when": object()}), TypeError, r"JSON-able.*provenance\['when'\]"),
    (dict(provenance={"x": [1, float("nan")]}), ValueError, r"finite.*provenance\['x'\]\[1\]"),
    (dict(provenance={1: "a"}), TypeError, "provenance keys must be str"),
    (dict(name=3), TypeError, "name must be a str"),
])
def test_bad_constructions_raise_clear_errors(kw, exc, match):
    with pytest.raises(exc, match=match):
        make(**kw)


def make_itemsets(**kw):
    args = dict(itemsets=(frozenset({"a"}), frozenset({"a", "b"})), frequencies=[0.5, 0.2],
                standard_errors=[0.01, 0.01], n_reports=30_000, epsilon=4.0, spec=SPEC)
    args.update(kw)
    return ldp.ItemsetsEstimate(**args)


@pytest.mark.parametrize("build", [make, make_itemsets], ids=["HeavyHittersEstimate", "ItemsetsEstimate"])
@pytest.mark.parametrize("kw, exc, match", [
    (dict(spec=None), TypeError, "spec must be an ldpnum Spec; got NoneType"),
    (dict(spec="PEM"), TypeError, "spec must be an ldpnum Spec; got str"),
    (dict(n_reports=None), TypeError, "n_reports must be an integer; got NoneType None"),
    (dict(n_reports=2.5), TypeError, "n_reports must be an integer; got float 2.5"),
    (dict(n_reports=-1), ValueError, "n_reports must be >= 0; got -1"),
    (dict(epsilon=1.0), ValueError, "epsilon=1.0 disagrees with the spec's epsilon=4.0"),
    (dict(provenance=[("method", "svim")]), TypeError, "provenance must be a mapping"),
])
def test_both_heavy_results_check_their_provenance_alike(build, kw, exc, match):
    # one check (check_required_provenance, then the provenance mapping) for both result classes; an
    # ItemsetsEstimate took a list as its provenance and froze it into a tuple
    with pytest.raises(exc, match=match):
        build(**kw)
    assert build().n_reports > 0


def test_empty_result_is_allowed():
    est = make(items=[], frequencies=[], standard_errors=[])
    assert est.k == 0 and est.counts.shape == (0,) and "k=0" in repr(est)


def test_docstring_examples_run():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(result_module) if t.examples]
    assert tests
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize("name", ["ItemsetsEstimate", "SetItemsEstimate"])
def test_set_valued_results_live_with_the_heavy_results_and_keep_their_old_path(name):
    # every heavy-hitter family result is in heavy/_result.py; the old home still names the same class, so
    # code importing it and pickles written before the move (which name ldpnum.heavy.setvalued) still work
    from ldpnum.heavy import setvalued

    cls = getattr(result_module, name)
    assert cls.__module__ == "ldpnum.heavy._result" and getattr(setvalued, name) is cls
    assert pickle.loads(f"cldpnum.heavy.setvalued\n{name}\n.".encode()) is cls
    assert ldp.heavy.ItemsetsEstimate is ldp.ItemsetsEstimate is result_module.ItemsetsEstimate
