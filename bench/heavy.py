"""Heavy hitters on a real Zipfian word list: ldpnum's PEM and TreeHist against pure-ldp's (``make bench``,
section ``heavy``).

Data: the 100,000 most frequent English words of the ``wordfreq`` package (``top_n_list("en", 100_000)``),
n people drawn with replacement in proportion to ``word_frequency(word, "en")`` (NumPy ``default_rng(SEED)``).
Each person's item is the word's UTF-8 bytes; at ``item_bits=64`` ldpnum keeps the first 8 bytes, so words
sharing their first 8 bytes become one item. The truth (the top 20 and top 50 items and every item's frequency)
is counted on these truncated items in the people actually measured, and pure-ldp gets the same truncated
items (as 64-character bit strings, see ``bench/peers/heavy_peers.py``), so both libraries are scored by the
same code against the same truth.

ldpnum: ``PEM`` and ``TreeHist`` at their defaults (``top_k=20``, ``item_type="bytes"``), secure default
randomness; time = ``privatize`` (including the encoding of the bytes items) + ``aggregate`` +
``estimate_heavy_hitters`` (top 20), median of ``repeats`` runs after one untimed run (JIT compile excluded).
The top 50 is a second ``estimate_heavy_hitters(agg, top_k=50)`` on the same aggregate (post-processing, timed
apart). Accuracy figures are means over the repeats. n = 1e6, and 1e7 for ldpnum alone (at most 2 runs, no
untimed run, on a second sample drawn with seed ``SEED + 1``).

ldpnum runs on ``bytes`` items (each word's UTF-8 bytes), not ``str``, so that every returned item maps back
exactly to the 64-bit word both libraries are scored on: decoding to ``str`` drops a character cut at the item
width, which would merge items the truth keeps apart. The encoding (and the cut to 8 bytes) is the same.

pure-ldp 1.2 (in bench/.peers-venv): PEM, TreeHist and Apple's SFP with its Hadamard count-mean sketch, and
PEM with its plain count-mean sketch (configuration in ``bench/peers/heavy_peers.py``), one run per ε, at n = 1e6 when a pilot projects one run to
at most 60 s, else on the first people of the same sample sized to about 30 s.

Metrics, per (library, method, ε), for the returned top k (k = 20, 50):

* precision@k: the share of the k returned items that are in the true top k. Both lists have k items, so
  recall@k is the same number (fewer than k returned items count as misses).
* NCR@k (normalized cumulative rank, Wang, Li, Jha): the true top-k item of rank r scores k - r + 1; the sum over
  returned items that are in the true top k, divided by k(k+1)/2.
* MAE@k: mean absolute error of the returned items' estimated frequencies (fractions of n) against their true
  frequencies (0 for an item nobody holds).

Then, without a dictionary either way: PEM against RAPPOR's Segment Pair Method (``RAPPOR(segments=...)``, Fanti,
Pihur, Erlingsson) on the same people, at the same ε per report, on the items cut to 8 and to 4 bytes
(:func:`compare_spm`): top-k precision (= recall) of what each returns, and time.

Runs alone: ``python bench/heavy.py [--n 1e5] [--n-large 0] [--no-peers] [--no-spm]`` prints the markdown table;
``python bench/heavy.py --spm 4 [--n 1e6]`` only the comparison at 4-byte items.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SEED = 0
VOCAB = 100_000
EPSILONS = (2.0, 4.0, 8.0)
KS = (20, 50)
N = 1_000_000
N_LARGE = 10_000_000
PEER_MAX_SECONDS = 60.0
#: People per chunk in the streamed memory measurement.
STREAM_CHUNK = 1_000_000
PEER_TARGET_SECONDS = 30.0
#: Item widths (bytes) at which PEM and RAPPOR's Segment Pair Method are compared.
SPM_BYTES = (8, 4)


def word_list():
    """The vocabulary (str), its sampling probabilities and each word's 64-bit item (first 8 UTF-8 bytes)."""
    import wordfreq
    from ldpnum.heavy import encode_items

    vocab = wordfreq.top_n_list("en", VOCAB)
    p = np.array([wordfreq.word_frequency(w, "en") for w in vocab], dtype=float)
    p /= p.sum()
    raw = [w.encode("utf-8") for w in vocab]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        words, _, _ = encode_items(raw, 64)
    return vocab, raw, p, np.asarray(words, dtype=np.uint64)


def sample(p, n, seed=SEED):
    return np.random.default_rng(seed).choice(len(p), size=n, p=p)


class Truth:
    """True item frequencies of one sample (items = 64-bit words)."""

    def __init__(self, words, idx):
        counts = np.bincount(idx, minlength=len(words))
        uniq, inv = np.unique(words, return_inverse=True)
        item_counts = np.bincount(inv, weights=counts, minlength=len(uniq))
        order = np.lexsort((uniq, -item_counts))  # by count, ties by item
        self.n = len(idx)
        self.freq = dict(zip(uniq.tolist(), (item_counts / self.n).tolist()))
        self.rank = {int(uniq[i]): r + 1 for r, i in enumerate(order[:max(KS)])}
        self.top = [int(uniq[i]) for i in order[:max(KS)]]
        self.kth_gap = {k: float(item_counts[order[k - 1]] - item_counts[order[k]]) / self.n for k in KS}


def score(items, freqs, truth, k):
    """precision@k, NCR@k and MAE of the returned items (64-bit words, frequencies as fractions)."""
    items, freqs = list(items)[:k], list(freqs)[:k]
    top = set(truth.top[:k])
    hits = [it for it in items if it in top]
    ncr = sum(k - truth.rank[it] + 1 for it in hits) / (k * (k + 1) / 2)
    mae = float(np.mean([abs(f - truth.freq.get(it, 0.0)) for it, f in zip(items, freqs)])) if items else None
    return {f"precision@{k}": len(hits) / k, f"ncr@{k}": ncr, f"mae@{k}": mae, f"returned@{k}": len(items)}


def _word(b):
    return int.from_bytes(bytes(b).ljust(8, b"\0")[:8], "big")


def ldpnum_runs(method, eps, x, truth, repeats, warm=True, item_bits=64):
    import ldpnum as ldp

    m = {"pem": ldp.PEM, "treehist": ldp.TreeHist}[method](eps, item_bits=item_bits, top_k=20, item_type="bytes")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TruncationWarning: counted in the section's notes
        m.estimate_heavy_hitters(m.aggregate(m.privatize(x[:10_000])))  # compile
        times, times50, scores = [], [], []
        for _ in range(repeats + warm):
            t0 = time.perf_counter()
            agg = m.aggregate(m.privatize(x))
            est = m.estimate_heavy_hitters(agg)
            t1 = time.perf_counter()
            est50 = m.estimate_heavy_hitters(agg, top_k=50)
            t2 = time.perf_counter()
            times.append(t1 - t0)
            times50.append(t2 - t1)
            s = score([_word(b) for b in est.items], est.frequencies, truth, 20)
            s.update(score([_word(b) for b in est50.items], est50.frequencies, truth, 50))
            scores.append(s)
    if warm:  # the first run at full n is untimed (warm caches)
        times, times50, scores = times[1:], times50[1:], scores[1:]
    rec = {"library": "ldpnum", "method": method, "epsilon": eps, "n": len(x), "repeats": repeats,
           "seconds": statistics.median(times), "seconds_top50_search": statistics.median(times50),
           "groups": m.groups, "n_hashes": m.n_hashes, "g": m.g}
    for key in scores[0]:
        vals = [s[key] for s in scores if s[key] is not None]
        rec[key] = float(np.mean(vals)) if vals else None
    rec["people_per_second"] = rec["n"] / rec["seconds"]
    rec["aggregate_mb"] = agg.counts.nbytes / 1e6
    rec["streamed_peak_mb"] = streamed_peak_mb(m, x)
    return rec


#: RAPPOR with segments on the bench's items: 4-bit segments (8-byte items: 16 segments, 120 position pairs, so at
#: most 34 cohorts), one hash function, the instantaneous p = 1/16, q = 15/16, and f solved for each ε (below): all
#: on the 8-bit lane grid, so each Bloom bit takes 8 bits of a word (off the grid, 32).
SPM = dict(k=128, h=1, cohorts=32, p=1 / 16, q=15 / 16, segment_bits=4)


def spm_mechanism(eps, item_bytes=8, segment_bits=SPM["segment_bits"]):
    """RAPPOR with segments whose report (both filters) is ε-LDP: the least permanent noise ``f = j/128`` (on the
    8-bit grid) with ``epsilon <= eps`` (ε1 decreases in f; ε∞ must stay at most 20)."""
    import ldpnum as ldp

    kw = dict(SPM, segments=8 * item_bytes // segment_bits, segment_bits=segment_bits, item_type="bytes")
    for j in range(1, 128):
        try:
            m = ldp.RAPPOR(f=j / 128, **kw)
        except ValueError:  # ε∞ above 20
            continue
        if m.epsilon <= eps:
            return m
    raise ValueError(f"no f on the grid gives epsilon <= {eps}")


def spm_runs(eps, x, truth, repeats, item_bytes=8, segment_bits=SPM["segment_bits"]):
    """RAPPOR's Segment Pair Method on the same people, at the same ε per report: privatize (with each person's key),
    aggregate, discover; the detected items, in decreasing estimated frequency, scored as the top 20 and 50."""
    import ldpnum as ldp

    m = spm_mechanism(eps, item_bytes, segment_bits)
    keys = ldp.ClientKeys.generate(len(x), rng=SEED)
    m.discover(m.aggregate(m.privatize(x[:10_000], keys=keys[:10_000])))  # compile
    times, scores, parts = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        agg = m.aggregate(m.privatize(x, keys=keys))
        t1 = time.perf_counter()
        est = m.discover(agg)
        t2 = time.perf_counter()
        times.append(t2 - t0)
        parts.append((t1 - t0, t2 - t1))
        found = [_word(b) for b in est.detected_items]
        freqs = est.frequencies[est.detected]
        s = score(found, freqs, truth, 20)
        s.update(score(found, freqs, truth, 50))
        scores.append(s)
    rec = {"library": "ldpnum", "method": "rappor-spm", "epsilon": eps, "n": len(x), "repeats": repeats,
           "seconds": statistics.median(times), "seconds_client_and_aggregate": statistics.median(p[0] for p in parts),
           "seconds_discover": statistics.median(p[1] for p in parts), "epsilon_report": m.epsilon,
           "epsilon_permanent": m.epsilon_permanent, "f": m.f, "segments": m.segments, "segment_bits": m.segment_bits,
           "pairs_detected": est.provenance["pairs_detected"], "candidates": est.provenance["candidates"],
           "detected": est.provenance["detected"]}
    for key in scores[0]:
        vals = [s[key] for s in scores if s[key] is not None]
        rec[key] = float(np.mean(vals)) if vals else None
    rec["people_per_second"] = rec["n"] / rec["seconds"]
    return rec


def compare_spm(n=N, repeats=1, item_bytes=8, segment_bits=SPM["segment_bits"]):
    """PEM and RAPPOR's Segment Pair Method on the same people and items (cut to ``item_bytes``), at each ε of
    the section; returns ``(records, markdown)``."""
    vocab, raw, p, _ = word_list()
    nb = item_bytes
    cut = [b[:nb] for b in raw]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from ldpnum.heavy import encode_items
        words = np.asarray(encode_items(cut, 8 * nb)[0], dtype=np.uint64) << np.uint64(64 - 8 * nb)
    idx = sample(p, n)
    truth = Truth(words, idx)
    arr = np.empty(len(cut), dtype=object)
    arr[:] = cut
    x = arr[idx]
    records = []
    for eps in EPSILONS:
        print(f"heavy ldpnum pem eps={eps:g} n={n:.0e} items of {nb} bytes ...", flush=True)
        records.append(ldpnum_runs("pem", eps, x, truth, repeats, item_bits=8 * nb))
        print(f"heavy ldpnum rappor-spm eps={eps:g} n={n:.0e} items of {nb} bytes ...", flush=True)
        records.append(spm_runs(eps, x, truth, repeats, nb, segment_bits))
    lines = [f"## Heavy hitters without a dictionary: PEM vs RAPPOR's Segment Pair Method (items of {nb} bytes)", "",
             f"The section's people (n = {n:.0e}, seed {SEED}), items cut to their first {nb} bytes. PEM at its "
             "defaults (top_k = 20); RAPPOR with segments: "
             f"k = {SPM['k']}, h = {SPM['h']}, {SPM['cohorts']} cohorts, {8 * nb // segment_bits} segments "
             f"of {segment_bits} bits, p = 1/16, q = 15/16, the least f on the 8-bit grid with which one report "
             "(both filters) is ε-LDP; its items are the detected ones (family-wise α = 0.05), in decreasing estimate, "
             "so it may return fewer than k. Time: privatize + aggregate + estimate (top 20 / discover), median of "
             f"{repeats} run(s), compile excluded.", "",
             "| method | ε | ε of one report | ε∞ | P@20 | P@50 | returned | MAE@20 (1e-4) | time s | of which decode s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in records:
        spm = r["method"] == "rappor-spm"
        mae = None if r["mae@20"] is None else r["mae@20"] * 1e4
        lines.append(f"| {'RAPPOR segment pairs' if spm else 'PEM'} | {r['epsilon']:g} | "
                     f"{r.get('epsilon_report', r['epsilon']):.3g} | {_f(r.get('epsilon_permanent'))} | {r['precision@20']:.2f} | {r['precision@50']:.2f} | "
                     f"{r['returned@20']:.3g} | {_f(mae, 1)} | {r['seconds']:.3g} | "
                     f"{_f(r.get('seconds_discover'), 1)} |")
    return records, "\n".join(lines) + "\n"


def streamed_peak_mb(m, x, chunk=STREAM_CHUNK):
    """Peak traced NumPy/Python memory (MB) of a collection fed in chunks of ``chunk`` people: privatize a
    chunk, add its aggregate to the running one, drop the reports; then estimate. Independent of n: the
    collector holds one aggregate (groups × hash functions × g counts) and one chunk's reports."""
    import tracemalloc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracemalloc.start()
        total = None
        for start in range(0, len(x), chunk):
            agg = m.aggregate(m.privatize(x[start:start + chunk]))
            total = agg if total is None else total + agg
        m.estimate_heavy_hitters(total)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak / 1e6


def peer_runs(words_of_people, n, with_peers):
    if not with_peers:
        return []
    venv_py = HERE / ".peers-venv" / "bin" / "python"
    if not venv_py.exists():
        return [{"library": "pure-ldp", "error": "bench/.peers-venv missing: run bash bench/peers/setup_venv.sh"}]
    with tempfile.TemporaryDirectory() as tmp:
        np.save(Path(tmp) / "items.npy", words_of_people)
        out = Path(tmp) / "out.json"
        cmd = [str(venv_py), str(HERE / "peers" / "heavy_peers.py"), "--words", str(Path(tmp) / "items.npy"),
               "--n", str(n), "--epsilon", ",".join(f"{e:g}" for e in EPSILONS),
               "--max-seconds", str(PEER_MAX_SECONDS), "--target-seconds", str(PEER_TARGET_SECONDS),
               "--json", str(out)]
        proc = subprocess.run(cmd)
        if proc.returncode or not out.exists():
            return [{"library": "pure-ldp", "error": f"heavy_peers.py exited with {proc.returncode}"}]
        return json.loads(out.read_text())


def run(repeats=3, with_peers=True, n=N, n_large=N_LARGE, spm_bytes=SPM_BYTES):
    """Measure; return ``(records, markdown)``.

    Then PEM against RAPPOR's Segment Pair Method on the same people at each item width of ``spm_bytes``
    (:func:`compare_spm`, one run each: RAPPOR's discovery takes about a minute at n = 1e6).
    """
    vocab, raw, p, words = word_list()
    n_items = len(np.unique(words))
    long_words = sum(len(b) > 8 for b in raw)
    notes = {"vocabulary": len(vocab), "distinct_items_at_8_bytes": n_items, "words_longer_than_8_bytes": long_words,
             "words_merged": len(vocab) - n_items}
    raw_arr = np.empty(len(raw), dtype=object)
    raw_arr[:] = raw
    records = []
    idx = sample(p, n)
    truth = Truth(words, idx)
    notes["people_with_truncated_word"] = float(np.mean(np.array([len(b) > 8 for b in raw])[idx]))
    notes["truth_gap_at_k"] = truth.kth_gap
    x = raw_arr[idx]
    for method in ("pem", "treehist"):
        for eps in EPSILONS:
            print(f"heavy ldpnum {method} eps={eps:g} n={n:.0e} ...", flush=True)
            records.append(ldpnum_runs(method, eps, x, truth, repeats))
    truths = {n: truth}
    if n_large:
        idx_l = sample(p, n_large, seed=SEED + 1)
        truths[n_large] = Truth(words, idx_l)
        x_l = raw_arr[idx_l]
        del idx_l
        for method in ("pem", "treehist"):
            for eps in EPSILONS:
                print(f"heavy ldpnum {method} eps={eps:g} n={n_large:.0e} ...", flush=True)
                records.append(ldpnum_runs(method, eps, x_l, truths[n_large], max(1, min(repeats, 2)), warm=False))
        del x_l
    print(f"heavy pure-ldp n<={n:.0e} ...", flush=True)
    for r in peer_runs(words[idx], n, with_peers):
        if "error" not in r:
            t = truths.get(r["n"]) or Truth(words, idx[:r["n"]])
            truths[r["n"]] = t
            s = score(r.pop("top20"), r.pop("freq20"), t, 20)
            s.update(score(r.pop("top50"), r.pop("freq50"), t, 50))
            r.update(s)
            r["people_per_second"] = r["n"] / r["seconds"]
            r["repeats"] = 1
        records.append(r)
    ours = {(r["method"], r["epsilon"]): r["people_per_second"] for r in records
            if r.get("library") == "ldpnum" and r["n"] == n}
    for r in records:
        if r.get("library") == "pure-ldp" and "error" not in r:
            base = "pem" if r["method"].startswith("pem") else r["method"]
            r["throughput_ratio_pem"] = ours[("pem", r["epsilon"])] / r["people_per_second"]
            r["throughput_ratio_same_method"] = (ours[(base, r["epsilon"])] / r["people_per_second"]
                                                 if (base, r["epsilon"]) in ours else None)
    records.append({"notes": notes})
    md = markdown(records, repeats)
    for nb in spm_bytes:
        spm_records, spm_md = compare_spm(n, 1, nb)
        records += [dict(r, comparison=f"segment pairs, {nb} bytes") for r in spm_records]
        md += "\n" + spm_md
    return records, md


def _f(v, digits=2):
    return "–" if v is None else f"{v:.{digits}f}"


def markdown(records, repeats=3):
    notes = next(r["notes"] for r in records if "notes" in r)
    rows = [r for r in records if "notes" not in r]
    lines = ["## Heavy hitters: English words (wordfreq), ldpnum vs pure-ldp", "",
             f"{notes['vocabulary']:,} most frequent English words of `wordfreq`, people sampled by word frequency "
             f"(seed {SEED}). Items are the words' UTF-8 bytes cut to 8 bytes (item_bits = 64): "
             f"{notes['words_longer_than_8_bytes']:,} words are longer, and {notes['words_merged']:,} words merge "
             f"with another into {notes['distinct_items_at_8_bytes']:,} distinct items; "
             f"{notes['people_with_truncated_word']:.1%} of the people hold a truncated word. The truth is counted "
             "on the truncated items of the people measured, the same for both libraries. P@k = precision of the "
             "returned top k (recall@k is the same number: both lists have k items); NCR@k = normalized cumulative "
             "rank; MAE@k = mean |estimated − true frequency| of the returned items, in units of 1e-4 (of n). "
             f"Time: privatize + aggregate + top-20 estimate, seconds; ldpnum median of {repeats} runs (secure "
             "randomness, compile excluded; accuracy: mean over the runs), pure-ldp one run. ratio = ldpnum's "
             "people/s with the same method (SFP: PEM) at the same ε and n = 1e6 over the peer's. \"returned\": "
             "fewer than 20 items returned (ldpnum: mean over the runs); the missing ones count as misses, and MAE "
             "covers only the items returned.", "",
             "| library | method | ε | n | P@20 | P@50 | NCR@20 | NCR@50 | MAE@20 | MAE@50 | time s | people/s | "
             "ratio |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    label = {"pem": "PEM", "treehist": "TreeHist", "sfp": "SFP"}
    peer_label = {"pem": "PEM (HCMS)", "pem_cms": "PEM (CMS)", "treehist": "TreeHist (HCMS)", "sfp": "SFP (HCMS)"}
    key = {"ldpnum": 0, "pure-ldp": 1}
    rows_ok = sorted((r for r in rows if "error" not in r),
                     key=lambda r: (r["epsilon"], r["n"] > 2_000_000, key[r["library"]], r["method"]))
    for r in rows_ok:
        ratio = r.get("throughput_ratio_same_method") or r.get("throughput_ratio_pem")
        lib = r["library"] if r["library"] == "ldpnum" else f"{r['library']} {r.get('version', '')}"
        mae = [None if r[f"mae@{k}"] is None else r[f"mae@{k}"] * 1e4 for k in KS]
        extra = "" if r.get("returned@20", 20) == 20 else f", returned {r['returned@20']:.3g}"
        name = label[r["method"]] if r["library"] == "ldpnum" else peer_label[r["method"]]
        lines.append(f"| {lib} | {name}{extra} | {r['epsilon']:g} | {r['n']:.0e} | "
                     f"{r['precision@20']:.2f} | {r['precision@50']:.2f} | {r['ncr@20']:.2f} | {r['ncr@50']:.2f} | "
                     f"{_f(mae[0], 1)} | {_f(mae[1], 1)} | {r['seconds']:.3g} | {r['people_per_second']:.3g} | "
                     f"{'' if ratio is None else f'{ratio:.0f}×'} |")
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['library']} | {peer_label.get(r.get('method'), r.get('method', ''))} | "
                         f"{r.get('epsilon', '')} | | failed: {r['error']} | | | | | | | | |")
    ours = [r for r in rows_ok if r["library"] == "ldpnum" and "aggregate_mb" in r]
    if ours:
        by_n = {}
        for r in ours:
            by_n.setdefault(r["n"], []).append(r["streamed_peak_mb"])
        agg = sorted({(label[r["method"]], r["epsilon"], r["aggregate_mb"]) for r in ours})
        lines += ["", "Memory (ldpnum): the aggregate holds groups × hash functions × g counts whatever n — "
                  + "; ".join(f"{m} ε = {e:g}: {mb:.1f} MB" for m, e, mb in agg)
                  + f". Fed in chunks of {STREAM_CHUNK:,} people (privatize a chunk, add its aggregate, drop its "
                  "reports; then estimate), the peak traced memory is "
                  + "; ".join(f"{max(v):.0f} MB at n = {k:.0e}" for k, v in sorted(by_n.items()))
                  + " (largest over methods and ε): the collector's memory does not grow with n."]
    peers = [r for r in rows_ok if r["library"] == "pure-ldp"]
    if peers:
        n_req = peers[0].get("n_requested")
        sub = [f"{peer_label[r['method']]} n = {r['n']:,} (projected {r['projected_seconds_at_n_requested']:.0f} s "
               f"per run at n = {n_req:,})" for r in peers if r["n"] != n_req]
        lines += ["", "pure-ldp runs each person through its own `privatise` and `aggregate` calls, with its count-mean "
                  "sketch, 256 hash functions × 1024 cells: Hadamard (HCMS, one bit per report) or plain (CMS, 1024 "
                  "signs per report) — its default local-hashing oracle enumerates all 2^64 items per estimate; PEM 4 start bits + 4 bits per group (15 groups), TreeHist 1 bit per "
                  "level (prefix and whole-word reports at ε/2 each, as pure-ldp implements it), SFP 2-bit "
                  "fragments. Configuration: `bench/peers/heavy_peers.py`."
                  + (" Subsets (of the same sample, truth recounted on them): " + "; ".join(dict.fromkeys(sub)) + "."
                     if sub else "")]
    return lines and "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default=str(N))
    ap.add_argument("--n-large", default=str(N_LARGE), help="ldpnum alone at this n (0: skip)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--spm", type=int, default=0, metavar="BYTES",
                    help="only compare PEM with RAPPOR's Segment Pair Method on items cut to BYTES (2, 4 or 8)")
    ap.add_argument("--no-spm", action="store_true", help="skip the comparison with the Segment Pair Method")
    ap.add_argument("--segment-bits", type=int, default=SPM["segment_bits"],
                    help="with --spm: bits per segment of RAPPOR (4; 8: one byte per segment)")
    args = ap.parse_args(argv)
    if args.spm:
        _, md = compare_spm(int(float(args.n)), args.repeats, args.spm, args.segment_bits)
        print(md)
        return 0
    _, md = run(args.repeats, not args.no_peers, int(float(args.n)), int(float(args.n_large)),
                () if args.no_spm else SPM_BYTES)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
