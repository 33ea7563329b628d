"""ldpnum.io: the file machinery lives below the command line, and no import circle joins the front ends
(cli, demo) or the aggregate and its report-column metadata (aggregate, _frame)."""

import ast
import os
import pathlib

import pytest

import ldpnum

ROOT = pathlib.Path(ldpnum.__file__).parent


def _imported_modules(path, root=ROOT):
    """Every ldpnum module ``path`` imports, at module level or inside a function, as a dotted name relative
    to the package ``root`` (``"cli"``, ``"heavy._result"``; ``""`` for the package itself)."""
    package = list(path.relative_to(root).parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("ldpnum")):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                base = base + ([node.module] if node.module else [])
            else:
                base = [p for p in node.module.removeprefix("ldpnum").split(".") if p]
            out.add(".".join(base))
            out.update(".".join(base + [a.name]) for a in node.names)  # `from . import cli`: a module
        elif isinstance(node, ast.Import):
            out.update(a.name.removeprefix("ldpnum").lstrip(".") for a in node.names
                       if a.name.startswith("ldpnum"))
    return out


def _imports(a, b, root=ROOT):
    """Whether module ``a`` (a name like ``"cli"``) imports module ``b`` or a name from it."""
    return any(m == b or m.startswith(b + ".") for m in _imported_modules(root / f"{a}.py", root))


@pytest.mark.parametrize("low, high", [("demo", "cli"), ("aggregate", "_frame"), ("io", "cli"),
                                       ("io", "demo")])
def test_lower_module_does_not_import_the_higher_one(low, high):
    """One direction only, at any level (a function-level import is how a circle hides): cli imports demo,
    _frame imports aggregate, cli imports io; never the other way."""
    assert not _imports(low, high), f"{low}.py imports {high}"


@pytest.mark.parametrize("a, b", [("cli", "demo"), ("aggregate", "_frame"), ("cli", "io")])
def test_no_circle_between(a, b):
    assert not (_imports(a, b) and _imports(b, a)), f"{a}.py and {b}.py import each other"


def test_circle_check_sees_function_level_and_relative_imports(tmp_path):
    """Negative control: a function-level ``from .x import y`` and a ``from . import x`` are both found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g\n")
    (pkg / "b.py").write_text("from . import a\n")
    (pkg / "sub" / "c.py").write_text("def f():\n    from ..a import f\n")
    (pkg / "d.py").write_text("def f():\n    from ldpnum import a\n    import ldpnum.b\n")
    assert _imports("a", "b", pkg) and _imports("b", "a", pkg)
    assert _imported_modules(pkg / "sub" / "c.py", pkg) == {"a", "a.f"}
    assert _imports("d", "a", pkg) and _imports("d", "b", pkg)
    assert not _imports("a", "sub", pkg)


# -- the file functions, called directly (the command line's tests reach them through `ldpnum ...`) ---------

def test_parquet_parts_lists_the_part_files_in_name_order(tmp_path):
    from ldpnum.io import CLIError, parquet_parts

    for name in ("part.1.parquet", "part.0.parquet", "b.PQ", "_SUCCESS", "_metadata.parquet",
                 ".x.parquet.tmp", ".hidden.parquet", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    names = [pathlib.Path(p).name for p in parquet_parts(str(tmp_path))]
    assert names == ["b.PQ", "part.0.parquet", "part.1.parquet"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(CLIError, match=r"directory '.*empty' holds no Parquet files \(\.parquet, \.pq\)"):
        parquet_parts(str(tmp_path / "empty"))


def test_file_kind_and_existence_are_named(tmp_path):
    from ldpnum.io import CLIError, _check_exists, _file_kind

    assert [_file_kind(n) for n in ("a.csv", "a.TSV.gz", "a.csv.zst", "a.parquet", "a.pq", "a.parq")] == \
        ["csv", "csv", "csv", "parquet", "parquet", "parquet"]
    with pytest.raises(CLIError, match="cannot tell the format of 'a.json' from its extension"):
        _file_kind("a.json")
    with pytest.raises(CLIError, match="no such file"):
        _check_exists(str(tmp_path / "nope.csv"))
    with pytest.raises(CLIError, match="is a directory, not a file"):
        _check_exists(str(tmp_path))


def test_spec_file_round_trip(tmp_path):
    from ldpnum.io import CLIError, expected_shuffle_file, expected_spec_file, write_spec_file

    spec = ldpnum.Duchi(epsilon=1.0, bounds=(0, 1)).spec
    plain, shuffled, lone = tmp_path / "plain.json", tmp_path / "shuffled.json", tmp_path / "lone.json"
    write_spec_file(plain, {"x": spec})
    write_spec_file(shuffled, {"x": spec}, shuffle_delta=1e-6)
    lone.write_text(spec.to_json())
    assert expected_spec_file(plain, "x") == spec == expected_spec_file(lone, "any column")
    assert expected_shuffle_file(plain) == (True, None)
    assert expected_shuffle_file(shuffled) == (True, 1e-6)
    assert expected_shuffle_file(lone) == (False, None)  # a lone spec states no declaration
    with pytest.raises(CLIError, match=r"states no spec for column 'y' \(it has 'x'\)"):
        expected_spec_file(plain, "y")
    with pytest.raises(CLIError, match="cannot read --expect-spec file"):
        expected_spec_file(tmp_path / "nope.json", "x")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(CLIError, match="is not JSON"):
        expected_spec_file(tmp_path / "bad.json", "x")


def test_key_file(tmp_path):
    from ldpnum.io import CLIError, read_key

    assert read_key(None) is None
    (tmp_path / "key").write_bytes(b"0123456789abcdef\n")
    assert read_key(tmp_path / "key") == b"0123456789abcdef"
    (tmp_path / "short").write_bytes(b"0123456789abcde\r\n")
    with pytest.raises(CLIError, match="holds 15 bytes; a collector key needs at least 16"):
        read_key(tmp_path / "short")
    with pytest.raises(CLIError, match="cannot read --mac-key-file"):
        read_key(tmp_path / "nope")


def test_ledger_file_and_atomic_writes(tmp_path):
    from ldpnum.io import CLIError, read_ledger, write_atomic

    path = str(tmp_path / "ledger.json")
    ledger = read_ledger(path, 3.0)  # no file yet: a new ledger with the cap
    assert ledger.cap == 3.0
    ledger.record(epsilon=1.0, people=["a", "b"])
    write_atomic(path, ledger.to_json())
    assert [p.name for p in tmp_path.iterdir()] == ["ledger.json"]  # no temporary left beside it
    again = read_ledger(path, None)
    assert again.cap == 3.0 and again.total("a") == 1.0
    with pytest.raises(CLIError, match=r"--ledger-cap 2 differs from the cap recorded in .* \(3.0\)"):
        read_ledger(path, 2.0)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(CLIError, match=r"^--ledger '.*bad.json': "):
        read_ledger(str(tmp_path / "bad.json"), None)
    with pytest.raises(CLIError, match="cannot write"):
        write_atomic(str(tmp_path / "no-such-dir" / "ledger.json"), "{}")


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path):
    import subprocess
    import sys

    from ldpnum.io import _remove_stale_temporaries

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead = int(done.stdout)  # a process that has ended
    out = tmp_path / "r.parquet"
    stale = tmp_path / f".r.parquet.{dead}.abc.tmp"
    live = tmp_path / f".r.parquet.{os.getpid()}.abc.tmp.final"
    other = tmp_path / f".other.parquet.{dead}.abc.tmp"
    for p in (stale, live, other):
        p.write_bytes(b"")
    _remove_stale_temporaries(str(out))
    assert not stale.exists() and live.exists() and other.exists()


def test_aggregate_file_refuses_a_key_without_a_record(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from ldpnum.io import CLIError, aggregate_file

    spec = ldpnum.Duchi(epsilon=1.0, bounds=(0, 1)).spec
    pd.DataFrame({"x": [0, 1, 1]}).to_parquet(tmp_path / "plain.parquet")
    agg, n_missing = aggregate_file(tmp_path / "plain.parquet", "x", spec=spec)
    assert agg.n_reports == 3 and n_missing == 0
    with pytest.raises(CLIError, match="carries no ldpnum record to check the MAC of"):
        aggregate_file(tmp_path / "plain.parquet", "x", spec=spec, key=b"k" * 16)
    with pytest.raises(CLIError, match="carries no ldpnum spec"):
        aggregate_file(tmp_path / "plain.parquet", "x")


def test_aggregate_file_declares_a_shuffled_file_as_the_pandas_read_back_does(tmp_path):
    """One shuffle rule for every read-back (collect.declare_shuffled): the rows' ε when it exceeds the
    column's (an int in the record counts like a float), and a malformed declaration is refused by name."""
    pd = pytest.importorskip("pandas")
    pq = pytest.importorskip("pyarrow.parquet")
    import numpy as np

    from ldpnum._frame import specs_from_parquet_metadata
    from ldpnum.collect import declare_shuffled
    from ldpnum.io import CLIError, _with_record, aggregate_file, privatize_file

    m = ldpnum.SquareWave(epsilon=1.0, bounds=(0, 1))
    pd.DataFrame({"x": np.linspace(0, 1, 3000), "y": np.linspace(1, 0, 3000)}).to_csv(tmp_path / "in.csv",
                                                                                      index=False)
    out = tmp_path / "r.parquet"
    privatize_file(tmp_path / "in.csv", out, {"x": m, "y": m}, rng=0, shuffle_delta=1e-6)
    agg, _ = aggregate_file(out, "x")

    def rewrite(**changes):
        table = pq.read_table(out)
        info = {**specs_from_parquet_metadata(table.schema.metadata), **changes}
        path = tmp_path / "edited.parquet"
        pq.write_table(table.replace_schema_metadata(_with_record(table.schema.metadata, info)), path)
        return path

    plain, _ = aggregate_file(rewrite(shuffle_delta=None), "x")
    assert plain.shuffle is None and agg.shuffle is not None
    assert agg.shuffle == declare_shuffled(plain, 1e-6, 2.0).shuffle == plain.shuffled(1e-6, epsilon0=2.0).shuffle
    assert aggregate_file(rewrite(epsilon_per_row=2), "x")[0].shuffle == agg.shuffle
    with pytest.raises(CLIError, match="carries a malformed shuffle declaration"):
        aggregate_file(rewrite(shuffle_delta="abc"), "x")


def _dictionary_file(path, groups):
    """A Parquet file of one dictionary column ``q``, one row group per list of values (each its own dictionary)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = [pa.table({"q": pa.array(values).dictionary_encode()}) for values in groups]
    with pq.ParquetWriter(path, tables[0].schema) as writer:
        for table in tables:
            writer.write_table(table)
    assert pq.ParquetFile(path).metadata.num_row_groups == len(groups)
    return path


def test_dictionary_categories_reads_every_row_group(tmp_path):
    import pandas as pd

    from ldpnum.io import dictionary_categories

    # pandas writes the whole declared dictionary, unused categories included, to each of the row groups
    declared = pd.CategoricalDtype(["yes", "no", "maybe", "never"])
    pd.DataFrame({"q": pd.Series(["no", "maybe", "yes", "no", "maybe"], dtype=declared)}).to_parquet(
        tmp_path / "p.parquet", row_group_size=2)
    assert dictionary_categories(tmp_path / "p.parquet", "q") == ["yes", "no", "maybe", "never"]
    # row groups with their own dictionaries: the union in order of first appearance, as pandas reads it back
    path = _dictionary_file(tmp_path / "u.parquet", [["b", "a", "b"], ["a"], ["c", "a", "d"]])
    assert dictionary_categories(path, "q") == ["b", "a", "c", "d"]
    assert pd.read_parquet(path)["q"].cat.categories.tolist() == ["b", "a", "c", "d"]
    # the first row group alone (the old reading) misses c and d
    assert dictionary_categories(_dictionary_file(tmp_path / "f.parquet", [["b", "a"]]), "q") == ["b", "a"]
    # two row groups that order shared categories the other way round: refused, naming both
    path = _dictionary_file(tmp_path / "x.parquet", [["x", "a", "b"], ["c", "b", "a"]])
    with pytest.raises(ValueError, match="row group 1 lists category 'b' before 'a', row group 0 the other way"):
        dictionary_categories(path, "q")


def test_privatize_takes_the_categories_of_every_row_group(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    from ldpnum import cli
    from ldpnum._random import child_rng

    groups = [["b", "a", "b"] * 100, ["a"] * 50, ["c", "a", "d"] * 100]
    path = _dictionary_file(tmp_path / "in.parquet", groups)
    out = tmp_path / "out.parquet"
    assert cli.main(["privatize", str(path), str(out), "-c", "q", "-m", "grr", "-e", "2", "--rng", "1"]) == 0
    assert "4 categories read from the file's dictionary (b, a, c, d)" in capsys.readouterr().err
    labels = ["b", "a", "c", "d"]
    codes = np.array([labels.index(v) for g in groups for v in g])
    direct = ldpnum.GRR(2.0, k=4).privatize(codes, rng=child_rng(1, 0))
    np.testing.assert_array_equal(pd.read_parquet(out)["q"].to_numpy(), direct.codes)
    bad = _dictionary_file(tmp_path / "bad.parquet", [["a", "b"], ["b", "a"]])
    assert cli.main(["privatize", str(bad), str(tmp_path / "o2.parquet"), "-c", "q", "-m", "grr", "-e", "2"]) == 2
    assert "the categories' order (their codes) is ambiguous" in capsys.readouterr().err
    assert not (tmp_path / "o2.parquet").exists()
