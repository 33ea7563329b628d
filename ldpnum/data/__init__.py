"""Real data shipped with ldpnum.

The package carries two compact files:

- ``flights.npz``: four numeric columns of the 336,776 flights that departed
  New York City (EWR, JFK, LGA) in 2013, from the nycflights13 data set
  (CC0 1.0); :func:`load_flights`.
- ``english_words.tsv.gz``: the 50,000 most frequent English words with
  their frequencies, from the wordfreq word lists by Robyn Speer
  (CC BY-SA 4.0); :func:`load_words`.

See ``README.md`` in this folder for provenance, licences, encodings and how
to regenerate the files.
"""

from __future__ import annotations

import gzip
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["FLIGHTS_COLUMNS", "load_flights", "dep_time_minutes", "load_words", "load_digits"]

#: Column names of :func:`load_flights`, in their default order.
FLIGHTS_COLUMNS = ("dep_time", "arr_delay", "distance", "air_time")

_FLIGHTS_FILE = "flights.npz"
_WORDS_FILE = "english_words.tsv.gz"
_WORDS_HEADER = "word\tfrequency"


def _select_columns(columns) -> list[str]:
    """Validate ``columns`` and return it as a list of column names."""
    if columns is None:
        return list(FLIGHTS_COLUMNS)
    if isinstance(columns, str):
        columns = [columns]
    elif not isinstance(columns, (list, tuple)):
        raise TypeError(
            "columns must be None, a str, or a list or tuple of str, "
            f"not {type(columns).__name__}"
        )
    selected = []
    for name in columns:
        if not isinstance(name, str):
            raise TypeError(
                f"column names must be str, not {type(name).__name__}: {name!r}"
            )
        if name not in FLIGHTS_COLUMNS:
            raise ValueError(
                f"unknown column {name!r}; valid columns are "
                + ", ".join(repr(c) for c in FLIGHTS_COLUMNS)
            )
        if name in selected:
            raise ValueError(f"column {name!r} is given more than once")
        selected.append(name)
    return selected


def load_flights(columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Load numeric columns of the NYC 2013 flights (nycflights13).

    One row per flight that departed New York City (EWR, JFK, LGA) in 2013,
    336,776 rows in the original order of the nycflights13 ``flights``
    table.  Missing values of the source are kept as NaN.

    Parameters
    ----------
    columns : str or list or tuple of str, optional
        Columns to load, in the order wanted (an empty list gives a frame
        of 336,776 rows and no columns).  By default all of
        ``"dep_time"``, ``"arr_delay"``, ``"distance"``, ``"air_time"``:

        ``dep_time``
            Actual departure time, local clock, as the integer HHMM
            (e.g. 517 is 05:17, 2400 is midnight at the end of the day).
            8,255 missing (cancelled flights).  Use :func:`dep_time_minutes`
            to convert to minutes after midnight.
        ``arr_delay``
            Arrival delay in minutes; negative means early.  9,430 missing.
        ``distance``
            Distance between the airports, in miles.  No missing values.
        ``air_time``
            Time spent in the air, in minutes.  9,430 missing.

    Returns
    -------
    pandas.DataFrame
        336,776 rows, one column per requested name.  Columns with missing
        values (``dep_time``, ``arr_delay``, ``air_time``) are float64 with
        NaN for the missing entries; ``distance`` is int64.

    Raises
    ------
    TypeError
        If ``columns`` is not None, a str, a list or a tuple, or if one of
        its items is not a str.
    ValueError
        If a column name is unknown or given more than once.

    Notes
    -----
    Source: the nycflights13 R package (Hadley Wickham), data from the US
    Bureau of Transportation Statistics; licence CC0 1.0 (public domain
    dedication).  All values are integers; float64 is used only so that
    missing values can be NaN.

    Examples
    --------
    >>> from ldpnum.data import load_flights
    >>> df = load_flights()
    >>> df.shape
    (336776, 4)
    >>> list(df.columns)
    ['dep_time', 'arr_delay', 'distance', 'air_time']
    >>> df.iloc[0].tolist()
    [517.0, 11.0, 1400.0, 227.0]
    >>> int(df["arr_delay"].isna().sum())
    9430
    >>> load_flights("distance").dtypes["distance"]
    dtype('int64')
    >>> x = load_flights(["arr_delay"])["arr_delay"].dropna().to_numpy()
    >>> x.size
    327346
    """
    import pandas as pd

    selected = _select_columns(columns)
    resource = files("ldpnum.data") / _FLIGHTS_FILE
    data = {}
    with resource.open("rb") as fh, np.load(fh) as npz:
        n_rows = npz[FLIGHTS_COLUMNS[0]].shape[0] if not selected else None
        for name in selected:
            raw = npz[name]
            data[name] = raw.astype(np.float64 if raw.dtype.kind == "f" else np.int64)
    if not selected:
        return pd.DataFrame(index=pd.RangeIndex(n_rows))
    return pd.DataFrame(data, columns=selected)


def dep_time_minutes(hhmm: ArrayLike) -> Any:
    """Convert HHMM clock values to minutes after midnight.

    ``hhmm`` is read as ``100 * hours + minutes`` (the encoding of
    ``dep_time`` in :func:`load_flights`), and the result is
    ``60 * hours + minutes``.  2400, midnight at the end of a day, becomes
    1440.  NaN stays NaN.  The conversion is vectorised.

    Parameters
    ----------
    hhmm : scalar or array_like
        Clock values such as 517 (05:17) or 2400.  May contain NaN.

    Returns
    -------
    numpy.ndarray or float
        Minutes after midnight as float64, of the same shape as ``hhmm``
        (a NumPy scalar for scalar input).  Non-integer input is not
        rejected: the hours are ``floor(hhmm / 100)`` and the rest counts
        as minutes.

    Examples
    --------
    >>> from ldpnum.data import dep_time_minutes
    >>> float(dep_time_minutes(517))
    317.0
    >>> dep_time_minutes([0, 517, 2400, float("nan")])
    array([   0.,  317., 1440.,   nan])
    """
    a = np.asarray(hhmm, dtype=np.float64)
    hours = np.floor(a / 100.0)
    out = hours * 60.0 + (a - hours * 100.0)
    return out[()] if out.ndim == 0 else out


def load_words() -> tuple[np.ndarray, np.ndarray]:
    r"""Load the 50,000 most frequent English words and their frequencies (wordfreq).

    Word :math:`i` (rank :math:`i + 1`) comes with :math:`f_i`, wordfreq's
    estimate of the share of all English word tokens that are this word,
    pooled over Wikipedia, subtitles, news, books, web text, Twitter and
    Reddit.  The words are in rank order, so the frequencies never increase;
    they cover :math:`\sum_i f_i \approx 0.955` of all tokens (the rest is
    rarer words).  To draw a population of people each holding one word,
    sample ranks with probabilities :math:`f_i / \sum_j f_j`.

    Returns
    -------
    words : numpy.ndarray of object, shape (50000,)
        The words as Python ``str``, distinct and non-empty, lower-cased as
        wordfreq gives them (``"the"``, ``"to"``, ...; a few are digits,
        symbols or emoji).  Fancy indexing ``words[ranks]`` gives a column
        of items for :class:`~ldpnum.PEM` or :class:`~ldpnum.TreeHist`.
    frequencies : numpy.ndarray of float64, shape (50000,)
        :math:`f_i`, positive and non-increasing, as wordfreq rounds them
        (three significant digits).

    Notes
    -----
    Source: ``wordfreq.top_n_list("en", 50000)`` and
    ``wordfreq.word_frequency(word, "en")`` of wordfreq 3.1.1 (Robyn
    Speer), whose word lists are licensed CC BY-SA 4.0; so is this file
    (share-alike covers the word list, not the rest of ldpnum).  The words
    are stored as gzip'd UTF-8 text, one ``word<TAB>frequency`` line each.

    Examples
    --------
    >>> from ldpnum.data import load_words
    >>> words, freq = load_words()
    >>> words.shape, freq.dtype
    ((50000,), dtype('float64'))
    >>> words[:5].tolist()
    ['the', 'to', 'and', 'of', 'a']
    >>> float(freq[0])
    0.0537
    >>> bool((freq[1:] <= freq[:-1]).all()), round(float(freq.sum()), 3)
    (True, 0.955)
    """
    resource = files("ldpnum.data") / _WORDS_FILE
    with resource.open("rb") as fh:
        lines = gzip.decompress(fh.read()).decode("utf-8").split("\n")
    if lines[0] != _WORDS_HEADER or lines[-1] != "":  # pragma: no cover - the shipped file is checked by tests
        raise ValueError(f"{_WORDS_FILE} is not a word<TAB>frequency table")
    rows = [line.split("\t") for line in lines[1:-1]]
    words = np.empty(len(rows), dtype=object)
    words[:] = [w for w, _ in rows]
    frequencies = np.array([f for _, f in rows], dtype=np.float64)
    return words, frequencies


def load_digits(normalize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""Load the 1,797 handwritten digits (8×8 images, 64 pixels of 0..16) of the UCI test set.

    Parameters
    ----------
    normalize : bool, default False
        Return each image as a unit vector (its pixels divided by the image's Euclidean norm: every image
        has ink, so no norm is 0): the input of the unit-vector mechanisms (:class:`~ldpnum.PrivUnitG`, ...).

    Returns
    -------
    images : numpy.ndarray, shape (1797, 64)
        Pixels row by row, uint8 in 0..16 (float64 of norm 1 with ``normalize=True``).
    digits : numpy.ndarray of uint8, shape (1797,)
        The digit each image shows, 0..9.

    Notes
    -----
    E. Alpaydin, C. Kaynak, "Optical Recognition of Handwritten Digits", UCI Machine Learning Repository
    (1998), the test set as scikit-learn ships it (``sklearn/datasets/data/digits.csv.gz``); licensed
    CC BY 4.0 (see ``ldpnum/data/README.md``).

    Examples
    --------
    >>> from ldpnum.data import load_digits
    >>> images, digits = load_digits()
    >>> images.shape, int(images.max()), digits[:5].tolist()
    ((1797, 64), 16, [0, 1, 2, 3, 4])
    >>> import numpy as np
    >>> unit, _ = load_digits(normalize=True)
    >>> bool(np.allclose(np.linalg.norm(unit, axis=1), 1.0))
    True
    """
    with (files("ldpnum.data") / "digits.npz").open("rb") as fh:
        with np.load(fh) as z:
            images, digits = z["images"], z["digits"]
    if normalize:
        x = images.astype(np.float64)
        images = x / np.linalg.norm(x, axis=1, keepdims=True)
    return images, digits
