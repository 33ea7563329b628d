"""SVIM/SVSM estimates: candidates kept as the clients' words, the size correction's bias in the intervals,
impossible estimates flagged, noise candidates dropped (issue 25)."""

import warnings

import numpy as np
import pytest

import ldpnum as ldp


def _quiet_run(protocol, sets, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldp.TruncationWarning)
        return protocol.run(sets, **kwargs)


# -- 1. candidates are the words the clients encoded -----------------------------------------------------------

def test_str_item_cut_inside_a_multibyte_character_is_estimated():
    # "日本語の" is 12 UTF-8 bytes; at item_bits=64 it is cut after 8 bytes, inside "語". Re-encoding the
    # decoded "日本" gave a word nobody holds: 0.0 ± 0.001 where the truth is 0.5.
    est = _quiet_run(ldp.SVIM(4.0, top_k=2), [{"日本語の"}] * 20_000 + [{"tea"}] * 20_000, rng=1)
    freq = dict(zip(est.items, est.frequencies))
    se = dict(zip(est.items, est.standard_errors))
    assert set(freq) == {"日本", "tea"}
    # 4.5 standard errors (sampling error of the estimate phase) from the truth
    assert abs(freq["日本"] - 0.5) < 4.5 * se["日本"]
    assert abs(freq["tea"] - 0.5) < 4.5 * se["tea"]


def test_cut_word_and_its_decoded_text_are_different_candidates():
    # "日本" (6 bytes) and "日本語の" cut inside "語" decode alike but are two clients' words: each is
    # estimated on its own; the result shows the text once (the better-ranked word) and says so.
    sets = [{"日本語の"}] * 24_000 + [{"日本"}] * 12_000 + [{"tea"}] * 4_000
    sv = ldp.SVIM(4.0, top_k=3)
    est = _quiet_run(sv, sets, rng=2)
    assert est.items[:2] == ("日本", "tea")
    f = dict(zip(est.items, est.frequencies))
    se = dict(zip(est.items, est.standard_errors))
    assert abs(f["日本"] - 0.6) < 4.5 * se["日本"]  # the cut word's 60%, not 30% + 60% nor 30%
    assert est.provenance["merged_display"] >= 1


def test_bytes_items_keep_their_words():
    sets = [{"日本語の".encode()}] * 20_000 + [{b"tea"}] * 20_000
    est = _quiet_run(ldp.SVIM(4.0, top_k=2, item_type="bytes", item_bits=32), sets, rng=1)
    freq = dict(zip(est.items, est.frequencies))
    assert set(freq) == {"日本語の".encode()[:4], b"tea"}
    assert all(abs(freq[k] - 0.5) < 4.5 * s for k, s in zip(est.items, est.standard_errors))
