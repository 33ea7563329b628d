"""The demo: `python -m ldpnum demo` runs end to end on the embedded flights data."""

import io
import subprocess
import sys

from ldpnum import demo

# Both demo tests use 40 bootstrap replicates per column (the demo's own is 100), the fewest a 95% interval
# needs: they check what the demo prints and draws, which the number of replicates does not change (the
# replicates' own statistics are tests/estimation/test_bootstrap.py's); `make demo` runs the demo as shipped.
FEWER_REPLICATES = 40


def test_demo_without_plot(monkeypatch):
    monkeypatch.setattr(demo, "BOOTSTRAP", FEWER_REPLICATES)
    out = io.StringIO()
    assert demo.demo_distribution(out, rng=1, plot_path=None, epsilon=2.0) == 0
    assert "plot written" not in out.getvalue() and "epsilon per flight = 2 " in out.getvalue()


def test_mean_demo_table():
    out = io.StringIO()
    assert demo.demo(out, epsilons=(1.0,), rng=0) == 0
    lines = out.getvalue().splitlines()
    assert sum(line.startswith(("StochasticRounding", "Duchi", "Piecewise", "Hybrid", "Laplace")) for line in lines) == 5


def test_bad_command_exits_with_usage_error():
    res = subprocess.run([sys.executable, "-m", "ldpnum", "nope"], capture_output=True, text=True)
    assert res.returncode == 2 and "invalid choice" in res.stderr and "Traceback" not in res.stderr


def test_ldpnum_demo_command_writes_the_plot_where_it_says(tmp_path, monkeypatch, capsys):
    """`ldpnum demo` (what `make demo` runs): both tables, and the plot at the documented default path."""
    from ldpnum import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(demo, "BOOTSTRAP", FEWER_REPLICATES)
    assert cli.main(["demo", "--rng", "0"]) == 0
    text = capsys.readouterr().out
    assert text.count("W1") == 2 and "Each row: privatize all flights" in text
    assert (tmp_path / demo.PLOT_PATH).stat().st_size > 10_000
    # the flights table (demo_distribution through the accessor, rng 0, epsilon 1, with its plot): checked
    # here rather than by a second run of the same demo
    assert 'strategy="one-column-per-row"' in text and "epsilon per flight = 1 " in text
    lines = text.splitlines()
    assert any(line.startswith("dep_time  mean") for line in lines)
    assert any(line.startswith("distance  mean") for line in lines)
    assert text.count("quantile 0.5") == 2 and text.count("converged = True") == 2
    n = int(lines[0].split(":")[1].split()[0].replace(",", ""))
    reported = lines[2].split(": ")[1].split(" reports")[0]
    assert sum(int(part.split()[1].replace(",", "")) for part in reported.split(", ")) == n
    assert f"plot written to {tmp_path / demo.PLOT_PATH}" in text


def test_demo_joint_answers_the_two_column_question():
    import io

    from ldpnum.demo import demo_joint

    buf = io.StringIO()
    est = demo_joint(buf, epsilon=1.0, rng=0)
    text = buf.getvalue()
    assert "true share 0.1125" in text and "HDG" in text
    # measured error at eps = 1: +0.008 to +0.012 over seeds; a 2-D range of about a tenth of the domain has
    # a standard error near 0.01 at these granularities (bench/results/latest-multi.md: MAE 0.0067-0.0098)
    assert abs(est - 0.1125) < 0.04
