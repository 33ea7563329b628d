"""The command line of longitudinal collection: `ldpnum keys generate`, `privatize --keys --round`, the ledger
charged per memoized value, `estimate` per round, and the bad-input matrix (one error, nothing written)."""

import json
import os
import stat

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import cli
from ldpnum import io as ldpnum_io
from ldpnum.exceptions import SpecMismatchError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

N = 3000
K = 8
ROUNDS = 3
LGRR = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=0.75, k=K)
SPEC = json.dumps(LGRR.spec.to_dict())


def run(argv, capsys):
    """``main(argv)`` in-process: (exit status, stdout, stderr); a usage error's exit is its status."""
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exc:  # argparse refuses the arguments
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def _rounds(seed=0):
    """Each round's table: every person once (ids not in order), 10% of them with a new value each round."""
    rng = np.random.default_rng(seed)
    pid = rng.permutation(N) * 7 + 100
    value = rng.integers(0, K, N)
    days = []
    for r in range(ROUNDS):
        if r:
            moved = rng.random(N) < 0.1
            value = np.where(moved, (value + rng.integers(1, K, N)) % K, value)
        order = rng.permutation(N)
        days.append(pd.DataFrame({"pid": pid[order], "app": value[order], "age": rng.uniform(0, 100, N)[order]}))
    return days


@pytest.fixture(scope="module")
def days():
    return _rounds()


@pytest.fixture(scope="module")
def files(days, tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-keys")
    for r, day in enumerate(days):
        day.to_csv(d / f"day{r}.csv", index=False)
        day.to_parquet(d / f"day{r}.parquet", row_group_size=700)
    pd.DataFrame({"pid": np.sort(days[0]["pid"].to_numpy())}).to_csv(d / "people.csv", index=False)
    return d


@pytest.fixture(scope="module")
def key_file(files):
    path = files / "keys.parquet"
    assert cli.main(["keys", "generate", "--people", str(files / "people.csv"), "--people-column", "pid", str(path),
                     "--rng", "11"]) == 0
    return path


def _frame_keys(path):
    """The key file as pandas reads it: ClientKeys.to_frame(index=person ids)."""
    return pd.read_parquet(path)


# -- keys generate ----------------------------------------------------------------------------------------------
def test_keys_generate_writes_a_private_file_and_prints_only_the_fingerprint(files, tmp_path, capsys):
    out = tmp_path / "k.parquet"
    status, stdout, err = run(["keys", "generate", "--people", files / "people.csv", "--people-column", "pid", out],
                              capsys)
    assert status == 0, err
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    table = pq.read_table(out)
    assert [str(table.schema.field(c).type) for c in ("key0", "key1")] == ["uint64", "uint64"]
    frame = pd.read_parquet(out)
    assert frame.index.name == "pid" and len(frame) == N
    # the ids in the file's order, kept as ints (pandas reads them back as the data's index)
    assert frame.index.dtype == np.int64
    assert frame.index.tolist() == [int(v) for v in files.joinpath("people.csv").read_text().split()[1:]]
    keys = ldp.ClientKeys.from_frame(frame)
    assert f"fingerprint: {keys.fingerprint}" in stdout and f"{N:,} client keys" in stdout
    assert "secure source" in stdout
    words = keys.to_array()
    for w in (words[0, 0], words[0, 1], words[N - 1, 0]):  # never a key on the screen
        assert str(int(w)) not in stdout and f"{int(w):x}" not in stdout
    # Secure by default: a second run gives other keys.
    status, stdout2, _ = run(["keys", "generate", N, tmp_path / "k2.npy"], capsys)
    assert status == 0 and stat.S_IMODE(os.stat(tmp_path / "k2.npy").st_mode) == 0o600
    assert ldp.ClientKeys.load(tmp_path / "k2.npy") != keys and len(ldp.ClientKeys.load(tmp_path / "k2.npy")) == N


def test_text_ids_are_kept_as_text(tmp_path, capsys):
    pd.DataFrame({"who": ["ann", "007", "bob", "ann"]}).to_csv(tmp_path / "people.csv", index=False)
    status, stdout, err = run(["keys", "generate", tmp_path / "k.parquet", "--people", tmp_path / "people.csv",
                               "--people-column", "who"], capsys)
    assert status == 0, err
    assert "3 client keys" in stdout  # one per distinct person
    assert pd.read_parquet(tmp_path / "k.parquet").index.tolist() == ["ann", "007", "bob"]


def test_seeded_keys_are_those_of_client_keys_generate(files, key_file, tmp_path, capsys):
    assert ldp.ClientKeys.from_frame(pd.read_parquet(key_file)) == ldp.ClientKeys.generate(N, rng=11)
    status, stdout, _ = run(["keys", "generate", 5, tmp_path / "k.npy", "--rng", 3], capsys)
    assert status == 0 and "SIMULATION" in stdout
    assert ldp.ClientKeys.load(tmp_path / "k.npy") == ldp.ClientKeys.generate(5, rng=3)


@pytest.mark.parametrize("argv, fragments", [
    (["5", "{d}/keys.parquet"], ["exists", "never overwritten"]),
    (["7", "{t}/k.parquet", "--people", "{d}/people.csv", "--people-column", "pid"], ["N is 7", "3,000 distinct"]),
    (["{t}/k.parquet", "--people", "{d}/people.csv"], ["--people FILE and --people-column C go together"]),
    (["{t}/k.parquet"], ["give N"]),
    (["5", "{t}/k.txt"], ["cannot tell the format of key file"]),
    (["{t}/k.npy", "--people", "{d}/people.csv", "--people-column", "pid"], ["Parquet key files only"]),
    (["{t}/k.parquet", "--people", "{d}/people.csv", "--people-column", "who"], ["no column 'who'"]),
])
def test_keys_generate_errors(argv, fragments, files, key_file, tmp_path, capsys):
    before = key_file.read_bytes()
    status, _, err = run(["keys", "generate", *[a.format(d=files, t=tmp_path) for a in argv]], capsys)
    assert status == 2 and err.startswith("ldpnum: error:") and "Traceback" not in err
    for f in fragments:
        assert f in err, err
    assert key_file.read_bytes() == before and not list(tmp_path.iterdir())


# -- privatize, estimate, ledger: three rounds end to end --------------------------------------------------------
def test_three_rounds_end_to_end(days, files, key_file, tmp_path, capsys):
    ledger = tmp_path / "ledger.json"
    frame_keys = _frame_keys(key_file)
    for r in range(ROUNDS):
        out = tmp_path / f"r{r}.parquet"
        status, stdout, err = run(["privatize", files / f"day{r}.csv", out, "--column", "app", "--spec", SPEC,
                                   "--keys", key_file, "--people-column", "pid", "--round", r, "--rng", 40 + r,
                                   "--ledger", ledger, "--label", f"day {r}"], capsys)
        assert status == 0, err
        assert f"round={r}" in stdout and "eps_inf" in stdout
        # The reports are the pandas accessor's on the same data, keys and seed.
        expected = days[r].set_index("pid").ldp.privatize({"app": LGRR}, keys=frame_keys, round=r, rng=40 + r)
        got = pd.read_parquet(out)
        assert np.array_equal(got["app"].to_numpy(), expected["app"].to_numpy())
        assert got["app"].ldp.spec == LGRR.at_round(r).spec
        # estimate per round: the header shows the round and both epsilons; the estimate is the in-memory one
        status, stdout, err = run(["estimate", out, "--column", "app"], capsys)
        assert status == 0, err
        assert f"longitudinal (round {r}): epsilon 0.75 per report (eps_1), at most 2 per memoized value" in stdout
        status, stdout, err = run(["estimate", out, "--column", "app", "--json"], capsys)
        doc = json.loads(stdout)
        assert doc["longitudinal"] == {"round": r, "epsilon_report": 0.75, "epsilon_permanent": 2.0}
        est = expected["app"].ldp.estimate_frequencies()
        assert doc["frequencies"]["frequency"] == est.frequencies.tolist()
    with pytest.raises(SpecMismatchError, match="round"):
        pd.read_parquet(tmp_path / "r0.parquet")["app"].ldp.aggregate() + \
            pd.read_parquet(tmp_path / "r1.parquet")["app"].ldp.aggregate()
    # The ledger's totals are the memoized bound: per person, sum over the distinct values they reported of
    # min(eps_inf, reports x eps_1); naive repeated collection would be 3 x 0.75 for everyone.
    history = pd.concat([d.set_index("pid")["app"] for d in days], axis=1)
    expected_total = {}
    for pid, values in history.iterrows():
        counts = values.value_counts()
        expected_total[str(pid)] = float(sum(min(2.0, c * 0.75) for c in counts))
    totals = ldp.PrivacyLedger.from_json(ledger.read_text()).totals()
    assert len(totals) == N
    assert np.allclose(totals.sort_index().to_numpy(), pd.Series(expected_total).sort_index().to_numpy())
    assert set(np.round(totals.unique(), 6)) == {2.0, 2.25}  # unchanged people (capped at eps_inf), and the others
    # A round reused for a person: the ledger's error, nothing written, the ledger unchanged.
    before = ledger.read_text()
    status, _, err = run(["privatize", files / "day2.csv", tmp_path / "again.parquet", "--column", "app", "--spec",
                          SPEC, "--keys", key_file, "--people-column", "pid", "--round", 1, "--ledger", ledger],
                         capsys)
    assert status == 2 and "round 1" in err and "already recorded" in err
    assert not (tmp_path / "again.parquet").exists() and ledger.read_text() == before


def test_reports_do_not_depend_on_batch_size_or_input_format(files, key_file, tmp_path, capsys):
    outs = []
    for src, batch in (("day0.csv", 1 << 20), ("day0.csv", 257), ("day0.parquet", 1000)):
        out = tmp_path / f"{src}.{batch}.parquet"
        status, _, err = run(["privatize", files / src, out, "--column", "app", "--spec", SPEC, "--column", "age",
                              "--spec", json.dumps(ldp.Duchi(0.5, (0, 100)).spec.to_dict()), "--keys", key_file,
                              "--people-column", "pid", "--round", 0, "--rng", 3, "--batch-size", batch], capsys)
        assert status == 0, err
        outs.append(pq.read_table(out))
    assert outs[0].equals(outs[1]) and outs[0].equals(outs[2])


def test_keys_without_ids_are_taken_row_for_row(days, files, tmp_path, capsys):
    keys = ldp.ClientKeys.generate(N, rng=5)
    keys.save(tmp_path / "rows.npy")
    out = tmp_path / "r.parquet"
    status, _, err = run(["privatize", files / "day0.parquet", out, "--column", "app", "--spec", SPEC, "--keys",
                          tmp_path / "rows.npy", "--rng", 2, "--batch-size", 999], capsys)
    assert status == 0, err
    expected = days[0].ldp.privatize({"app": LGRR}, keys=keys, rng=2)
    assert np.array_equal(pd.read_parquet(out)["app"].to_numpy(), expected["app"].to_numpy())


def test_the_ledger_of_a_memoized_and_a_one_shot_column(files, key_file, tmp_path, capsys):
    ledger = tmp_path / "ledger.json"
    duchi = json.dumps(ldp.Duchi(0.5, (0, 100)).spec.to_dict())
    for r in range(2):
        status, _, err = run(["privatize", files / "day0.csv", tmp_path / f"r{r}.parquet", "--column", "app",
                              "--column", "age", "--spec", SPEC, "--spec", duchi, "--keys", key_file,
                              "--people-column", "pid", "--round", r, "--ledger", ledger], capsys)
        assert status == 0, err
    totals = ldp.PrivacyLedger.from_json(ledger.read_text()).totals()
    assert np.allclose(totals, 1.5 + 2 * 0.5)  # app: min(2, 2 x 0.75); age: 0.5 per collection
    # The cap is checked before anything is drawn, with the memoized values' fingerprints.
    status, _, err = run(["privatize", files / "day0.csv", tmp_path / "over.parquet", "--column", "app", "--column",
                          "age", "--spec", SPEC, "--spec", duchi, "--keys", key_file, "--people-column", "pid",
                          "--round", 2, "--ledger", tmp_path / "capped.json", "--ledger-cap", 1.0], capsys)
    assert status == 2 and "above the cap 1" in err and not (tmp_path / "over.parquet").exists()


# -- the bad-input matrix: one clear error, exit status 2, nothing written ---------------------------------------
def _write_bad_key_files(d, days):
    keys = ldp.ClientKeys.generate(N, rng=9)
    keys[: N - 1].save(d / "short.npy")
    others = keys.to_frame(index=pd.Index([str(v) for v in np.arange(N) + 10**6], name="pid"))
    others.to_parquet(d / "others.parquet")
    partly = keys.to_frame(index=pd.Index([str(v) for v in days[0]["pid"]], name="pid")).iloc[1:]
    partly.to_parquet(d / "partly.parquet")
    wrong = keys.to_frame().astype("int64")
    wrong.to_parquet(d / "int64.parquet")
    pd.DataFrame({"k0": keys.to_array()[:, 0]}).to_parquet(d / "nocolumns.parquet")
    np.save(d / "floats.npy", np.zeros((N, 2)))
    (d / "garbage.npy").write_bytes(b"not a key file")
    ldpnum_io.write_keys_file(d / "changed.parquet", keys, people=days[0]["pid"])
    table = pq.read_table(d / "changed.parquet")
    table = table.set_column(0, "key0", pa.array(np.roll(table.column("key0").to_numpy(), 1), type=pa.uint64()))
    pq.write_table(table, d / "changed.parquet")  # the keys changed, the recorded fingerprint kept
    return str(days[0]["pid"].iloc[0])


BASE = ["--column", "app", "--spec", SPEC]


@pytest.mark.parametrize("extra, fragments", [
    ([], ["column 'app' is longitudinal", "--keys FILE"]),
    (["--keys", "{t}/short.npy"], ["holds 2,999 keys", "3,000 rows"]),
    (["--keys", "{t}/others.parquet", "--people-column", "pid"], ["no key for 3000", "first '", "other people"]),
    (["--keys", "{t}/partly.parquet", "--people-column", "pid"], ["no key for 1 of", "first '{first}' (row 0)"]),
    (["--keys", "{t}/others.parquet"], ["holds the keys of named people", "--people-column"]),
    (["--keys", "{t}/int64.parquet"], ["'key0' holds int64 values", "uint64"]),
    (["--keys", "{t}/nocolumns.parquet"], ["no column 'key0'"]),
    (["--keys", "{t}/changed.parquet", "--people-column", "pid"], ["does not hold the keys it was written with"]),
    (["--keys", "{t}/floats.npy"], ["uint64 words", "float64"]),
    (["--keys", "{t}/garbage.npy"], ["cannot read key file"]),
    (["--keys", "{t}/missing.npy"], ["no such file"]),
    (["--keys", "{t}/short.npy", "--round", "-1"], ["--round", "a round is a non-negative integer; got -1"]),
    (["--keys", "{k}", "--people-column", "pid", "--shuffled"], ["--shuffled is not available for longitudinal"]),
    (["--keys", "{k}", "--people-column", "pid", "--column", "age", "--spec",
      json.dumps(ldp.Duchi(0.5, (0, 100)).spec.to_dict()), "--strategy", "one-column-per-row", "--ledger",
      "{t}/l.json"], ["one-column-per-row is not supported"]),
])
def test_bad_keys_and_rounds(extra, fragments, days, files, key_file, tmp_path, capsys):
    first = _write_bad_key_files(tmp_path, days)
    out = tmp_path / "out.parquet"
    argv = ["privatize", files / "day0.csv", out, *BASE, *[str(a).replace("{t}", str(tmp_path)).replace("{k}", str(key_file)) for a in extra]]
    status, stdout, err = run(argv, capsys)
    assert status == 2 and "Traceback" not in err
    for f in fragments:
        assert f.format(first=first) in err, err
    assert not out.exists() and not (tmp_path / "l.json").exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".out.parquet")]  # no hidden file left


@pytest.mark.parametrize("argv, fragments", [
    (["--column", "x", "--mechanism", "sw", "-e", 1, "-b", 0, 1, "--keys", "{k}"], ["none of the columns is memoized"]),
    (["--column", "x", "--mechanism", "sw", "-e", 1, "-b", 0, 1, "--round", 2], ["none of the columns is longitudinal"]),
    (["--column", "app", "--mechanism", "lgrr", "-e", 1, "-b", 0, 1], ["LGRR is not a mechanism for numerical",
                                                                      "--column C --spec JSON"]),
    (["--column", "app", "--spec", SPEC, "--epsilon", 1, "--keys", "{k}"], ["--epsilon", "whole from the spec"]),
    (["--column", "app", "--column", "age", "--spec", SPEC, "--spec", SPEC, "--spec", SPEC],
     ["--spec was given 3 times for 2 --column(s)"]),
    (["--column", "x", "--mechanism", "sw", "-e", 1, "-b", 0, 1, "--column", "app", "--spec", SPEC],
     ["to mix mechanisms with and without bounds", "every --column's mechanism as a --spec"]),
])
def test_options_that_do_not_go_together(argv, fragments, files, key_file, tmp_path, capsys):
    pd.DataFrame({"x": [0.5, 0.2], "app": [1, 2], "age": [3.0, 4.0]}).to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "out.parquet"
    status, _, err = run(["privatize", tmp_path / "in.csv", out, *[str(a).replace("{k}", str(key_file)) for a in argv]], capsys)
    assert status == 2
    for f in fragments:
        assert f in err, err
    assert not out.exists()


def test_categorical_values_must_be_whole_numbers_and_missing_ones_are_counted(files, tmp_path, capsys):
    keys = ldp.ClientKeys.generate(4, rng=0)
    keys.save(tmp_path / "k.npy")
    for values, fragment in (([1, 2.5, 3, 0], "integer category codes"), ([1, None, 3, None], "2 missing")):
        pd.DataFrame({"app": values}).to_csv(tmp_path / "in.csv", index=False)
        status, _, err = run(["privatize", tmp_path / "in.csv", tmp_path / "o.parquet", *BASE, "--keys",
                              tmp_path / "k.npy"], capsys)
        assert status == 2 and fragment in err, err
        assert not (tmp_path / "o.parquet").exists()
