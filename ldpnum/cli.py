"""Command line of ldpnum: ``python -m ldpnum demo``.

The demo reconstructs the distribution of the embedded flights' departure times under Square Wave + EMS,
then compares every mean oracle on their distances.

Errors caused by the user print one line and exit with status 2, without a traceback.
"""

import argparse
import sys

__all__ = ["main"]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ldpnum", description="Numerical data under local differential privacy.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="privatize the embedded NYC flights data and compare estimates with the truth")
    p_demo.add_argument("--rng", type=int, default=None, help="seed for a reproducible simulation (default: secure)")
    p_demo.add_argument("--plot", default="demo-output/dep_time_square_wave.png",
                        help="where to write the PNG of estimated vs true distribution ('' for none)")
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            from .demo import demo, demo_distribution

            demo_distribution(rng=args.rng, plot_path=args.plot)
            print()
            return demo(rng=args.rng)
    except (ValueError, TypeError, OSError) as exc:
        print(f"ldpnum: error: {exc}", file=sys.stderr)
        return 2
    return 0


def main_exit():
    """Entry point of the ``ldpnum`` console script: :func:`main`'s return value is the exit status."""
    sys.exit(main())
