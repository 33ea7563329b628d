"""The table-collection layer (ldpnum/collect.py) on its own: planning columns under a strategy, one column per
row, a batch validated before any draw, and reading a report column back (a wrong digest is refused)."""

import ast
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import collect
from ldpnum._frame import ReportsChangedError, add_digests, codes_digest
from ldpnum._random import assign_columns, child_rng
from ldpnum.exceptions import BudgetWarning

SW = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
DU = ldp.Duchi(epsilon=2.0, bounds=(0, 1))
GRR = ldp.GRR(epsilon=0.5, k=4)


def _values(plan, n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for c in plan.columns:
        x = rng.integers(0, 4, n) if c.mechanism is GRR else rng.uniform(0, 1, n)
        out.append(collect.prepare_column(c.mechanism, x, c.label))
    return out


# -- planning -------------------------------------------------------------------------------------------------

def test_plan_keeps_the_mapping_order_and_the_budget_of_each_strategy():
    mechs = {"a": SW, "b": DU, "c": GRR}
    every = collect.plan_columns(mechs, "all-columns")
    one = collect.plan_columns(mechs, "one-column-per-row")
    assert every.labels == one.labels == ["a", "b", "c"]
    assert every.epsilon_per_row == pytest.approx(3.5) and one.epsilon_per_row == 2.0
    assert not every.split and one.split
    assert every.mechanisms == mechs and every.sources == {"a": None, "b": None, "c": None}
    assert len(every.streams(0)) == 3 and len(one.streams(0)) == 4  # one more stream: the rows' columns


def test_plan_labels_a_vector_key_by_its_columns():
    m = ldp.SampledDimensions("piecewise", 1.0, [(0, 1), (0, 1)])
    plan = collect.plan_columns({("q1", "q2"): m, "x": SW}, "all-columns")
    assert plan.labels == ["q1,q2", "x"]
    assert plan.columns[0].value_columns == ["q1", "q2"] and plan.columns[1].value_columns == ["x"]
    with pytest.raises(ValueError, match="two keys give the same report column label"):
        collect.plan_columns({("a", "b"): m, "a,b": SW}, "all-columns")
    with pytest.raises(ValueError, match="contains a comma"):
        collect.report_label(("a,b", "c"))


def test_plan_refuses_an_unknown_strategy_no_columns_and_too_many_columns():
    with pytest.raises(ValueError, match="strategy must be one of 'all-columns', 'one-column-per-row'; got 'half'"):
        collect.plan_columns({"a": SW}, "half")
    with pytest.raises(ValueError, match="mechanisms is empty"):
        collect.plan_columns({}, "all-columns")
    many = {i: SW for i in range(collect.MAX_COLUMNS + 1)}
    with pytest.raises(ValueError, match=f"at most {collect.MAX_COLUMNS} columns"):
        collect.plan_columns(many, "one-column-per-row")
    assert len(collect.plan_columns(many, "all-columns").columns) == collect.MAX_COLUMNS + 1


def test_the_default_strategy_warns_when_it_sums_the_epsilons():
    with pytest.warns(BudgetWarning, match="spends the sum of their epsilons, 3"):
        assert collect.resolve_strategy(None, {"a": SW, "b": DU}) == "all-columns"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert collect.resolve_strategy(None, {"a": SW}) == "all-columns"
        assert collect.resolve_strategy("all-columns", {"a": SW, "b": DU}) == "all-columns"


def test_streams_are_the_documented_sub_streams_and_secure_without_a_seed():
    plan = collect.plan_columns({"a": SW, "b": DU}, "one-column-per-row")
    for j, stream in enumerate(plan.streams(7)):
        want = np.random.default_rng(child_rng(7, j)).bit_generator.random_raw(3)
        assert np.array_equal(stream.bit_generator.random_raw(3), want)
    assert plan.streams(None) == [None, None, None]


# -- one column per row ---------------------------------------------------------------------------------------

def test_each_row_reports_exactly_one_column_drawn_from_the_last_stream():
    plan = collect.plan_columns({"a": SW, "b": DU, "c": GRR}, "one-column-per-row")
    n = 3000
    batch = collect.privatize_batch(plan, _values(plan, n), plan.streams(5), n)
    reported = np.stack([~batch.missing[c] for c in plan.labels])
    assert (reported.sum(axis=0) == 1).all()
    assigned = assign_columns(child_rng(5, 3), n, 3)
    for j, c in enumerate(plan.labels):
        assert np.array_equal(np.flatnonzero(~batch.missing[c]), np.flatnonzero(assigned == j))
        assert (batch.codes[c][batch.missing[c]] == 0).all()
        assert batch.digests[c] == codes_digest(batch.codes[c][~batch.missing[c]])
    assert sum(batch.counts.values()) == n and min(batch.counts.values()) > 900  # about n/3 each


def test_batches_sharing_the_streams_give_the_reports_of_one_batch():
    plan = collect.plan_columns({"a": SW, "c": GRR}, "one-column-per-row")
    values = _values(plan, 1000, seed=3)
    whole = collect.privatize_batch(plan, values, plan.streams(11), 1000)
    streams = plan.streams(11)
    parts = [collect.privatize_batch(plan, [v[lo:hi] for v in values], streams, hi - lo)
             for lo, hi in ((0, 333), (333, 1000))]
    for c in plan.labels:
        assert np.array_equal(np.concatenate([p.codes[c] for p in parts]), whole.codes[c])
        assert np.array_equal(np.concatenate([p.missing[c] for p in parts]), whole.missing[c])
        assert add_digests(*(p.digests[c] for p in parts)) == whole.digests[c]


def test_the_batch_core_gives_the_accessors_reports():
    df = pd.DataFrame({"a": np.linspace(0, 1, 500), "c": np.arange(500) % 4})
    for strategy in collect.STRATEGIES:
        plan = collect.plan_columns({"a": SW, "c": GRR}, strategy)
        batch = collect.privatize_batch(plan, [collect.prepare_column(c.mechanism, df[c.key], c.label)
                                               for c in plan.columns], plan.streams(2), len(df))
        frame = df.ldp.privatize({"a": SW, "c": GRR}, rng=2, strategy=strategy)
        for c in plan.labels:
            if batch.missing[c] is None:
                assert np.array_equal(frame[c].to_numpy(), batch.codes[c])
            else:
                assert frame[c].array.equals(pd.arrays.IntegerArray(batch.codes[c], batch.missing[c]))


# -- a batch is validated before any draw ---------------------------------------------------------------------

def test_a_batch_of_the_wrong_shape_is_refused_before_any_draw():
    plan = collect.plan_columns({"a": SW, "b": DU}, "one-column-per-row")
    streams = plan.streams(1)
    states = [s.bit_generator.state for s in streams]
    values = _values(plan, 10)
    with pytest.raises(ValueError, match="report column 'b' hold 9 rows; the batch has 10"):
        collect.privatize_batch(plan, [values[0], values[1][:9]], streams, 10)
    with pytest.raises(ValueError, match="takes 2 value arrays and 3 streams"):
        collect.privatize_batch(plan, values[:1], streams, 10)
    assert [s.bit_generator.state for s in streams] == states  # nothing was drawn


def test_a_frame_with_one_bad_cell_draws_nothing():
    gen = np.random.default_rng(4)
    state = gen.bit_generator.state
    df = pd.DataFrame({"a": np.linspace(0, 1, 50), "c": np.r_[np.zeros(49), np.nan]})
    with pytest.raises(ValueError, match="column 'c'"):
        collect.privatize_frame(df, {"a": SW, "c": DU}, rng=gen, strategy="one-column-per-row")
    assert gen.bit_generator.state == state


def test_checks_before_the_draw_refuse_a_bad_declaration_and_a_ledger_without_room():
    with pytest.raises(TypeError, match="shuffled must be True or False"):
        collect.check_shuffle("yes", 1e-6)
    with pytest.raises(ValueError, match="keep the input's index"):
        collect.check_shuffle(True, 1e-6, pd.Series([1.0], index=["alice"]))
    assert collect.check_shuffle(False, 1e-6) is None and collect.check_shuffle(True, 1e-6) == 1e-6
    ledger = ldp.PrivacyLedger(cap=1.0)
    s = pd.Series([0.5, 0.5])
    ids = collect.check_ledger(ledger, 1.0, s, None)
    collect.record_ledger(ledger, epsilon=1.0, people=ids, specs={"x": SW.spec})
    with pytest.raises(ldp.exceptions.BudgetExceededError):
        collect.check_ledger(ledger, 1.0, s, None)
    with pytest.raises(ValueError, match="pass ledger= too"):
        collect.check_ledger(None, 1.0, s, [1, 2])


# -- reading a report column back -----------------------------------------------------------------------------

def test_read_back_refuses_codes_that_do_not_match_their_digest():
    r = pd.Series(np.linspace(0, 1, 200), name="x").ldp.privatize(SW, rng=0)
    assert collect.aggregate_series(r) == SW.aggregate(collect.reports_of(r))
    edited = r.copy()
    edited.iloc[0] = (int(edited.iloc[0]) + 1) % SW.spec.n_cells
    for read in (collect.reports_of, collect.aggregate_series):
        with pytest.raises(ReportsChangedError, match="its 200 codes are not the codes privatized"):
            read(edited)
    with pytest.raises(ReportsChangedError, match="it holds 199 reports where 200 were privatized"):
        collect.aggregate_series(r.iloc[1:])


def test_read_back_takes_the_recorded_spec_and_one_mechanism_per_spec():
    r = pd.Series(np.linspace(0, 1, 50), name="x").ldp.privatize(SW, rng=0)
    assert collect.reports_of(r).spec == SW.spec
    assert collect.mechanism_of(SW.spec) is collect.mechanism_of(ldp.Spec.from_dict(SW.spec.to_dict()))
    with pytest.raises(ldp.exceptions.SpecMismatchError):
        collect.reports_of(r, DU.spec)
    with pytest.raises(TypeError, match="do not estimate"):
        collect.estimator(SW, "estimate_frequencies")


def test_a_shuffled_column_reads_back_as_one_shuffled_batch():
    r = pd.Series(np.linspace(0, 1, 5000), name="x").ldp.privatize(SW, rng=0, shuffled=True)
    agg = collect.aggregate_series(r)
    assert agg.shuffle is not None and agg.shuffle.epsilon < SW.epsilon


# -- the front ends import only the layer's public names ------------------------------------------------------

PACKAGE = pathlib.Path(ldp.__file__).resolve().parent
FRONT_ENDS = ("pandas", "cli", "dask", "engines")


def _imports(module):
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            yield node.module, [a.name for a in node.names]


@pytest.mark.parametrize("module", FRONT_ENDS)
def test_front_ends_import_no_private_name_of_each_other_or_of_the_layer(module):
    bad = [(src, name) for src, names in _imports(module) for name in names
           if (src in FRONT_ENDS and src != module) or (src == "collect" and name.startswith("_"))]
    bad = [b for b in bad if not (b[0] == "engines" and module == "dask" and not b[1].startswith("_"))]
    assert not bad, f"ldpnum/{module}.py imports {bad}: go through ldpnum.collect's public names"


def test_the_import_check_sees_a_planted_private_import(tmp_path, monkeypatch):
    (tmp_path / "dask.py").write_text("def f():\n    from .pandas import _mechanism\n")
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path)
    assert list(_imports("dask")) == [("pandas", ["_mechanism"])]


def test_privatize_file_refuses_two_keys_of_one_report_label_as_the_accessor_does(tmp_path):
    # it kept the last of them silently: one report column instead of the two asked for
    from ldpnum.cli import CLIError, privatize_file

    pd.DataFrame({"a": [0.5], "b": [0.5], "a,b": [0.5]}).to_csv(tmp_path / "in.csv", index=False)
    m = ldp.SampledDimensions("piecewise", 1.0, [(0, 1), (0, 1)])
    with pytest.raises(CLIError, match="two keys give the same report column label"):
        privatize_file(tmp_path / "in.csv", tmp_path / "out.parquet", {("a", "b"): m, "a,b": SW}, rng=0)
    assert not (tmp_path / "out.parquet").exists()


# -- partitions and shuffled batches --------------------------------------------------------------------------

def test_partition_streams_extend_the_run_seed_and_refuse_what_cannot_be_shared():
    assert collect.partition_rng(7, 3).spawn_key == child_rng(7, 3).spawn_key == (3,)
    assert collect.partition_rng(None, 3) is None
    ss = collect.run_seed(np.random.default_rng(1))
    assert isinstance(ss, np.random.SeedSequence) and collect.partition_rng(ss, 2).spawn_key == (2,)
    with pytest.raises(TypeError, match="a Generator cannot be shared by partitions"):
        collect.partition_rng(np.random.default_rng(0), 0)
    with pytest.raises(ValueError, match="partition_index must be >= 0; got -1"):
        collect.partition_rng(0, -1)
    with pytest.raises(TypeError, match="partition_index must be an integer; got bool"):
        collect.partition_rng(0, True)


def test_a_shuffled_aggregate_counts_the_rows_epsilon_when_it_exceeds_the_columns():
    agg = SW.aggregate(SW.privatize(np.full(5000, 0.5), rng=0))
    assert collect.declare_shuffled(agg, None) is agg
    assert collect.declare_shuffled(SW.empty_aggregate(), 1e-6) == SW.empty_aggregate()
    own = collect.declare_shuffled(agg, 1e-6)
    assert collect.declare_shuffled(agg, 1e-6, epsilon_per_row=0.5) == own  # below the column's: its own
    assert collect.declare_shuffled(agg, 1e-6, epsilon_per_row=3.0).shuffle.epsilon > own.shuffle.epsilon


def test_estimate_requests_are_one_rule_in_the_callers_words():
    # One rule (check_queries) for every front end: the Python API's words by default, the command line's through
    # its ArgumentNames; answer_queries applies it too, so an impossible question is refused, never half-answered.
    from ldpnum.io import CLIError, check_estimate_request

    duchi, grr, hh = ldp.Duchi(1.0, (0, 1)), ldp.GRR(1.0, k=4), ldp.HierarchicalHistogram(1.0, (0, 1), n_leaves=16)
    assert collect.check_queries(duchi, None) == ["mean"] and collect.check_queries(grr, None) == ["frequencies"]
    assert collect.check_queries(hh, ["range"], query=(0.1, 0.4)) == ["range"]
    for mech, kw, python, command_line in [
            (duchi, {"queries": ["quantiles"]}, "distribution=True need", "plots need"),
            (grr, {"queries": ["mean"]}, "ask for 'frequencies'", "use --what frequencies"),
            (grr, {"queries": None, "marginals": [("a", "b")]}, "marginals= need", "--marginal need"),
            (hh, {"queries": ["distribution"], "n_bins": 8}, "n_bins= does not apply", "--n-bins does not apply"),
            (hh, {"queries": ["range"], "query": {"x": (0, 1)}}, "not query={column", "not COL:LO:HI")]:
        with pytest.raises(ValueError, match=python):
            collect.check_queries(mech, kw["queries"], marginals=kw.get("marginals"), query=kw.get("query"),
                                  n_bins=kw.get("n_bins"))
        with pytest.raises(CLIError, match=command_line):
            check_estimate_request(mech, kw["queries"], marginal=kw.get("marginals") and "a,b", query=kw.get("query"),
                                   plot=None, n_bins=kw.get("n_bins"))
    agg = duchi.aggregate(duchi.privatize(np.full(50, 0.5), rng=1))
    with pytest.raises(ValueError, match="estimate means only"):
        collect.answer_queries(duchi, agg, ["quantiles"])
    with pytest.raises(ValueError, match="round= numbers the rounds"):
        collect.check_round({"x": duchi}, 2)
    collect.check_round({"x": duchi}, None)


def test_frequencies_that_need_a_dictionary_are_refused_without_candidates_before_any_report():
    # RAPPOR without segment pairs and a sketch over items decode against candidates only; the others do not need them
    for mech in (ldp.RAPPOR(k=32, h=2, cohorts=4), ldp.CountMeanSketch(2.0, width=64, hashes=16)):
        assert mech.needs_candidates
        with pytest.raises(ValueError, match="frequencies .* dictionary of items.*: pass candidates=\\[\\.\\.\\.\\]"):
            collect.check_queries(mech, None)
        assert collect.check_queries(mech, None, candidates=["a"]) == ["frequencies"]
    for mech in (ldp.RAPPOR(k=32, h=1, cohorts=4, segments=2, segment_bits=4, item_type="uint", item_bits=8),
                 ldp.CountMeanSketch(2.0, k=10, width=64, hashes=16), ldp.GRR(1.0, k=4), ldp.SquareWave(1.0, (0, 1))):
        assert not mech.needs_candidates
    assert collect.check_queries(ldp.CountMeanSketch(2.0, k=10, width=64, hashes=16), None) == ["frequencies"]


def test_quantiles_and_ranges_are_the_queryable_estimates_answers():
    x = np.random.default_rng(3).uniform(0, 1, 5000)
    agg = SW.aggregate(SW.privatize(x, rng=4))
    est = SW.queryable_estimate(agg)
    q = collect.quantiles_named(SW, agg, 0.5, "x")
    assert isinstance(q, float) and q == float(est.quantile(0.5))
    qs = collect.quantiles_named(SW, agg, [0.25, 0.75], "x")
    assert qs.name == "x" and qs.index.tolist() == [0.25, 0.75]
    np.testing.assert_array_equal(qs.to_numpy(), est.quantile(np.array([0.25, 0.75])))
    assert collect.range_query(SW, agg, 0.2, 0.6) == est.range(0.2, 0.6)
    with pytest.raises(TypeError, match="range needs lo and hi"):
        collect.range_query(SW, agg, 0.2)  # one bound and no mapping: refused, not read as a query
