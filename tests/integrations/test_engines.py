"""Engine-neutral partition functions (ldpnum.engines): the Spark / multiprocessing / Dask building blocks."""

import pickle
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import Aggregate
from ldpnum._frame import attach_specs
from ldpnum._random import child_rng
from ldpnum.engines import (aggregate_frame, combine, merge_aggregates, partition_aggregate, partition_privatize,
                            tree_merge)

M = ldp.SquareWave(1.0, (0, 1))


def _batches(n_batches=4, size=500, seed=0, attrs=True):
    """Report frames as an engine would hand them over; attrs=False is what Spark's Arrow batches look like."""
    x = np.random.default_rng(seed).beta(5, 2, n_batches * size)
    out = []
    for i, chunk in enumerate(np.array_split(x, n_batches)):
        df = pd.DataFrame({"r": M.privatize(chunk, rng=child_rng(seed, i)).codes, "other": np.arange(chunk.size)})
        out.append(attach_specs(df, {"r": M.spec}) if attrs else df)
    return out


def _whole(batches):
    return M.aggregate(ldp.Reports(np.concatenate([b["r"].to_numpy() for b in batches]), M.spec))


@pytest.mark.parametrize("output", ["bytes", "long"])
@pytest.mark.parametrize("attrs", [True, False])
def test_partition_aggregate_yields_one_small_frame(output, attrs):
    batches = _batches(attrs=attrs)
    spec = None if attrs else M.spec
    frames = list(partition_aggregate(iter(batches), "r", spec, output=output))
    assert len(frames) == 1
    (frame,) = frames
    if output == "bytes":
        assert list(frame.columns) == ["aggregate"] and len(frame) == 1
        assert len(frame["aggregate"][0]) <= 16 + len(M.spec.to_json()) + 8 * M.n_cells
    else:
        assert list(frame.columns) == ["key", "count"] and len(frame) <= M.n_cells
    assert combine(frame, spec=M.spec) == _whole(batches)
    assert combine([frame]) == _whole(batches)  # to_frame records the spec


def test_partition_aggregate_needs_a_spec_when_attrs_are_dropped():
    with pytest.raises(ValueError, match="carries no ldpnum spec"):
        list(partition_aggregate(_batches(attrs=False), "r"))
    with pytest.raises(ldp.SpecMismatchError):
        list(partition_aggregate(_batches(), "r", ldp.SquareWave(2.0, (0, 1)).spec))
    with pytest.raises(ValueError, match="column 'nope' is not in the frame"):
        list(partition_aggregate(_batches(), "nope", M.spec))
    with pytest.raises(ValueError, match="output"):
        list(partition_aggregate(_batches(), "r", M.spec, output="json"))
    with pytest.raises(TypeError):
        list(partition_aggregate(_batches(), "r", M.spec.to_dict()))


def test_codes_outside_the_alphabet_are_refused():
    bad = pd.DataFrame({"r": np.array([0, 5, 1024, 7], dtype=np.int64)})
    with pytest.raises(ValueError, match="first at index 2"):
        list(partition_aggregate([bad], "r", M.spec))


def test_empty_partition():
    (frame,) = partition_aggregate(iter([]), "r", M.spec)
    assert combine(frame) == M.empty_aggregate()
    (frame,) = partition_aggregate(iter([]), "r")  # nothing to build an aggregate from: no rows
    assert len(frame) == 0
    assert combine([frame], spec=M.spec) == M.empty_aggregate()
    with pytest.raises(ValueError, match="no aggregates"):
        combine([frame])
    (long,) = partition_aggregate(iter([]), "r", output="long")
    assert len(long) == 0 and combine([long, frame], spec=M.spec) == M.empty_aggregate()


def test_combine_accepts_what_engines_hand_back():
    parts = [_batches(2, 300, seed=s) for s in range(5)]
    frames = [next(partition_aggregate(p, "r")) for p in parts]
    longs = [next(partition_aggregate(p, "r", output="long")) for p in parts]
    whole = _whole([b for p in parts for b in p])
    assert combine(frames) == whole
    assert combine(pd.concat(frames, ignore_index=True)) == whole  # Spark's toPandas() of all rows
    assert combine([(f["aggregate"][0],) for f in frames]) == whole  # collected one-field rows
    assert combine([bytearray(f["aggregate"][0]) for f in frames]) == whole
    assert combine(longs) == whole
    stripped = [pd.DataFrame({"key": f["key"].to_numpy(), "count": f["count"].to_numpy()}) for f in longs]
    assert combine(pd.concat(stripped), spec=M.spec) == whole
    assert combine([Aggregate.from_bytes(f["aggregate"][0]) for f in frames]) == whole
    assert combine(frames[:2] + longs[2:]) == whole
    with pytest.raises(ldp.SpecMismatchError):
        combine(frames, spec=ldp.SquareWave(2.0, (0, 1)).spec)
    with pytest.raises(TypeError):
        combine("aggregate")
    with pytest.raises(TypeError):
        combine([1, 2])
    with pytest.raises(ValueError, match="column 'aggregate'"):
        combine(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="checksum"):
        combine([frames[0]["aggregate"][0][:-1] + b"\x00"])


@pytest.mark.parametrize("output", ["bytes", "long"])
def test_merge_aggregates_is_a_second_stage(output):
    parts = [_batches(2, 200, seed=s) for s in range(6)]
    frames = [next(partition_aggregate(p, "r", output=output)) for p in parts]
    stage2 = [next(merge_aggregates(iter(frames[i:i + 2]), output=output)) for i in range(0, 6, 2)]
    (final,) = merge_aggregates(iter(stage2), output=output)
    assert combine(final) == _whole([b for p in parts for b in p])
    (nothing,) = merge_aggregates(iter([]))
    assert len(nothing) == 0
    (empty,) = merge_aggregates(iter([]), M.spec)
    assert combine(empty) == M.empty_aggregate()


def test_tree_merge_equals_any_order():
    aggs = [aggregate_frame(b, "r") for b in _batches(7, 100)]
    assert tree_merge(aggs) == Aggregate.merge(aggs) == Aggregate.merge(aggs[::-1])
    assert tree_merge(aggs[:1]) == aggs[0]
    with pytest.raises(ValueError):
        tree_merge([])


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_tree_merge_is_a_balanced_binary_tree(n):
    calls = []

    def pair(a, b):
        calls.append((a, b))
        return (a, b)

    tree = tree_merge(range(n), merge=pair)
    assert len(calls) == n - 1

    def leaves(t):
        return [t] if isinstance(t, int) else leaves(t[0]) + leaves(t[1])

    def depth(t):
        return 0 if isinstance(t, int) else 1 + max(depth(t[0]), depth(t[1]))

    assert leaves(tree) == list(range(n))  # order kept: partitions are merged with their neighbours
    assert depth(tree) == int(np.ceil(np.log2(n)))


def test_partition_functions_pickle_by_reference():
    for f in (partition_aggregate, partition_privatize, combine, merge_aggregates, aggregate_frame):
        blob = pickle.dumps(f)
        assert len(blob) < 100 and b"ldpnum.engines" in blob


def test_partition_privatize_checks_seed_and_index_first():
    df = pd.DataFrame({"x": [0.5, 0.2]})
    with pytest.raises(TypeError, match="Generator cannot be shared"):
        partition_privatize(df, {"x": M}, seed=np.random.default_rng(0), partition_index=0)
    with pytest.raises(TypeError):
        partition_privatize(df, {"x": M}, seed=True, partition_index=0)
    with pytest.raises(ValueError, match="non-negative"):
        partition_privatize(df, {"x": M}, seed=-1, partition_index=0)
    with pytest.raises(ValueError, match="partition_index"):
        partition_privatize(df, {"x": M}, seed=0, partition_index=-1)
    with pytest.raises(TypeError, match="partition_index"):
        partition_privatize(df, {"x": M}, seed=0, partition_index=1.0)


def test_partition_privatize_draws_from_the_partitions_stream():
    from ldpnum.pandas import privatize_frame

    df = pd.DataFrame({"x": np.random.default_rng(0).beta(5, 2, 500), "y": 1.0})
    got = partition_privatize(df, {"x": M}, seed=9, partition_index=4)
    pd.testing.assert_frame_equal(got, privatize_frame(df, {"x": M}, rng=child_rng(9, 4)))
    whole = privatize_frame(df, {"x": M}, rng=child_rng(9, 4))
    assert got.ldp.specs == whole.ldp.specs and got.ldp.epsilon_per_row == whole.ldp.epsilon_per_row
    # a partition records no digest (engines concatenate partitions); a whole pandas frame does
    assert "codes" not in got.attrs["ldpnum"]["columns"][0] and "codes" in whole.attrs["ldpnum"]["columns"][0]
    assert not got.equals(partition_privatize(df, {"x": M}, seed=9, partition_index=5))
    ss = np.random.SeedSequence(9)
    pd.testing.assert_frame_equal(partition_privatize(df, {"x": M}, seed=ss, partition_index=4), got)
    secure = [partition_privatize(df, {"x": M}, seed=None, partition_index=4) for _ in range(2)]
    assert not secure[0].equals(secure[1])
    assert combine(partition_aggregate([got], "x")) == M.aggregate(ldp.Reports(got["x"].to_numpy(), M.spec))


def test_partition_privatize_of_a_series_draws_from_the_partitions_stream():
    from ldpnum.pandas import privatize_series

    s = pd.Series(np.random.default_rng(1).beta(5, 2, 500), name="x")
    got = partition_privatize(s, M, seed=9, partition_index=4)
    expected = privatize_series(s, M, rng=child_rng(9, 4))
    pd.testing.assert_series_equal(got, expected)
    assert got.ldp.spec == expected.ldp.spec == M.spec and got.ldp.epsilon_per_row == expected.ldp.epsilon_per_row
    framed = partition_privatize(s.to_frame(), {"x": M}, seed=9, partition_index=4)["x"]
    assert np.array_equal(got.to_numpy(), framed.to_numpy())  # one column: the same stream as a frame
    assert not got.equals(partition_privatize(s, M, seed=9, partition_index=5))
    secure = [partition_privatize(s, M, seed=None, partition_index=4) for _ in range(2)]
    assert not secure[0].equals(secure[1])
    with pytest.raises(ValueError, match="strategy"):
        partition_privatize(s, M, seed=9, partition_index=4, strategy="one-column-per-row")
    with pytest.raises(TypeError, match="seed"):
        partition_privatize(s, M, seed=1.5, partition_index=4)


def test_empty_frame_has_the_types_a_partition_would_have():
    from ldpnum.engines import empty_frame

    df = empty_frame([("t", "double"), ("n", "bigint"), ("i", "int"), ("s", "string"), ("d", "decimal(10,2)"),
                      ("b", "binary"), ("u", np.uint8)])
    assert len(df) == 0 and list(df.columns) == ["t", "n", "i", "s", "d", "b", "u"]
    assert [str(t) for t in df.dtypes] == ["float64", "int64", "int32", "object", "object", "object", "uint8"]
    assert empty_frame({"x": "float32"}).dtypes["x"] == np.float32
    # what it is for: the checks that do not depend on the values, with nothing drawn
    with pytest.raises(TypeError, match="'s'"):
        partition_privatize(df, {"s": M}, seed=0, partition_index=0)
    assert len(partition_privatize(df, {"t": M}, seed=0, partition_index=0)) == 0
    with pytest.raises(ValueError, match="twice"):
        empty_frame([("a", "double"), ("a", "int")])
    with pytest.raises(TypeError, match="pairs"):
        empty_frame(["a"])


# -- the recipe of docs/scaling.md runs as written (Spark's: tests/integrations/test_spark.py) ---------------
DOCS = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"


def _doc_blocks(section):
    """The ```python blocks of one '## ' section of docs/scaling.md."""
    text = DOCS.read_text()
    body = text.split(f"\n## {section}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


@pytest.mark.slow
def test_the_multiprocessing_recipe(tmp_path):
    """The script runs as written (spawned workers import it by reference) and prints the merged result."""
    import runpy
    import subprocess

    (code,) = _doc_blocks("Plain multiprocessing")
    script = tmp_path / "recipe.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    ns = runpy.run_path(str(script), run_name="recipe")  # the same functions, in this process
    agg = combine(map(ns["work"], range(8)))
    assert out.stdout.split() == [str(agg.n_reports), str(ns["M"].estimate_distribution(agg).quantile(0.5))]
    assert agg.n_reports == 8_000_000
