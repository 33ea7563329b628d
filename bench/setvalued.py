"""Frequent items and itemsets of set-valued data: ldpnum's SVIM and SVSM against the exact truth
(``make bench``, section ``setvalued``).

No installable package ships set-valued LDP protocols (pure-ldp, multi-freq-ldpy and ldp-toolbox have none),
so the comparison is with the truth and between ldpnum's two candidate modes. No public set-valued data set
ships in a package-index package that ldpnum may depend on, so the baskets come from a documented generator
(fixed seed):

* items are the 5,000 most frequent English words of at most 8 bytes of ldpnum's embedded word list
  (``ldpnum.data.load_words``), so that every item is a whole 64-bit item (no truncation);
* 30 planted patterns of 2–3 items drawn from the 300 most frequent words; person ``i`` holds pattern ``j``
  with probability ``0.25 / (j + 1)^0.8`` (independently), so patterns overlap and share items;
* plus ``Poisson(2)`` background items drawn by word frequency (Zipf-like), duplicates removed; sets are
  capped at 20 items (larger sets are rare).

The truth: every item's frequency (share of people holding it) and every itemset's frequency among itemsets
of up to 3 items of the 40 most frequent items. An itemset holding a rarer item is no more frequent than
that item, so when the 20th true itemset is more frequent than the 41st item (checked and reported), the true
top 20 over all itemsets of up to 3 items is exact.

Metrics for the returned top k = 20 (both lists have k entries, so precision = recall = F1): F1, and MAE of the
returned items' (itemsets') frequencies against their true frequencies (0 for an itemset nobody holds).
Methods: SVIM / SVSM with candidates found by PEM (no domain needed), and with ``domain=`` the 5,000 words
(the paper's setting: a public item catalogue). Time: one ``run`` (all phases), secure randomness, after one
untimed run at n = 10^4 (JIT compile).

Runs alone: ``python bench/setvalued.py [--n 1e6]``.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SEED = 0
VOCAB = 5_000
N_PATTERNS = 30
EPSILONS = (2.0, 4.0, 8.0)
K = 20
N = 1_000_000
TRUTH_ITEMS = 40


def generate(n, seed=SEED):
    """``(sets, words)``: one list of distinct words per person, and the vocabulary."""
    from ldpnum.data import load_words

    words, freqs = load_words()
    short = np.flatnonzero([len(w.encode()) <= 8 for w in words])[:VOCAB]  # whole words fit 64-bit items
    words, p = words[short], freqs[short] / freqs[short].sum()
    rng = np.random.default_rng(seed)
    patterns = [rng.choice(300, size=int(rng.integers(2, 4)), replace=False) for _ in range(N_PATTERNS)]
    probs = 0.25 / (np.arange(N_PATTERNS) + 1.0) ** 0.8
    holds = rng.random((n, N_PATTERNS)) < probs
    n_noise = rng.poisson(2.0, n)
    noise = rng.choice(VOCAB, size=int(n_noise.sum()), p=p)
    starts = np.concatenate([[0], np.cumsum(n_noise)])
    sets = []
    pat_lists = [list(map(int, q)) for q in patterns]
    for i in range(n):
        items = set(noise[starts[i]:starts[i + 1]].tolist())
        for j in np.flatnonzero(holds[i]):
            items.update(pat_lists[j])
        sets.append(sorted(items)[:20])
    return sets, words


class Truth:
    """Exact item and itemset frequencies of the generated sets (indices into the vocabulary)."""

    def __init__(self, sets):
        n = len(sets)
        counts = np.bincount(np.fromiter((i for s in sets for i in s), dtype=np.int64), minlength=VOCAB)
        self.item_freq = counts / n
        order = np.argsort(-counts, kind="stable")
        self.top_items = [int(i) for i in order[:K]]
        top = order[:TRUTH_ITEMS]
        pos = {int(item): b for b, item in enumerate(top)}
        masks = np.fromiter((sum(1 << pos[i] for i in s if i in pos) for s in sets), dtype=np.uint64, count=n)
        uniq, mult = np.unique(masks, return_counts=True)
        self.itemset_freq = {}
        from itertools import combinations
        for size in (1, 2, 3):
            for combo in combinations(range(TRUTH_ITEMS), size):
                m = np.uint64(sum(1 << b for b in combo))
                c = int(mult[(uniq & m) == m].sum())
                self.itemset_freq[frozenset(int(top[b]) for b in combo)] = c / n
        ranked = sorted(self.itemset_freq.items(), key=lambda kv: -kv[1])
        self.top_itemsets = [s for s, _ in ranked[:K]]
        self.kth_itemset = ranked[K - 1][1]
        self.next_item = float(counts[order[TRUTH_ITEMS]] / n)
        self.exact = self.kth_itemset > self.next_item


def score(found, freqs, top, freq_of):
    hits = sum(1 for x in found if x in set(top))
    mae = float(np.mean([abs(f - freq_of(x)) for x, f in zip(found, freqs)])) if found else None
    return hits / K, mae


def run(repeats=1, n=N):
    """Measure; return ``(records, markdown)``."""
    import ldpnum as ldp

    t0 = time.perf_counter()
    sets_idx, words = generate(n)
    gen_s = time.perf_counter() - t0
    truth = Truth(sets_idx)
    index = {w: i for i, w in enumerate(words.tolist())}
    sets = [[words[i] for i in s] for s in sets_idx]
    domain = words.tolist()
    records = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no word is cut: a warning would be a bug of the generator
        for method, cls in (("SVIM", ldp.SVIM), ("SVSM", ldp.SVSM)):
            for mode in ("PEM candidates", "domain"):
                for eps in EPSILONS:
                    kw = {"domain": domain} if mode == "domain" else {}
                    proto = cls(eps, top_k=K, **kw)
                    proto.run(sets[:10_000])  # compile
                    t1 = time.perf_counter()
                    est = proto.run(sets)
                    seconds = time.perf_counter() - t1
                    if method == "SVIM":
                        found = [index.get(w, -1) for w in est.items]
                        f1, mae = score(found, est.frequencies, truth.top_items,
                                        lambda i: truth.item_freq[i] if i >= 0 else 0.0)
                    else:
                        found = [frozenset(index.get(w, -1) for w in s) for s in est.itemsets]
                        f1, mae = score(found, est.frequencies, truth.top_itemsets,
                                        lambda s: truth.itemset_freq.get(s, 0.0))
                    records.append({"method": method, "mode": mode, "epsilon": eps, "n": n, "f1": f1, "mae": mae,
                                    "seconds": seconds, "ell": est.provenance.get("ell")})
                    print(f"setvalued {method} {mode} eps={eps:g}: F1 {f1:.2f} ({seconds:.1f} s)", flush=True)
    notes = {"generate_seconds": gen_s, "truth_exact": bool(truth.exact), "kth_itemset": truth.kth_itemset,
             "next_item": truth.next_item, "mean_set_size": float(np.mean([len(s) for s in sets_idx]))}
    records.append({"notes": notes})
    return records, markdown(records)


def markdown(records):
    notes = next(r["notes"] for r in records if "notes" in r)
    rows = [r for r in records if "notes" not in r]
    lines = ["## Set-valued data: SVIM and SVSM against the truth", "",
             f"Generated baskets (bench/setvalued.py): {rows[0]['n']:,} people, {VOCAB:,} English words as items, "
             f"{N_PATTERNS} planted patterns of 2–3 words plus Poisson(2) background words; mean set size "
             f"{notes['mean_set_size']:.2f}. Truth counted exactly; the true top {K} itemsets (up to 3 items) are "
             + ("exact" if notes["truth_exact"] else "NOT certified exact")
             + f" (the {K}th has frequency {notes['kth_itemset']:.4f} > the {TRUTH_ITEMS + 1}st item's "
             f"{notes['next_item']:.4f}). F1@{K} (= precision = recall: both lists have {K} entries) and MAE of the "
             "returned frequencies (units of 1e-4); time of one `run` (all phases), secure randomness, compile "
             "excluded. No package-index library implements set-valued LDP protocols, so there is no peer column.",
             "", "| method | candidates | ε | F1@20 | MAE | ℓ | time s |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        mae = "–" if r["mae"] is None else f"{r['mae'] * 1e4:.1f}"
        lines.append(f"| {r['method']} | {r['mode']} | {r['epsilon']:g} | {r['f1']:.2f} | {mae} | {r['ell']} | "
                     f"{r['seconds']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default=str(N))
    args = ap.parse_args(argv)
    _, md = run(n=int(float(args.n)))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
