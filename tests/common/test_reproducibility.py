"""Randomness sources and reproducibility (DESIGN.md R2, TESTING.md (e))."""

import hashlib
import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import _random


def sample_input(m, n=50_000, seed=0):
    x = np.random.default_rng(seed).random(n)
    return (x < 0.4).astype(float) if m.name == "randomized_response" else x


def test_secure_default_differs_and_ignores_global_state():
    m = ldp.Piecewise(1.0, (0, 1))
    x = np.full(1000, 0.5)
    state = np.random.get_state()
    np.random.seed(0)
    a = m.privatize(x)
    np.random.seed(0)
    b = m.privatize(x)
    assert a != b
    np.random.set_state(state)
    before = np.random.get_state()[1].copy()
    m.privatize(x, rng=1)
    m.privatize(x)
    np.testing.assert_array_equal(np.random.get_state()[1], before)


def test_secure_words_come_from_os_urandom(monkeypatch):
    calls = []

    def fake(n):
        calls.append(n)
        return b"\x01" * n

    monkeypatch.setattr(_random.os, "urandom", fake)
    m = ldp.Duchi(1.0, (0, 1))
    a = m.privatize(np.full(100, 0.5))
    b = m.privatize(np.full(100, 0.5))
    assert calls == [16, 16]
    assert a == b  # a fixed key gives a fixed stream: the key is the only source
    assert _random.resolve_rng(None).secure and not _random.resolve_rng(0).secure


@pytest.mark.parametrize("n,c", [(0, 1), (1, 1), (10, 3), (1 << 20, 1), (3 * (1 << 18) + 5, 4), (5000, 1000),
                                 (7, 1 << 20)])
def test_block_sizes_cover_every_record(n, c):
    sizes = _random.block_sizes(n, c)
    cap = max(1, min(_random.BLOCK_RECORDS, _random.BLOCK_WORDS // c))
    assert sum(sizes) == n and all(1 <= s <= cap for s in sizes)
    assert all(s == cap for s in sizes[:-1])


@pytest.mark.parametrize("block", [1, 3, 1000, 1 << 18])
def test_block_sizes_do_not_change_reports(block, monkeypatch):
    m = ldp.SquareWave(1.0, (0, 1))
    x = np.random.default_rng(3).random(20_011)
    ref = m.privatize(x, rng=9)
    monkeypatch.setattr(_random, "BLOCK_WORDS", block * m.words_per_record)
    monkeypatch.setattr(_random, "BLOCK_RECORDS", block)
    assert len(_random.block_sizes(x.size, m.words_per_record)) == -(-x.size // block)
    assert m.privatize(x, rng=9) == ref


def _child_many_blocks(q):
    m = ldp.Duchi(1.0, (0, 1))
    q.put(m.privatize(np.full(3 * _random.BLOCK_RECORDS, 0.5), rng=1).codes.tobytes())


def test_forked_child_gets_its_own_draw_threads():
    # The parent's helper threads (started by a multi-block call) do not exist in a forked child; the child
    # must start its own instead of waiting forever on the parent's pool.
    m = ldp.Duchi(1.0, (0, 1))
    ref = m.privatize(np.full(3 * _random.BLOCK_RECORDS, 0.5), rng=1).codes.tobytes()
    assert _random._POOL is not None
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_many_blocks, args=(q,), daemon=True)
    p.start()
    out = q.get(timeout=60)
    p.join(timeout=60)
    assert out == ref


def test_kernel_error_leaves_the_draw_pool_usable(monkeypatch):
    m = ldp.Duchi(1.0, (0, 1))
    x = np.full(3 * _random.BLOCK_RECORDS, 0.5)
    calls = []

    def boom(values, words, out):
        calls.append(len(values))
        if len(calls) == 2:
            raise RuntimeError("planted kernel failure")
        return original(values, words, out)

    original = m._run_kernel
    monkeypatch.setattr(m, "_run_kernel", boom)
    with pytest.raises(RuntimeError, match="planted"):
        m.privatize(x, rng=1)
    monkeypatch.undo()
    assert m.privatize(x, rng=1) == m.privatize(x, rng=1)


def _child(q):
    m = ldp.Duchi(1.0, (0, 1))
    q.put(m.privatize(np.full(256, 0.5)).codes.tobytes())


def test_forked_children_draw_distinct_secure_streams():
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(q,)) for _ in range(2)]
    for p in procs:
        p.start()
    out = [q.get(timeout=60) for _ in procs]
    for p in procs:
        p.join()
    assert out[0] != out[1]


SCRIPT = textwrap.dedent("""
    import hashlib, numpy as np, ldpnum as ldp
    x = np.random.default_rng(0).random(300_000)
    h = hashlib.sha256()
    for m in (ldp.StochasticRounding(1.0, (0, 1)), ldp.Piecewise(1.0, (0, 1)), ldp.Hybrid(2.0, (0, 1)),
              ldp.Laplace(1.0, (0, 1))):
        h.update(m.privatize(x, rng=2024).codes.tobytes())
    X = x.reshape(-1, 6)
    for m in (ldp.SampledDimensions("piecewise", 8.0, [(0, 1)] * 6), ldp.DuchiMultivariate(1.0, [(0, 1)] * 6)):
        h.update(m.privatize(X, rng=2024).codes.tobytes())
    U = X[:5000] / np.sqrt(6)  # rows of norm < 1
    for m in (ldp.PrivHS(4.0, 6), ldp.PrivUnit(2.0, 6), ldp.PrivUnitG(2.0, 6), ldp.SQKR(4.0, 6)):
        r = m.privatize(U, rng=2024)
        h.update(r.codes.tobytes())
        h.update(m.aggregate(r).counts.tobytes())
    for m in (ldp.HDG(1.0, {"a": (0, 1), "b": (0, 1), "c": (0, 1)}, granularities=(16, 4)),
              ldp.HDG(3.0, {"a": (0, 1), "b": (0, 1)}, granularities=(16, 8))):
        r = m.privatize(X[:, :m.dim], rng=2024)
        h.update(r.codes.tobytes())
        h.update(m.aggregate(r).counts.tobytes())
    import numba
    print(numba.get_num_threads(), h.hexdigest())
""")


@pytest.mark.slow
def test_thread_count_does_not_change_reports():
    out = {}
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        n, digest = res.stdout.split()
        assert n == threads
        out[threads] = digest
    assert out["1"] == out["2"]


@pytest.mark.slow
def test_workqueue_layer_with_python_threads_does_not_abort():
    script = textwrap.dedent("""
        import threading, numpy as np, ldpnum as ldp
        m = ldp.Piecewise(1.0, (0, 1)); x = np.random.default_rng(0).random(100_000)
        ref = [m.privatize(x, rng=s).codes.tobytes() for s in range(8)]
        res = {}
        def work(s): res[s] = m.privatize(x, rng=s).codes.tobytes()
        ts = [threading.Thread(target=work, args=(s,)) for s in range(8)]
        [t.start() for t in ts]; [t.join() for t in ts]
        assert all(res[s] == ref[s] for s in range(8))
        print("ok")
    """)
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


def _tbb_installed():
    import importlib.metadata
    try:
        return importlib.metadata.version("tbb") is not None
    except importlib.metadata.PackageNotFoundError:
        return False


@pytest.mark.skipif(not (sys.platform.startswith("linux") and _tbb_installed()),
                    reason="TBB is a dependency on Linux x86-64 only")
def test_pip_installed_tbb_is_the_threading_layer():
    # A plain `pip install` leaves libtbb where the loader does not look (it is in the environment's lib
    # directory); without the preload Numba silently falls back to workqueue and every launch costs ~35x more.
    script = textwrap.dedent("""
        import numpy as np, numba, ldpnum as ldp
        ldp.GRR(1.0, 16).privatize(np.arange(1000) % 16, rng=0)
        print(numba.threading_layer())
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_THREADING_LAYER", "LD_LIBRARY_PATH")}
    env["LDPNUM_JIT"] = "compile"  # 1000 values would run interpreted, launching no parallel kernel
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "tbb", res.stderr


@pytest.mark.parametrize("layer", ["workqueue"] + (["tbb"] if sys.platform.startswith("linux") and _tbb_installed()
                                                   else []))
def test_user_threading_layer_is_respected(layer):
    script = textwrap.dedent("""
        import numpy as np, numba, ldpnum as ldp
        ldp.GRR(1.0, 16).privatize(np.arange(1000) % 16, rng=0)
        print(numba.threading_layer())
    """)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["NUMBA_THREADING_LAYER"] = layer
    env["LDPNUM_JIT"] = "compile"  # 1000 values would run interpreted, launching no parallel kernel
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert res.stdout.strip() == layer, res.stderr


def test_python_threads_reproduce_single_thread_results():
    m = ldp.Hybrid(1.0, (0, 1))
    x = np.random.default_rng(0).random(50_000)
    ref = {s: m.privatize(x, rng=s) for s in range(4)}
    res = {}

    def work(s):
        res[s] = m.privatize(x, rng=s)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert res == ref


# Golden digests (E7): a deliberate change of any kernel, plan or word layout changes these; record it in
# the changelog when it happens.
GOLDEN = {
    "stochastic_rounding": "f067dca71f98809e7a7ae31691401c740d92ea5a8a1854d4539ea165efda1d05",
    "duchi": "f067dca71f98809e7a7ae31691401c740d92ea5a8a1854d4539ea165efda1d05",
    "piecewise": "40e5a474b8b12ebf0595f9c9359c93d6af9bf87b236a47e2bef5723392275556",
    "hybrid": "a4530c8a09d8032d384e86ae8e221741869a2bd429548905cb975823a959c9c9",
    "randomized_response": "ee4e320670208be9d96a1004906d805a7af1f7101e2499b0f36dad7e2a7cc27a",
    "laplace": "07473c22440fcfd3102e02d9c19e585b973cf23c610c90d6f5f188889ee8b798",
    "square_wave": "fe21b7524369617057bee7f680d4bef44866bc336f8ca5258007f73b95a3ae69",
    "general_wave": "ad5b4f642f29a0123bdb1a51171533312125ff73b424958d9987403ed9d3e11f",
}


#: The instances whose reports are pinned by GOLDEN (E7: a change of the reports is deliberate).
GOLDEN_MECHANISMS = [ldp.StochasticRounding(1.0, (0.0, 1.0)), ldp.Duchi(1.0, (0.0, 1.0)),
                     ldp.Piecewise(1.0, (0.0, 1.0)), ldp.Hybrid(1.0, (0.0, 1.0)), ldp.Laplace(1.0, (0.0, 1.0)),
                     ldp.SquareWave(1.0, (0.0, 1.0)), ldp.GeneralWave(1.0, (0.0, 1.0), shape="triangle"),
                     ldp.RandomizedResponse(1.0)]


@pytest.mark.parametrize("m", GOLDEN_MECHANISMS, ids=lambda m: m.name)
def test_golden_digest(m):
    digest = hashlib.sha256(m.privatize(sample_input(m, n=10_000, seed=1), rng=20261122).codes.tobytes()).hexdigest()
    assert digest == GOLDEN[m.name]


# -- the secure stream itself -----------------------------------------------------------------------------------
# Published AES-128 values under the all-zero key (McGrew & Viega, "The Galois/Counter Mode of Operation",
# test cases 1 and 2: H = AES_0(0), the tag E(K, Y0) with Y0 = 0...01, and the keystream block E(K, 0...02)).
ZERO_KEY_BLOCKS = "66e94bd4ef8a2c3b884cfa59ca342b2e" "58e2fccefa7e3061367f1d57a4e7455a" "0388dace60b6a392f328c2b971b2fe78"


def test_secure_stream_is_the_aes_ctr_keystream():
    words = _random.AESCounterStream(bytes(16)).random_raw(6)
    assert words.dtype == np.uint64 and words.flags.c_contiguous
    assert words.astype("<u8").tobytes().hex() == ZERO_KEY_BLOCKS


def test_secure_stream_continues_across_draws_and_pieces(monkeypatch):
    """Drawing in pieces (any sizes, OpenSSL calls split at PIECE_BYTES) is one stream: the words of one draw."""
    key = bytes(range(16))
    whole = _random.AESCounterStream(key).random_raw(1000)
    monkeypatch.setattr(_random.AESCounterStream, "PIECE_BYTES", 40)  # odd pieces: 5 words, 2.5 blocks
    monkeypatch.setattr(_random.AESCounterStream, "_zeros", None)
    s = _random.AESCounterStream(key)
    parts = [s.random_raw(m) for m in (0, 1, 3, 7, 64, 925)]
    assert [p.size for p in parts] == [0, 1, 3, 7, 64, 925]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    assert not np.array_equal(_random.AESCounterStream(bytes(16)).random_raw(1000), whole)


def test_secure_stream_key_length_is_checked():
    with pytest.raises(ValueError, match="16-byte key"):
        _random.AESCounterStream(bytes(15))


def test_assign_columns_is_pinned_and_batch_independent():
    """The one-column-per-row draw: pinned for a seed (a change of formula or stream would move people
    between columns), equal to the exact integer formula, and the same in batches as in one call."""
    np.testing.assert_array_equal(_random.assign_columns(0, 8, 3), [1, 0, 0, 0, 2, 2, 1, 2])
    np.testing.assert_array_equal(_random.assign_columns(7, 6, 65536), [40966, 58799, 50835, 14759, 19671, 57249])
    words = np.random.PCG64(5).random_raw(1000)
    expected = [((int(w) >> 16) * 7) >> 48 for w in words]
    np.testing.assert_array_equal(_random.assign_columns(5, 1000, 7), expected)
    g = np.random.default_rng(3)
    pieces = np.concatenate([_random.assign_columns(g, k, 5) for k in (10, 0, 333, 657)])
    np.testing.assert_array_equal(pieces, _random.assign_columns(np.random.default_rng(3), 1000, 5))
    counts = np.bincount(_random.assign_columns(1, 100_000, 4), minlength=4)
    assert counts.min() > 24_000 and counts.max() < 26_000  # 6 standard deviations of Binomial(1e5, 1/4)
    for bad, exc in (((0, -1, 2), ValueError), ((0, 5, 0), ValueError), ((0, 5, 65537), ValueError),
                     ((0, 5.0, 2), TypeError), ((-1, 5, 2), ValueError)):
        with pytest.raises(exc):
            _random.assign_columns(*bad)


def test_frame_and_file_assign_rows_with_assign_columns(tmp_path):
    """pandas and the command line both assign rows with assign_columns on sub-stream m of the seed."""
    import pandas as pd

    from ldpnum._random import child_rng
    from ldpnum.cli import privatize_file

    pytest.importorskip("pyarrow")
    df = pd.DataFrame({"a": np.linspace(0, 1, 500), "b": np.linspace(1, 0, 500), "c": np.zeros(500)})
    mechs = {c: ldp.SquareWave(1.0, (0, 1)) for c in df.columns}
    expected = _random.assign_columns(child_rng(11, 3), 500, 3)
    out = df.ldp.privatize(mechs, rng=11, strategy="one-column-per-row")
    np.testing.assert_array_equal(np.argmax(out.notna().to_numpy(), axis=1), expected)
    df.to_parquet(tmp_path / "in.parquet")
    privatize_file(tmp_path / "in.parquet", tmp_path / "out.parquet", mechs, rng=11,
                   strategy="one-column-per-row", batch_size=128)
    got = pd.read_parquet(tmp_path / "out.parquet")
    np.testing.assert_array_equal(np.argmax(got.notna().to_numpy(), axis=1), expected)
