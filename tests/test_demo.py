"""The demo: `python -m ldpnum demo` runs end to end on the embedded flights data."""

import io
import subprocess
import sys

from ldpnum import demo


def test_demo_distribution_prints_and_plots(tmp_path):
    out = io.StringIO()
    path = tmp_path / "plot.png"
    assert demo.demo_distribution(out, rng=0, plot_path=str(path)) == 0
    text = out.getvalue()
    assert "W1 =" in text and "quantile 0.5" in text and "converged = True" in text
    assert path.exists() and path.stat().st_size > 10_000


def test_mean_demo_table():
    out = io.StringIO()
    assert demo.demo(out, epsilons=(1.0,), rng=0) == 0
    lines = out.getvalue().splitlines()
    assert sum(line.startswith(("StochasticRounding", "Duchi", "Piecewise", "Hybrid", "Laplace")) for line in lines) == 5


def test_bad_command_exits_with_usage_error():
    res = subprocess.run([sys.executable, "-m", "ldpnum", "nope"], capture_output=True, text=True)
    assert res.returncode == 2 and "invalid choice" in res.stderr and "Traceback" not in res.stderr
