"""Square Wave's bandwidth as a lever for distribution estimation (issue: better estimates than SW + EMS).

The default half-width b of Square Wave is Li et al.'s choice maximizing the mutual information between input
and output (``ldpnum.mechanisms.wave.square_wave_bandwidth``). This sweep multiplies it by a factor and measures
W1 and KS of EMS and of the default estimator (``ems-cv``) on Beta(5, 2), 1024 buckets, against EMS at the
default b (ratios < 1 are better), with the samples and privatization seeds of ``bench/dist_candidates.py``.

Usage: ``python bench/experiments/bandwidth.py N[,N] EPS[,EPS] FACTOR[,FACTOR] SEEDS`` prints markdown rows;
``bandwidth.out.md`` holds the run quoted in the issue notes (n = 1e5 and 1e6, ε = 0.5 / 1 / 2 / 4, 5 seeds).
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import dist_candidates as dc  # noqa: E402


def main(argv):
    ns = [int(a) for a in argv[0].split(",")]
    eps_list = [float(a) for a in argv[1].split(",")]
    factors = [float(a) for a in argv[2].split(",")]
    seeds = int(argv[3])
    if 1.0 not in factors:
        raise SystemExit("the factors must include 1.0 (the baseline)")
    print("| n | ε | b factor | method | W1 | KS | W1 / EMS(b) | KS / EMS(b) |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|")
    for n in ns:
        for eps in eps_list:
            rows = []
            for f in factors:
                rows += dc.cell("Beta(5, 2)", (0.0, 1.0), n, lambda s, n=n: dc.beta_sample(n, s), eps, seeds,
                                ("ems", "ems-cv"), bandwidth_factor=f)
            base = next(r for r in rows if r["bandwidth_factor"] == 1.0 and r["method"] == "ems")
            for r in rows:
                print(f"| {n:.0e} | {eps:g} | {r['bandwidth_factor']:g} | {r['method']} | {r['w1']:.5f} ± "
                      f"{r['w1_se']:.5f} | {r['ks']:.5f} ± {r['ks_se']:.5f} | {r['w1'] / base['w1']:.2f} | "
                      f"{r['ks'] / base['ks']:.2f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
