"""`ldpnum demo heavy-hitters`: PEM on people sampled from the embedded English word list, against the truth."""

import doctest
import io
import re
from collections import Counter

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import cli, demo
from ldpnum.data import load_words

ROW = re.compile(r"^\s*(\d+)  (.+?)\s+(-?\d+\.\d{3}) ± (\d+\.\d{3})\s+(\d+|-)\s+(\d+\.\d{3})$")


def naive_truth(people, nbytes=8):
    """Counts of the truncated items, straight from the definition: each word's first ``nbytes`` UTF-8 bytes,
    decoded with an incomplete last character as a replacement mark; ranked by decreasing count, ties by item."""
    c = Counter(w.encode("utf-8")[:nbytes].decode("utf-8", "replace") for w in people)
    return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))


def sample(n):
    words, freq = load_words()
    return words[np.random.default_rng(demo.WORDS_SAMPLE_SEED).choice(len(words), size=n, p=freq / freq.sum())]


def table(text):
    return [ROW.match(line).groups() for line in text.splitlines() if ROW.match(line)]


def test_truth_is_counted_on_the_truncated_items_like_a_naive_counter():
    words, _ = load_words()
    ranks = np.random.default_rng(1).integers(0, len(words), size=30_000)
    items, counts, rank_of, item_of_word, long_word = demo._word_truth(words, ranks, 64)
    expected = naive_truth(words[ranks])
    assert list(zip(items.tolist(), counts.tolist())) == expected
    assert rank_of == {item: r for r, (item, _) in enumerate(expected, 1)}
    assert long_word.tolist() == [len(w.encode("utf-8")) > 8 for w in words]
    # a cut word is the item of its first 8 bytes: "business" stands for "businesses" too
    where = {w: i for i, w in enumerate(words.tolist())}
    assert item_of_word[where["businesses"]] == "business" == item_of_word[where["business"]]


@pytest.fixture(scope="module")
def run_200k():
    out = io.StringIO()
    est = demo.demo_heavy_hitters(out, epsilon=8.0, n=200_000, rng=11)
    return est, out.getvalue()


def se_of_share(mech, f, n):
    """The closed-form standard error of PEM's estimate of an item of share f: the last group, about
    n / groups people, reports the full items; support share s = q* + f (p* - q*), and
    SE = sqrt(s (1 - s) / n_group) / (p* - q*)."""
    p_star, q_star = mech._plan.support_probabilities()
    s = q_star + f * (p_star - q_star)
    return np.sqrt(s * (1 - s) / (n / mech.groups)) / (p_star - q_star)


def test_demo_finds_the_true_top_5_and_prints_the_truth(run_200k):
    """At n = 2e5, epsilon = 8 the 5th true item (2.4%) and the 21st (0.5%) are more than 6 standard errors of
    their difference apart (closed form), so a true top-5 word ranked below 20 others would be a > 6-sigma
    event (and every level's candidate list keeps 40 prefixes, each at least as heavy as its items)."""
    est, text = run_200k
    truth = naive_truth(sample(200_000))
    mech = ldp.PEM(8.0, item_bits=64, top_k=20, item_type="str")
    f5, f21 = truth[4][1] / 200_000, truth[20][1] / 200_000
    assert (f5 - f21) / np.hypot(se_of_share(mech, f5, 200_000), se_of_share(mech, f21, 200_000)) > 6
    assert {w for w, _ in truth[:5]} <= set(est.items)
    assert est.k == 20 and est.n_reports == 200_000 and est.epsilon == 8.0
    rows = table(text)
    assert [int(r[0]) for r in rows] == list(range(1, 21))
    true_rank = {w: r for r, (w, _) in enumerate(truth, 1)}
    true_share = dict(truth)
    for (rank, word, f, half, t_rank, t_share), item, f_est, se in zip(rows, est.items, est.frequencies,
                                                                       est.standard_errors):
        assert word.rstrip("…") == item
        # percentages printed to 3 decimals: within one unit of the last digit
        assert float(f) == pytest.approx(100 * f_est, abs=1e-3)
        assert float(half) == pytest.approx(100 * 1.959964 * se, abs=1e-3)
        assert t_rank == str(true_rank.get(item, "-"))
        assert float(t_share) == pytest.approx(100 * true_share.get(item, 0) / 200_000, abs=1e-3)
    hits = len(set(est.items) & {w for w, _ in truth[:20]})
    assert f"precision of the top 20: {hits}/20 = {hits / 20:.2f}" in text


def test_demo_states_the_truncation_and_the_times(run_200k):
    _, text = run_200k
    people = sample(200_000)
    n_long = sum(len(w.encode("utf-8")) > 8 for w in people)
    assert f"{n_long:,} people ({n_long / 200_000:.1%}) hold one of the 14,329 longer words" in text
    assert "the truth is counted on the same truncated items" in text
    assert re.search(r"time: privatize \d+ ms .*aggregate \d+ ms, estimate \d+ ms; total \d+\.\d\d s for 200,000 "
                     r"people; before it, a first call on 32,768 people took \d+ ms", text)
    assert "n = 200,000 people" in text and "PEM(epsilon=8.0, item_bits=64, top_k=20" in text


def test_demo_result_is_the_plain_pem_pipeline_on_the_same_people():
    """The warm-up call draws from its own generator: the estimate is exactly PEM's on the sampled people."""
    est = demo.demo_heavy_hitters(io.StringIO(), epsilon=4.0, n=50_000, top_k=10, rng=3)
    m = ldp.PEM(4.0, item_bits=64, top_k=10, item_type="str")
    with pytest.warns(ldp.heavy.TruncationWarning):
        direct = m.estimate_heavy_hitters(m.aggregate(m.privatize(sample(50_000), rng=3)))
    assert est == direct
    again = demo.demo_heavy_hitters(io.StringIO(), epsilon=4.0, n=50_000, top_k=10, rng=3)
    assert again == est and np.array_equal(again.standard_errors, est.standard_errors)


def test_demo_with_secure_randomness_runs():
    out = io.StringIO()
    est = demo.demo_heavy_hitters(out, n=40_000, top_k=3)
    assert est.k == 3 and "secure randomness" in out.getvalue() and len(table(out.getvalue())) == 3


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"n": 0}, ValueError, "n must be >= 1; got 0"),
    ({"n": -5}, ValueError, "n must be >= 1; got -5"),
    ({"n": 1.5}, TypeError, "n must be an integer; got float 1.5"),
    ({"n": True}, TypeError, "n must be an integer; got bool True"),
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"epsilon": float("nan")}, ValueError, "epsilon"),
    ({"top_k": 0}, ValueError, "top_k"),
])
def test_bad_input_raises_before_any_draw_or_output(kwargs, exc, match):
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    out = io.StringIO()
    with pytest.raises(exc, match=match):
        demo.demo_heavy_hitters(out, rng=rng, **kwargs)
    assert rng.bit_generator.state == state and out.getvalue() == ""


def test_docstring_example():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(demo.demo_heavy_hitters, "demo_heavy_hitters") if t.examples]
    assert tests
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


# -- the command line ------------------------------------------------------------------------------------

def test_cli_demo_heavy_hitters(capsys):
    assert cli.main(["demo", "heavy-hitters", "--n", "5e4", "--top-k", "5", "--epsilon", "6", "--rng", "2"]) == 0
    text = capsys.readouterr().out
    assert "n = 50,000 people" in text and "PEM(epsilon=6.0, item_bits=64, top_k=5" in text
    assert "a seeded simulation (rng=2)" in text
    assert len(table(text)) == 5 and "precision of the top 5:" in text


def test_cli_demo_help_documents_heavy_hitters(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", "--help"])
    assert exc.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    for phrase in ("[{heavy-hitters,vectors,telemetry}]", "--epsilon EPS", "--n N", "--top-k K", "--rng RNG",
                   "50,000 most frequent English words", "ldpnum demo heavy-hitters"):
        assert phrase in help_text, phrase


@pytest.mark.parametrize("argv, message", [
    (["demo", "--epsilon", "2"], "apply to `ldpnum demo heavy-hitters`"),
    (["demo", "--top-k", "3"], "apply to `ldpnum demo heavy-hitters`"),
    (["demo", "heavy-hitters", "--plot", "x.png"], "--plot applies to the flights demo"),
    (["demo", "heavy-hitters", "--epsilon", "0"], "epsilon must be"),
])
def test_cli_demo_option_errors(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ldpnum: error: ") and message in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["demo", "heavy"], ["demo", "heavy-hitters", "--n", "1.5"],
                                  ["demo", "heavy-hitters", "--n", "0"], ["demo", "heavy-hitters", "--top-k", "0"]])
def test_cli_demo_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2 and "usage: ldpnum demo" in capsys.readouterr().err
