"""Client keys and the keyed words of memoized responses (ldpnum/longitudinal/keys.py)."""

import pickle

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
import naive
from ldpnum.longitudinal.keys import ClientKeys, check_keys, keyed_words, memo_tweak


def test_naive_siphash_matches_the_papers_test_vector():
    # Aumasson and Bernstein, "SipHash: a fast short-input PRF", appendix A: key 00..0f, message 00..0e.
    assert naive.siphash24(bytes(range(16)), bytes(range(15))) == 0xA129CA6149BE45E5


def test_naive_siphash_planted_bug_is_caught():
    # Negative control: one rotation changed gives another value for the paper's vector.
    saved = naive._rotl
    try:
        naive._rotl = lambda x, b: saved(x, 13 if b == 17 else b)
        assert naive.siphash24(bytes(range(16)), bytes(range(15))) != 0xA129CA6149BE45E5
    finally:
        naive._rotl = saved


def test_keyed_words_match_the_naive_siphash():
    keys = ClientKeys.generate(7, rng=3)
    memo = np.array([0, 1, 2, 5, 2**63, 2**64 - 1, 12345], dtype=np.uint64)
    tweak = 0xDEADBEEF12345678
    got = keyed_words(keys, tweak, memo, 3)
    raw = keys.to_bytes()
    want = [w for i in range(7) for w in naive.keyed_words(raw[16 * i:16 * i + 16], tweak, memo[i], 3)]
    assert got.dtype == np.uint64 and got.tolist() == want


def test_keyed_words_are_the_same_in_chunks_and_across_calls():
    keys = ClientKeys.generate(1000, rng=4)
    memo = np.arange(1000, dtype=np.uint64) % 7
    whole = keyed_words(keys, 9, memo, 2)
    parts = np.concatenate([keyed_words(keys[a:b], 9, memo[a:b], 2) for a, b in ((0, 1), (1, 333), (333, 1000))])
    assert np.array_equal(whole, parts)
    assert np.array_equal(whole, keyed_words(ClientKeys.from_array(keys.to_array()), 9, memo, 2))


def test_keyed_words_change_with_key_value_and_tweak():
    keys = ClientKeys.generate(2000, rng=5)
    memo = np.zeros(2000, dtype=np.uint64)
    base = keyed_words(keys, 1, memo, 1)
    assert np.mean(base == keyed_words(keys, 2, memo, 1)) == 0
    assert np.mean(base == keyed_words(keys, 1, memo + np.uint64(1), 1)) == 0
    assert np.mean(base == keyed_words(ClientKeys.generate(2000, rng=6), 1, memo, 1)) == 0


def test_keyed_words_are_uniform_over_keys():
    # chi-square of the top 4 bits of one word per key: same value and tweak, 20,000 keys (alpha = 1e-6).
    keys = ClientKeys.generate(20_000, rng=7)
    w = keyed_words(keys, memo_tweak(ldp.GRR(1.0, 4).spec), np.zeros(20_000, dtype=np.uint64), 1)
    counts = np.bincount((w >> np.uint64(60)).astype(np.int64), minlength=16)
    assert stats.chisquare(counts).pvalue > 1e-6
    # Negative control: the chi-square test rejects words that ignore the key for half the people.
    biased = w.copy()
    biased[::2] = w[0]
    counts = np.bincount((biased >> np.uint64(60)).astype(np.int64), minlength=16)
    assert stats.chisquare(counts).pvalue < 1e-6


def test_generate_secure_and_seeded():
    a, b = ClientKeys.generate(100), ClientKeys.generate(100)
    assert len(a) == 100 and a != b
    assert ClientKeys.generate(5, rng=1) == ClientKeys.generate(5, rng=1)
    assert ClientKeys.generate(5, rng=1) != ClientKeys.generate(5, rng=2)
    assert len(ClientKeys.generate(0)) == 0


@pytest.mark.parametrize("bad, err", [(-1, ValueError), (2.5, TypeError), (True, TypeError), ("3", TypeError)])
def test_generate_refuses_bad_counts(bad, err):
    with pytest.raises(err, match="n must"):
        ClientKeys.generate(bad)


def test_round_trips(tmp_path):
    keys = ClientKeys.generate(10, rng=8)
    assert ClientKeys.from_array(keys.to_array()) == keys
    assert ClientKeys.from_bytes(keys.to_bytes()) == keys
    assert ClientKeys.from_array(np.frombuffer(keys.to_bytes(), dtype=np.uint8).reshape(10, 16)) == keys
    keys.save(tmp_path / "k.npy")
    assert ClientKeys.load(tmp_path / "k.npy") == keys
    assert pickle.loads(pickle.dumps(keys)) == keys
    pytest.importorskip("pyarrow")
    keys.to_frame().to_parquet(tmp_path / "k.parquet")
    import pandas as pd

    assert ClientKeys.from_frame(pd.read_parquet(tmp_path / "k.parquet")) == keys


def test_slicing_gives_those_peoples_keys():
    keys = ClientKeys.generate(10, rng=9)
    arr = keys.to_array()
    assert np.array_equal(keys[2:5].to_array(), arr[2:5])
    assert np.array_equal(keys[np.array([7, 1])].to_array(), arr[[7, 1]])
    assert np.array_equal(keys[3].to_array(), arr[3:4]) and np.array_equal(keys[-1].to_array(), arr[-1:])


def test_repr_shows_no_key_material():
    keys = ClientKeys.generate(2, rng=10)
    text = repr(keys) + str(keys)
    for word in keys.to_array().ravel():
        assert str(int(word)) not in text and f"{int(word):x}" not in text
    assert "n=2" in text and keys.fingerprint[:16] in text


@pytest.mark.parametrize("words, err, match", [
    (np.zeros((3, 3), dtype=np.uint64), ValueError, "shape"),
    (np.zeros((3, 2), dtype=np.int64), TypeError, "uint64"),
    (np.zeros(6, dtype=np.uint64), ValueError, "shape"),
])
def test_bad_key_arrays_are_refused(words, err, match):
    with pytest.raises(err, match=match):
        ClientKeys(words)


def test_from_bytes_refuses_partial_keys():
    with pytest.raises(ValueError, match="whole number"):
        ClientKeys.from_bytes(bytes(20))


def test_check_keys():
    keys = ClientKeys.generate(4, rng=11)
    assert check_keys(keys, 4) is keys
    with pytest.raises(ValueError, match="keys for 4 people but there are 5 values"):
        check_keys(keys, 5)
    with pytest.raises(TypeError, match="need each person's key"):
        check_keys(None, 4)
    with pytest.raises(TypeError, match="must be ClientKeys"):
        check_keys([1, 2], 2)


def test_memo_tweak_depends_on_the_whole_spec():
    a, b, c = ldp.GRR(1.0, 4).spec, ldp.GRR(2.0, 4).spec, ldp.GRR(1.0, 5).spec
    assert len({int(memo_tweak(s)) for s in (a, b, c)}) == 3
    assert memo_tweak(a) == memo_tweak(ldp.GRR(1.0, 4).spec)
