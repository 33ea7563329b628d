"""Command line of ldpnum: ``python -m ldpnum demo``.

Errors caused by the user print one line and exit with status 2, without a traceback.
"""

import argparse
import sys
import time

import numpy as np

__all__ = ["main", "demo"]


def demo(out=sys.stdout, *, epsilons=(0.5, 1.0, 2.0, 4.0), rng=None):
    """Privatize the flights' distances with every mean oracle and compare the estimates with the truth.

    Each of the 336,776 flights is one "person": its distance (miles, public bounds 0–5000) is randomized
    by the mechanism, and the mean is estimated from the reports alone. Uses secure randomness unless
    ``rng`` is given.
    """
    from . import Duchi, Hybrid, Laplace, Piecewise, StochasticRounding
    from .data import load_flights

    distance = load_flights(["distance"])["distance"].to_numpy(dtype=np.float64)
    bounds = (0.0, 5000.0)
    true_mean = distance.mean()
    print(f"NYC flights 2013: n = {distance.size:,} distances (miles), public bounds {bounds}, "
          f"true mean {true_mean:.2f}", file=out)
    print(f"{'mechanism':<20}{'epsilon':>8}{'estimate':>12}{'95% CI':>24}{'error':>10}{'covers':>8}{'time':>9}",
          file=out)
    for cls in (StochasticRounding, Duchi, Piecewise, Hybrid, Laplace):
        for eps in epsilons:
            t0 = time.perf_counter()
            m = cls(epsilon=eps, bounds=bounds)
            est = m.estimate_mean(m.aggregate(m.privatize(distance, rng=rng)))
            elapsed = time.perf_counter() - t0
            lo, hi = est.confidence_interval(0.95)
            print(f"{cls.__name__:<20}{eps:>8g}{est.value:>12.2f}{f'[{lo:.2f}, {hi:.2f}]':>24}"
                  f"{est.value - true_mean:>+10.2f}{'yes' if lo <= true_mean <= hi else 'NO':>8}"
                  f"{elapsed * 1000:>7.0f}ms", file=out)
    print("Each row: privatize all flights + aggregate + estimate (first rows include JIT start-up).", file=out)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ldpnum", description="Numerical data under local differential privacy.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="privatize the embedded NYC flights data and compare estimates with the truth")
    p_demo.add_argument("--rng", type=int, default=None, help="seed for a reproducible simulation (default: secure)")
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return demo(rng=args.rng)
    except (ValueError, TypeError, OSError) as exc:
        print(f"ldpnum: error: {exc}", file=sys.stderr)
        return 2
    return 0
