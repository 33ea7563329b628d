"""Category and text columns through the ``.ldp`` accessor: declared, public categories, labelled estimates."""
import io

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum.exceptions import InvalidValuesError

DRINKS = ["tea", "coffee", "water"]
DTYPE = pd.CategoricalDtype(DRINKS)


@pytest.fixture
def no_draws(monkeypatch):
    """Fail the test if any random word is drawn."""
    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)


def _drinks(n=600, seed=0):
    codes = np.random.default_rng(seed).choice(3, n, p=[0.5, 0.3, 0.2])
    return pd.Series(pd.Categorical.from_codes(codes, dtype=DTYPE), name="drink"), codes


def test_category_column_reports_equal_the_reports_of_its_codes():
    s, codes = _drinks()
    by_codes = pd.Series(codes, name="drink").ldp.privatize(ldp.GRR(1.0, k=3), rng=7)
    got = s.ldp.privatize(ldp.GRR(1.0, k=3), rng=7)
    np.testing.assert_array_equal(got.to_numpy(), by_codes.to_numpy())
    assert got.ldp.spec.get("categories") == tuple(DRINKS) and got.ldp.spec.n_cells == 3
    # a text column with the categories declared on the oracle: the same reports
    text = s.astype(str).ldp.privatize(ldp.GRR(1.0, categories=DRINKS), rng=7)
    np.testing.assert_array_equal(text.to_numpy(), by_codes.to_numpy())
    # a category dtype in another order is matched by value to the oracle's declared order
    shuffled = s.astype(pd.CategoricalDtype(DRINKS[::-1])).ldp.privatize(ldp.GRR(1.0, categories=DRINKS), rng=7)
    np.testing.assert_array_equal(shuffled.to_numpy(), by_codes.to_numpy())


def test_frame_columns_of_categories_and_other_oracles():
    s, codes = _drinks()
    df = pd.DataFrame({"drink": s, "x": np.linspace(0, 1, len(s))})
    mechs = {"drink": ldp.OLH(1.0, k=3), "x": ldp.Duchi(1.0, (0, 1))}
    got = df.ldp.privatize(mechs, rng=3, strategy="one-column-per-row")
    want = pd.DataFrame({"drink": codes, "x": df["x"]}).ldp.privatize(mechs, rng=3, strategy="one-column-per-row")
    np.testing.assert_array_equal(got["drink"].to_numpy(), want["drink"].to_numpy())
    assert got.ldp.specs["drink"] == ldp.OLH(1.0, k=3).with_categories(DRINKS).spec
    est = got["drink"].ldp.estimate_frequencies()
    assert list(est.to_series().index) == DRINKS
    np.testing.assert_array_equal(est.frequencies, want["drink"].ldp.estimate_frequencies().frequencies)


def test_labels_round_trip_through_parquet():
    s, _ = _drinks(n=4000)
    reports = s.to_frame().ldp.privatize({"drink": ldp.GRR(2.0, k=3)}, rng=1)
    buf = io.BytesIO()
    reports.to_parquet(buf)
    back = pd.read_parquet(io.BytesIO(buf.getvalue()))
    assert back.ldp.specs == reports.ldp.specs
    est = back["drink"].ldp.estimate_frequencies()
    series = est.to_series()
    assert series.index.tolist() == DRINKS and est.name == "drink"
    # n = 4000 at eps = 2: the standard errors are about 0.012; 5 of them around the true frequencies
    assert np.all(np.abs(series.to_numpy() - [0.5, 0.3, 0.2]) < 5 * est.standard_errors)


def test_refusals_come_before_any_draw(no_draws):
    s, _ = _drinks(n=20)
    text = s.astype(str)
    with pytest.raises(TypeError, match=r"column 'drink' holds text: declare its categories.*with_categories"):
        text.ldp.privatize(ldp.GRR(1.0, k=3), rng=0)
    with pytest.raises(TypeError, match=r"column 'drink' holds text"):
        text.to_frame().ldp.privatize({"drink": ldp.GRR(1.0, k=3)}, rng=0)
    with pytest.raises(ValueError, match=r"category column of 3 categories but GRR has k=4: build it with k=3"):
        s.ldp.privatize(ldp.GRR(1.0, k=4), rng=0)
    with pytest.raises(ValueError, match=r"declares 3 categories but k=4"):
        ldp.GRR(1.0, k=4, categories=DRINKS)
    bad = text.copy()
    bad.iloc[5] = "milk"
    with pytest.raises(InvalidValuesError, match=r"column 'drink' has 1 value\(s\) outside the declared categories, "
                                                 r"first at index 5 \('milk'\)") as exc:
        bad.ldp.privatize(ldp.GRR(1.0, categories=DRINKS), rng=0)
    assert exc.value.first_index == 5
    with pytest.raises(InvalidValuesError, match="outside the declared categories"):
        bad.to_frame().ldp.privatize({"drink": ldp.GRR(1.0, categories=DRINKS)}, rng=0)
    missing = text.copy()
    missing.iloc[2] = None
    with pytest.raises(InvalidValuesError, match="1 missing value.*first at index 2"):
        missing.ldp.privatize(ldp.GRR(1.0, categories=DRINKS), rng=0)
    with pytest.raises(ValueError, match="fill_value must be one of the declared categories; got 'milk'"):
        missing.ldp.privatize(ldp.GRR(1.0, categories=DRINKS), nan_policy="impute", fill_value="milk", rng=0)
    with pytest.raises(TypeError, match="dtype float64: it must hold labels of the declared categories"):
        ldp.GRR(1.0, categories=[10, 20]).privatize(np.array([10.0, 20.0]))
    with pytest.raises(TypeError, match=r"must hold str or int labels.*entry 0 is 1.5"):
        pd.Series(pd.Categorical.from_codes([0, 2], categories=[1.5, 2.5, 3.5])).ldp.privatize(ldp.GRR(1.0, k=3))


def test_unknown_values_and_missing_ones_follow_the_usual_policies():
    text = pd.Series(["tea", "milk", None, "water"], name="drink")
    grr = ldp.GRR(1.0, categories=DRINKS)
    got = text.ldp.privatize(grr, rng=2, unknown="uniform", nan_policy="impute", fill_value="coffee")
    # the same as the codes with -1 (unknown) marked outside, and the fill value's code
    want = ldp.GRR(1.0, k=3).privatize(np.array([0, 3, 1, 2]), rng=_random.child_rng(2, 0), unknown="uniform")
    np.testing.assert_array_equal(got.to_numpy(), want.codes)


def test_declared_categories_are_part_of_the_spec():
    grr = ldp.GRR(1.0, categories=[3, 1, 2])
    assert grr.k == 3 and grr.categories == (3, 1, 2) and grr != ldp.GRR(1.0, k=3)
    assert "categories=[3, 1, 2]" in repr(grr)
    back = ldp.from_spec(ldp.Spec.from_json(grr.spec.to_json()))
    assert back == grr and back.categories == (3, 1, 2)
    np.testing.assert_array_equal(back.privatize([1, 2, 3], rng=0).codes,
                                  ldp.GRR(1.0, k=3).privatize([1, 2, 0], rng=0).codes)
    bad = ldp.Spec("grr", 1.0, 3, (("k", 3), ("categories", (1.5, 2, 3))))
    with pytest.raises(ValueError, match="spec of 'grr': categories must hold str or int labels"):
        ldp.from_spec(bad)
    with pytest.raises(ValueError, match="declares 2 categories but k=3"):
        ldp.from_spec(ldp.Spec("grr", 1.0, 3, (("k", 3), ("categories", ("a", "b")))))
    # PGR's candidates are labels too, and label the estimate
    pgr = ldp.PGR(2.0, k=13).with_categories([f"c{i}" for i in range(13)])
    est = pgr.estimate_frequencies(pgr.privatize(["c0", "c5", "c5"], rng=0), candidates=["c5", "c0"])
    assert est.to_series().index.tolist() == ["c5", "c0"]


def test_numeric_mechanisms_still_refuse_category_columns():
    s, _ = _drinks(n=5)
    with pytest.raises(TypeError, match="column 'drink' has dtype category.*frequency oracle"):
        s.ldp.privatize(ldp.Duchi(1.0, (0, 1)))


def test_dask_partitions_of_a_category_column_are_labelled():
    dd = pytest.importorskip("dask.dataframe")
    import ldpnum.dask  # noqa: F401  (registers the accessor)

    s, codes = _drinks(n=900)
    ddf = dd.from_pandas(s.to_frame(), npartitions=3)
    reports = ddf.ldp.privatize({"drink": ldp.GRR(1.0, k=3)}, rng=4)
    # the threaded scheduler: partitions digest their codes concurrently
    est = reports.ldp.estimate_frequencies("drink")
    assert est.to_series().index.tolist() == DRINKS
    got = reports.compute(scheduler="sync")
    assert got.ldp.specs["drink"].get("categories") == tuple(DRINKS)


def test_longitudinal_oracles_take_codes_only():
    lgrr = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=1.0, k=3)
    assert not lgrr.takes_categories
    with pytest.raises(TypeError, match="takes category codes 0..k-1 only"):
        lgrr.with_categories(DRINKS)
    s, _ = _drinks(n=5)
    with pytest.raises(TypeError, match="has dtype category.*s.cat.codes"):
        s.ldp.privatize(lgrr, keys=ldp.ClientKeys.generate(5, rng=0), rng=0)


def test_a_warning_when_the_categories_look_derived_from_the_data():
    from ldpnum.exceptions import CategoriesWarning

    values = pd.Series(np.random.default_rng(1).choice(["no", "yes"], 300), name="q")
    with pytest.warns(CategoriesWarning, match="column 'q': its 2 categories are sorted and all occur in it"):
        values.astype("category").ldp.privatize(ldp.GRR(1.0, k=2), rng=0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", CategoriesWarning)
        values.astype("category").ldp.privatize(ldp.GRR(1.0, categories=["no", "yes"]), rng=0)  # declared
        values.astype(pd.CategoricalDtype(["yes", "no"])).ldp.privatize(ldp.GRR(1.0, k=2), rng=0)  # own order
        values.astype(pd.CategoricalDtype(["maybe", "no", "yes"])).ldp.privatize(ldp.GRR(1.0, k=3), rng=0)  # unheld
