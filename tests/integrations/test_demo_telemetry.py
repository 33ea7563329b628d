"""`ldpnum demo telemetry`: the simulated devices, the per-round table and the ledger's memoized totals."""

import io

import numpy as np

from ldpnum.cli import main
from ldpnum.demo import demo_telemetry, telemetry_population


def test_population_changes_at_the_stated_rate_with_zipf_popularity():
    values = telemetry_population(20_000, 6, 8, 0.10, seed=3)
    moved = np.mean(values[:, 1:] != values[:, :-1])
    assert abs(moved - 0.10) < 5 * np.sqrt(0.1 * 0.9 / values[:, 1:].size)
    pop = 1 / np.arange(1, 9)
    pop /= pop.sum()
    share = np.bincount(values[:, 0], minlength=8) / 20_000
    assert np.all(np.abs(share - pop) < 5 * np.sqrt(pop * (1 - pop) / 20_000))
    assert np.array_equal(values, telemetry_population(20_000, 6, 8, 0.10, seed=3))


def test_demo_charges_each_device_its_memoized_bound():
    out = io.StringIO()
    ledger = demo_telemetry(out, n=3000, rounds=6, rng=0)
    text = out.getvalue()
    assert text.count("\n") == 3 + 6 + 1
    values = telemetry_population(3000, 6, 8, 0.10)
    want = np.array([sum(min(2.0, c * 0.5) for c in np.unique(row, return_counts=True)[1]) for row in values])
    assert np.allclose(ledger.totals().reindex(np.arange(3000)).to_numpy(), want)
    assert "against 3 for naive daily collection" in text


def test_cli_runs_the_telemetry_demo(capsys):
    assert main(["demo", "telemetry", "--n", "1000", "--rng", "2"]) == 0
    assert "after 30 days" in capsys.readouterr().out
    assert main(["demo", "telemetry", "--top-k", "3"]) != 0
    assert "takes --n and --rng only" in capsys.readouterr().err
