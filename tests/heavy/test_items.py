"""Item encoding for heavy hitters: exact round trips, the prefix property, truncation, and bad input."""

import doctest
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ldpnum
import ldpnum as ldp
from ldpnum.heavy import TruncationWarning, decode_items, encode_items
from ldpnum.heavy import items as items_module


def _naive_bytes_word(b, bits):
    """The definition, bit by bit: the first bits//8 bytes, zero-padded, read as a big-endian integer."""
    nbytes = bits // 8
    b = b[:nbytes].ljust(nbytes, b"\x00")
    bitstring = "".join(f"{byte:08b}" for byte in b)
    return int(bitstring, 2) if bitstring else 0


# -- round trips and the definition -------------------------------------------------------------------------

no_nul_text = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(no_nul_text, max_size=20), st.sampled_from([8, 16, 24, 32, 40, 48, 56, 64]))
def test_str_round_trip_when_within_width_and_matches_the_definition(strings, bits):
    fits = [s for s in strings if len(s.encode()) <= bits // 8]
    words, kind, cut = encode_items(fits, bits)
    assert kind == "str" and cut == 0 and words.dtype == np.uint64
    assert decode_items(words, kind, bits) == fits
    assert words.tolist() == [_naive_bytes_word(s.encode(), bits) for s in fits]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=8).filter(lambda b: not b.endswith(b"\x00")), max_size=20),
       st.sampled_from([8, 16, 32, 56, 64]))
def test_bytes_round_trip_when_within_width(blobs, bits):
    fits = [b for b in blobs if len(b) <= bits // 8]
    words, kind, cut = encode_items(fits, bits)
    assert kind == ("bytes" if fits else "str") and cut == 0
    if fits:
        assert decode_items(words, kind, bits) == fits
    assert words.tolist() == [_naive_bytes_word(b, bits) for b in fits]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 64).flatmap(lambda bits: st.tuples(
    st.just(bits), st.lists(st.integers(0, 2**bits - 1), min_size=1, max_size=20))))
def test_uint_round_trip_for_every_width(case):
    bits, ints = case
    words, kind, cut = encode_items(ints, bits)
    assert kind == "uint" and cut == 0
    assert words.tolist() == ints
    assert decode_items(words, kind, bits) == ints
    back = decode_items(encode_items(np.array(ints, dtype=np.uint64), bits)[0], "uint", bits)
    assert back == ints


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=12), st.sampled_from([8, 24, 64]))
def test_prefix_of_j_bytes_is_the_top_8j_bits(blob, bits):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        (w,), _, _ = encode_items([blob], bits)
        for j in range(0, min(len(blob), bits // 8) + 1):
            (pw,), _, _ = encode_items([blob[:j]], bits)
            assert int(w) >> (bits - 8 * j) == int(pw) >> (bits - 8 * j) == _naive_bytes_word(blob[:j], 8 * j)


def test_words_are_read_only_contiguous_uint64_and_never_the_callers_array():
    x = np.arange(10, dtype=np.uint64)
    words, _, _ = encode_items(x, 8)
    assert words.dtype == np.uint64 and words.flags.c_contiguous and not words.flags.writeable
    assert not np.shares_memory(words, x)
    x[0] = 99
    assert words[0] == 0
    assert x.flags.writeable  # the caller's array is left alone
    strided, _, _ = encode_items(np.arange(20, dtype=np.int32)[::2], 8)
    assert strided.flags.c_contiguous and strided.tolist() == list(range(0, 20, 2))


def test_known_words():
    assert encode_items(["ab", "b"], 16)[0].tolist() == [0x6162, 0x6200]
    assert encode_items([b"\x01"], 64)[0].tolist() == [1 << 56]
    assert encode_items([0, 5, 2**64 - 1], 64)[0].tolist() == [0, 5, 2**64 - 1]


def test_accepted_containers_agree():
    expected = encode_items(["a", "bb", "ccc"], 32)[0].tolist()
    forms = [("a", "bb", "ccc"), np.array(["a", "bb", "ccc"]), np.array(["a", "bb", "ccc"], dtype=object),
             pd.Series(["a", "bb", "ccc"]), pd.Series(["a", "bb", "ccc"], dtype="string"),
             pd.Series(["a", "bb", "ccc"], dtype="category"), pd.Index(["a", "bb", "ccc"]),
             pd.array(["a", "bb", "ccc"], dtype="string"), [np.str_("a"), "bb", np.str_("ccc")]]
    try:
        forms.append(pd.Series(["a", "bb", "ccc"], dtype=pd.StringDtype("pyarrow")))
    except ImportError:  # pragma: no cover - pyarrow comes with the test extra
        pass
    for form in forms:
        words, kind, _ = encode_items(form, 32)
        assert kind == "str" and words.tolist() == expected, type(form)
    b = encode_items([b"a", b"bb"], 16)[0].tolist()
    assert encode_items(np.array([b"a", b"bb"]), 16)[0].tolist() == b
    assert encode_items(pd.Series([b"a", b"bb"]), 16)[0].tolist() == b
    assert encode_items([np.bytes_(b"a"), b"bb"], 16)[0].tolist() == b
    ints = [0, 7, 255]
    for form in (np.array(ints, dtype=np.int16), np.array(ints, dtype=np.uint16), pd.Series(ints),
                 pd.Series(ints, dtype="Int64"), pd.Series(ints, dtype="UInt8"), [np.int64(0), 7, np.uint8(255)],
                 np.array(ints, dtype=object)):
        words, kind, _ = encode_items(form, 8)
        assert kind == "uint" and words.tolist() == ints, type(form)


def test_empty_input_type_from_dtype_else_str():
    assert encode_items([], 64)[1:] == ("str", 0)
    assert encode_items([], 12)[1] == "uint"  # no byte item fits 12 bits
    assert encode_items(np.array([], dtype=np.int64), 64)[1] == "uint"
    assert encode_items(np.array([], dtype="S3"), 64)[1] == "bytes"
    assert encode_items(pd.Series([], dtype="string"), 64)[1] == "str"
    words = encode_items([], 64)[0]
    assert words.dtype == np.uint64 and words.shape == (0,)


def test_pandas_pyarrow_strings_with_truncation_and_unicode():
    pytest.importorskip("pyarrow")
    s = pd.Series(["naïve", "x", "日本語"], dtype=pd.StringDtype("pyarrow"))
    with pytest.warns(TruncationWarning):
        words, kind, cut = encode_items(s, 32)
    assert cut == 2
    assert decode_items(words, kind, 32) == ["naï", "x", "日\ufffd"]


# -- truncation ---------------------------------------------------------------------------------------------

def test_truncation_is_counted_and_warned_once_with_the_count_but_no_position():
    # A client's warning is a side channel: it keeps the count but must not point at an individual input (it
    # used to say "first at index 2" and carry first_index=2). A collector-side caller may ask for the position.
    items = ["short", "exactly8", "longer than eight", "x", "also too long"]
    with pytest.warns(TruncationWarning) as record:
        words, kind, cut = encode_items(items, 64)
    assert len(record) == 1
    w = record[0].message
    assert isinstance(w, UserWarning) and w.count == 2 and w.first_index == -1 and cut == 2
    assert "2 item(s)" in str(w) and "index" not in str(w) and "longer than eight" not in str(w)
    assert decode_items(words, kind, 64) == ["short", "exactly8", "longer t", "x", "also too"]
    for form in (items, np.array(items), np.array(items, dtype=object), [s.encode() for s in items],
                 np.array([s.encode() for s in items])):  # every route: compiled, str list, U, S
        with pytest.warns(TruncationWarning) as record:
            encode_items(form, 64)
        assert record[0].message.first_index == -1 and "index" not in str(record[0].message)
        with pytest.warns(TruncationWarning, match="2 item.*first at index 2") as record:
            encode_items(form, 64, locate=True)
        assert record[0].message.first_index == 2
    with pytest.raises(TypeError, match="locate must be a bool"):
        encode_items(items, 64, locate="yes")


def test_a_prefix_protocols_truncation_warning_names_no_item():
    for m in (pem := ldpnum.PEM(2.0, item_bits=16), ldpnum.TreeHist(2.0, item_bits=16, item_type="bytes")):
        x = ["ab", "abc", "z"] if m.item_type == "str" else [b"ab", b"abc", b"z"]
        with pytest.warns(TruncationWarning) as record:
            m.privatize(x, rng=0)
        assert record[0].message.count == 1 and record[0].message.first_index == -1
        assert "index" not in str(record[0].message)
    with pytest.warns(TruncationWarning, match="first at index 1"):
        pem.prepare_values(["ab", "abc"], locate=True)


def test_no_warning_when_nothing_is_truncated():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert encode_items(["12345678"], 64)[2] == 0


def test_truncate_false_raises_instead_and_names_count_and_first_index():
    with pytest.raises(ValueError, match=r"2 item\(s\).*first at index 1"):
        encode_items([b"ok", b"too long!", b"also too long"], 64, truncate=False)
    with pytest.raises(ValueError, match=r"1 item\(s\).*first at index 0"):
        encode_items(np.array([b"abc"]), 16, truncate=False)


def test_truncation_inside_a_multibyte_character_decodes_to_a_replacement_mark():
    with pytest.warns(TruncationWarning):
        words, kind, _ = encode_items(["aé", "€uro"], 16)  # é = c3 a9, € = e2 82 ac
    assert words.tolist() == [0x61C3, 0xE282]
    assert decode_items(words, kind, 16) == ["a\ufffd", "\ufffd"]


def test_societe_cut_inside_its_last_character_is_marked_not_silently_shortened():
    # "société" is 9 bytes of UTF-8 (é = c3 a9): 64 bits cut the last é after its first byte; 48 bits end on a
    # character boundary ("socié", 6 bytes), so nothing is marked there.
    with pytest.warns(TruncationWarning):
        w64, kind, _ = encode_items(["société"], 64)
    assert decode_items(w64, kind, 64) == ["sociét\ufffd"]
    with pytest.warns(TruncationWarning):
        w48, kind, _ = encode_items(["société"], 48)
    assert decode_items(w48, kind, 48) == ["socié"]
    w72, kind, _ = encode_items(["société"], 72)
    assert decode_items(w72, kind, 72) == ["société"]


def test_decoding_a_word_no_string_encodes_replaces_interior_bad_bytes():
    assert decode_items([0xFF61], "str", 16) == ["\ufffda"]


def test_bytes_trailing_zeros_are_padding():
    words, kind, _ = encode_items([b"ab\x00", b"a\x00b"], 32)
    assert decode_items(words, kind, 32) == [b"ab", b"a\x00b"]


# -- bad input ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("items, exc, match", [
    (["a", b"b"], TypeError, r"item 0 is str but item 1 is bytes"),
    ([1, 2, "x"], TypeError, r"item 0 is uint but item 2 is str"),
    ([None, b"a", "b"], TypeError, r"item 1 is bytes but item 2 is str"),
    (["a", True], TypeError, r"item 1 is a bool"),
    (np.array([True, False]), TypeError, "booleans"),
    (pd.Series([True]), TypeError, "booleans"),
    ([1.0, 2.0], TypeError, r"item 0 is a float.*convert"),
    (np.array([1.5]), TypeError, "floats.*convert"),
    (pd.Series([1.0]), TypeError, "floats"),
    ([object()], TypeError, r"item 0 is object"),
    ("abc", TypeError, "single str"),
    (b"abc", TypeError, "single bytes"),
    ({"a", "b"}, TypeError, "list, tuple"),
    (iter(["a"]), TypeError, "list, tuple"),
    (["a", None, "b", float("nan")], ValueError, r"2 item\(s\) are missing, first at index 1"),
    (["a", pd.NA], ValueError, r"1 item\(s\) are missing, first at index 1"),
    (pd.Series(["a", None, "c"], dtype="string"), ValueError, r"1 item\(s\) are missing, first at index 1"),
    (pd.Series(["a", None]), ValueError, r"missing, first at index 1"),
    (pd.Series([1, None, 3], dtype="Int64"), ValueError, r"1 item\(s\) are missing, first at index 1"),
    ([3, -1, -2], ValueError, r"2 item\(s\) are negative, first at index 1"),
    (np.array([3, -1, -2]), ValueError, r"2 item\(s\) are negative, first at index 1"),
    ([1, 2**64], ValueError, r"below 2\*\*item_bits = 2\*\*64; 1 item\(s\) are not, first at index 1"),
    (["a\x00b", "c", "\x00"], ValueError, r"NUL.*2 item\(s\) do, first at index 0"),
    (np.array([["a"]]), ValueError, "one-dimensional"),
])
def test_bad_items_raise_one_clear_error(items, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is warned either
        with pytest.raises(exc, match=match) as info:
            encode_items(items, 64)
    assert "items" in str(info.value)


def test_bad_input_message_uses_the_given_name():
    with pytest.raises(ValueError, match="^query"):
        encode_items(["a", None], 64, name="query")


def test_ints_too_wide_for_a_narrow_width_are_refused_not_truncated():
    with pytest.raises(ValueError, match=r"2\*\*10; 1 item\(s\) are not, first at index 2 \(1024\).*never truncated"):
        encode_items([0, 1023, 1024], 10)
    with pytest.raises(ValueError, match=r"first at index 0"):
        encode_items(np.array([256, 3], dtype=np.uint16), 8)


@pytest.mark.parametrize("bits, exc", [(0, ValueError), (257, ValueError), (-8, ValueError), (8.0, TypeError),
                                       (True, TypeError), ("64", TypeError), (None, TypeError)])
def test_bad_item_bits(bits, exc):
    with pytest.raises(exc, match="item_bits"):
        encode_items([1], bits)
    with pytest.raises(exc, match="item_bits"):
        decode_items([1], "uint", bits)


def test_byte_items_need_whole_bytes():
    with pytest.raises(ValueError, match=r"str items need item_bits a multiple of 8.*12"):
        encode_items(["a"], 12)
    with pytest.raises(ValueError, match=r"bytes items need item_bits a multiple of 8"):
        encode_items(np.array([b"a"]), 60)
    assert encode_items([5], 12)[1] == "uint"


def test_bad_keywords():
    with pytest.raises(TypeError, match="truncate"):
        encode_items(["a"], 64, truncate="no")
    with pytest.raises(TypeError, match="name"):
        encode_items(["a"], 64, name=3)


def test_decode_checks_its_arguments():
    with pytest.raises(ValueError, match="item_type"):
        decode_items([1], "text", 64)
    with pytest.raises(ValueError, match=r"below 2\*\*item_bits = 2\*\*8; 1 are not, first at index 1"):
        decode_items([1, 256], "uint", 8)
    with pytest.raises(ValueError, match="negative"):
        decode_items(np.array([-1]), "uint", 8)
    with pytest.raises(TypeError, match="unsigned integers"):
        decode_items(np.array([1.0]), "uint", 8)
    with pytest.raises(ValueError, match="one-dimensional"):
        decode_items(np.zeros((1, 1), dtype=np.uint64), "uint", 8)
    assert decode_items(np.array([], dtype=np.uint64), "str", 64) == []


def test_the_naive_definition_would_catch_a_wrong_byte_order():
    # negative control: a little-endian packing differs from the definition the tests check against
    word = int(encode_items([b"ab"], 16)[0][0])
    assert word == _naive_bytes_word(b"ab", 16)
    assert int.from_bytes(b"ab", "little") != _naive_bytes_word(b"ab", 16)


# -- speed and documentation --------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_million_short_strings_encode_in_well_under_a_second():
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnop"))
    lengths = rng.integers(1, 13, 1_000_000)
    pool = ["".join(rng.choice(letters, n)) for n in range(1, 13) for _ in range(50)]
    strings = [pool[(n - 1) * 50 + i] for n, i in zip(lengths, rng.integers(0, 50, lengths.size))]
    best = np.inf
    for _ in range(2):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncationWarning)
            words, _, cut = encode_items(strings, 64)
        best = min(best, time.perf_counter() - start)
    assert words.size == 1_000_000 and cut == np.count_nonzero(lengths > 8)
    assert best < 1.0, f"{best:.2f} s"


def test_docstring_examples_run():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for module in (items_module, ldpnum.heavy) for t in finder.find(module) if t.examples]
    assert len(tests) >= 3
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


# -- the compiled pass over object arrays agrees with the checked NumPy route --------------------------------

def _numpy_route(values, bits):
    """Words by the NumPy route (the list of bytes through a fixed-width ``S`` array), with the truncation count."""
    encoded = [v.encode("utf-8") if isinstance(v, str) else v for v in values]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        words, cut, _ = items_module._bytes_words(encoded, bits, "items", "bytes", True)
    return items_module.words_to_ints(words), cut


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=30), st.sampled_from([8, 16, 40, 64, 72, 136, 256]))
def test_compiled_bytes_pass_matches_the_numpy_route_and_the_definition(blobs, bits):
    arr = np.empty(len(blobs), dtype=object)
    arr[:] = blobs
    words, kind, cut, first = items_module._object_words(arr, bits)
    assert kind == "bytes" and words.shape == ((len(blobs),) if bits <= 64 else (len(blobs), -(-bits // 64)))
    assert (items_module.words_to_ints(words), cut) == _numpy_route(blobs, bits)
    assert items_module.words_to_ints(words) == [_naive_bytes_word(b, bits) for b in blobs]
    long = [i for i, b in enumerate(blobs) if len(b) > bits // 8 and b[bits // 8] != 0]
    assert first == (long[0] if long else -1)


@settings(max_examples=200, deadline=None)
@given(st.lists(no_nul_text | st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                                      min_size=9, max_size=40), min_size=1, max_size=30),
       st.sampled_from([8, 24, 64, 96, 256]))
def test_compiled_str_pass_matches_the_numpy_route_for_unicode(strings, bits):
    arr = np.empty(len(strings), dtype=object)
    arr[:] = strings
    words, kind, cut, _ = items_module._object_words(arr, bits)
    assert kind == "str"
    assert (items_module.words_to_ints(words), cut) == _numpy_route(strings, bits)


def test_compiled_pass_reads_strided_and_read_only_arrays():
    base = np.empty(6, dtype=object)
    base[:] = [b"a", b"bb", b"ccc", b"dddd", b"e", b"ffffffffff"]
    base.flags.writeable = False
    for view in (base, base[::2], base[::-1], base[1::3]):
        words = items_module._object_words(view, 64)[0]
        assert words.tolist() == [_naive_bytes_word(b, 64) for b in view]
        wide = items_module._object_words(view, 72)[0]
        assert items_module.words_to_ints(wide) == [_naive_bytes_word(b, 72) for b in view]


@pytest.mark.parametrize("values", [
    [b"a", "b"],                       # mixed bytes and str
    ["a", "b\x00c"],                   # NUL in a str
    [b"a", bytearray(b"b")],           # not exact bytes
    [b"a", None],                      # missing
    ["a", 3],                          # other type
    [1, 2],                            # ints take their own route
])
def test_compiled_pass_leaves_everything_else_to_the_checked_route(values):
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    assert items_module._object_words(arr, 64) is None


def test_compiled_pass_needs_whole_bytes():
    arr = np.empty(1, dtype=object)
    arr[:] = [b"a"]
    assert items_module._object_words(arr, 12) is None


# -- clear messages --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("container", [list, lambda v: np.array(v, dtype=object), np.array,
                                       lambda v: pd.Series(v, dtype=object)])
def test_lone_surrogates_are_named_by_index_not_a_codec_error(container):
    # A str with a lone surrogate (from errors="surrogateescape", or a JSON "\ud800") has no UTF-8 form; it
    # used to surface as "'utf-8' codec can't encode character '\ud800' ...: surrogates not allowed"
    items = container(["ok", "fine", "a\ud800", "\udcffb", "also ok"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing warned (no truncation count) before the error
        with pytest.raises(ValueError, match=r"^x must be valid Unicode text: 2 str item\(s\) have no UTF-8 form, "
                                             r"first at index 2 \('a\\ud800': a lone surrogate '\\ud800' at "
                                             r"position 1.*item_type='bytes'") as exc:
            encode_items(items, 16, name="x")
    assert "codec" not in str(exc.value)


def test_a_prefix_protocol_names_the_surrogate_before_any_draw(monkeypatch):
    from ldpnum import _random

    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: pytest.fail("words drawn for a bad input"))
    with pytest.raises(ValueError, match=r"x must be valid Unicode text: 1 str item\(s\).*first at index 1"):
        ldpnum.PEM(2.0).privatize(["a", "\ud83d", "b"], rng=0)


@pytest.mark.parametrize("words,exc,match", [
    ([2**70], ValueError, r"words must be below 2\*\*item_bits = 2\*\*64; 1 are not, first at index 0 \(1180591620717411303424\)"),
    ([5, -1, 2**64 - 1], ValueError, r"words must be non-negative; 1 are negative, first at index 1 \(-1\)"),
    ([1, 2.5], TypeError, r"words must be unsigned integers; 1 are not, first at index 1 \(float 2.5\)"),
    ([1, True], TypeError, r"first at index 1 \(bool True\)"),
    (["a"], TypeError, r"first at index 0 \(str 'a'\)"),
])
def test_decode_names_a_bad_word_instead_of_a_c_conversion_error(words, exc, match):
    # lists were converted by NumPy: -1 next to 2**64 - 1 became floats ("got dtype float64"), 2**70 an object
    with pytest.raises(exc, match=match):
        decode_items(words, "uint", 64)


@pytest.mark.parametrize("prefixes,match", [
    ([2**70], r"prefixes must be below 2\*\*length = 2\*\*16; 1 are not, first at index 0"),
    ([3, -1], r"prefixes must be non-negative; 1 are negative, first at index 1 \(-1\)"),
    (np.array([1, 70000], np.uint64), r"prefixes must be below 2\*\*length = 2\*\*16; 1 are not, first at index 1"),
])
def test_admissible_prefixes_name_bad_candidates(prefixes, match):
    # were "Python int too large to convert to C long" / "Python integer -1 out of bounds for uint64", and a
    # too-wide candidate was silently judged on its low bits
    from ldpnum.heavy.items import admissible_prefixes
    with pytest.raises(ValueError, match=match):
        admissible_prefixes(prefixes, 16, "str", 64)
    with pytest.raises(ValueError, match=r"length must be an int in \[1, item_bits = 64\]; got 65"):
        admissible_prefixes([1], 65, "str", 64)
    with pytest.raises(TypeError, match="length must be an integer; got float 8.0"):  # was a ValueError
        admissible_prefixes([1], 8.0, "str", 64)
    with pytest.raises(ValueError, match="item_type"):
        admissible_prefixes([1], 8, "text", 64)


def test_check_words_is_the_one_check_of_encoded_items_read_back():
    from ldpnum.heavy.items import check_words
    assert check_words((1, 2**64 - 1), 64).tolist() == [1, 2**64 - 1]
    assert check_words(np.array([7], np.int64), 3).dtype == np.uint64
    with pytest.raises(ValueError, match=r"candidates must be below 2\*\*item_bits = 2\*\*8; 1 are not, first at "
                                         r"index 2 \(256\)"):
        check_words([0, 1, 256], 8, name="candidates")
    with pytest.raises(TypeError, match=r"candidates must be unsigned integers; 1 are not, first at index 0"):
        check_words([None], 8, name="candidates")
    with pytest.raises(ValueError, match="item_bits"):
        check_words([1], 257)


def test_a_prefix_protocols_truncation_warning_points_at_the_callers_line():
    """Regression: PEM's TruncationWarning was attributed to ldpnum/heavy/prefix.py, not the caller's line."""
    m = ldp.PEM(2.0, item_bits=16, top_k=1, item_type="str")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        m.privatize(["abcdef", "ab"], rng=0)
    cut = [r for r in rec if issubclass(r.category, ldp.TruncationWarning)]
    assert len(cut) == 1 and cut[0].filename == __file__, [(r.category, r.filename) for r in rec]


# -- items wider than 64 bits ---------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=32),
                max_size=12), st.sampled_from([72, 128, 200, 256]))
def test_long_str_round_trip_and_the_definition(strings, bits):
    fits = [s for s in strings if len(s.encode()) <= bits // 8]
    words, kind, cut = encode_items(fits, bits)
    assert kind == "str" and cut == 0 and words.shape == (len(fits), -(-bits // 64)) and words.dtype == np.uint64
    assert items_module.words_to_ints(words) == [_naive_bytes_word(s.encode(), bits) for s in fits]
    assert decode_items(words, kind, bits) == fits
    assert decode_items(items_module.words_to_ints(words), kind, bits) == fits  # Python ints are accepted too


def test_long_bytes_and_int_round_trip_with_each_route():
    blobs = [bytes(range(1, 33)), b"\x00" * 5 + b"id", b"x" * 9]
    for container in (blobs, np.array(blobs, dtype="S32"), np.array(blobs, dtype=object)):
        words, kind, cut = encode_items(container, 256)
        assert kind == "bytes" and cut == 0 and words.shape == (3, 4)
        assert decode_items(words, kind, 256) == blobs
    ints = [0, 2**64, 2**200 + 12345, 2**256 - 1]
    words, kind, _ = encode_items(ints, 256)
    assert words.shape == (4, 4) and words[1].tolist() == [0, 0, 1, 0] and decode_items(words, kind, 256) == ints
    small = np.array([3, 2**64 - 1], np.uint64)  # a NumPy array at a wide width: the low word of each row
    words, _, _ = encode_items(small, 100)
    assert words.tolist() == [[0, 3], [0, 2**64 - 1]] and decode_items(words, "uint", 100) == [3, 2**64 - 1]


def test_a_long_item_keeps_the_prefixes_of_the_narrow_encoding():
    # The value is the same integer whatever the storage: the top 64 bits of a 256-bit item are its 64-bit word.
    text = ["aéroport Charles-de-Gaulle", "Zürich"]
    wide, _, _ = encode_items(text, 256)
    with pytest.warns(TruncationWarning):
        narrow, _, _ = encode_items(text, 64)
    assert [v >> 192 for v in items_module.words_to_ints(wide)] == narrow.tolist()


def test_long_items_bad_input_one_clear_error_before_anything():
    with pytest.raises(ValueError, match=r"item_bits must be in \[1, 256\]; got 257"):
        encode_items(["a"], 257)
    with pytest.raises(ValueError, match=r"bytes items need item_bits a multiple of 8.*item_bits=100"):
        encode_items([b"a"], 100)
    with pytest.raises(ValueError, match=r"2\*\*item_bits = 2\*\*256; 1 item\(s\) are not, first at index 1"):
        encode_items([1, 2**256, 5], 256)
    with pytest.raises(ValueError, match=r"2\*\*item_bits = 2\*\*70; 1 item\(s\) are not, first at index 0"):
        encode_items([2**70], 70)
    with pytest.raises(ValueError, match="first at index 1.*33 bytes"):
        encode_items(["a", "b" * 33], 256, truncate=False)
    from ldpnum.heavy.items import check_words
    with pytest.raises(ValueError, match=r"below 2\*\*item_bits = 2\*\*72; 1 are not, first at index 1"):
        check_words(np.array([[0, 1], [256, 0]], np.uint64), 72)
    with pytest.raises(ValueError, match=r"must be one-dimensional, or \(2, 2\) rows of words"):
        check_words(np.zeros((2, 3), np.uint64), 72)
    assert check_words([2**71], 72).tolist() == [[128, 0]]


def test_item_digests_match_the_naive_digest_and_keep_narrow_items():
    import naive

    key = items_module.DIGEST_KEY
    words, _, _ = encode_items(["a" * 30, "a" * 29 + "b", ""], 256)
    want = [naive.digest64(key, v, 4) for v in items_module.words_to_ints(words)]
    assert items_module.item_digests(words, 256).tolist() == want
    narrow, _, _ = encode_items(["abc"], 64)
    assert items_module.item_digests(narrow, 64) is narrow or items_module.item_digests(narrow, 64).tolist() == \
        narrow.tolist()
    # a prefix of at most 64 bits is the prefix itself; a longer one the digest of its digits and their number
    v = items_module.words_to_ints(words)[0]
    got = items_module.prefix_digests(words[:1].repeat(3, axis=0), 256, np.array([256 - 20, 192, 256 - 100]))
    assert got.tolist() == [v >> 236, v >> 192, naive.digest64(key, v >> 156, 2)]


@pytest.mark.parametrize("item_bits", [72, 128, 190, 256])
def test_prefix_digests_of_every_length_and_shift_match_the_naive_digest(item_bits):
    # every shift (word-aligned or not, digits above the item's words) of random items of 2, 3 and 4 words, in the
    # compiled kernel (n above the interpreted size) and the interpreted one; digits read without branches
    import naive

    rng = np.random.default_rng(item_bits)
    n = 4096
    ints = [int.from_bytes(rng.bytes(32), "big") >> (256 - item_bits) for _ in range(n)]
    words = items_module.ints_to_words(ints, item_bits)
    shifts = rng.integers(0, item_bits, n)
    shifts[:item_bits] = np.arange(item_bits)
    want = [naive.prefix_word(v, item_bits, item_bits - int(s), items_module.DIGEST_KEY) for v, s in zip(ints, shifts)]
    assert items_module.prefix_digests(words, item_bits, shifts).tolist() == want
    assert items_module.prefix_digests(words[:5], item_bits, shifts[:5]).tolist() == want[:5]
    long = [w for w, s in zip(want, shifts) if item_bits - s > 64]
    assert len(set(long)) == len(long)


def _avalanche(digest, rng, n=2000):
    """Per (input bit flipped, output bit): the share of random 256-bit items whose output bit the flip changes."""
    ints = [int.from_bytes(rng.bytes(32), "big") for _ in range(n)]
    flips = [0, 63, 64, 130, 255]
    out = np.zeros((len(flips), 64))
    for f, j in enumerate(flips):
        for v in ints:
            d = digest(v) ^ digest(v ^ (1 << j))
            out[f] += [(d >> b) & 1 for b in range(64)]
    return out / n


def test_the_digest_changes_each_output_bit_with_probability_one_half_when_one_input_bit_flips():
    # avalanche within 5 standard errors (2,000 items, 5 × 64 cells); without its finalizer the chain fails it
    import naive

    key = items_module.DIGEST_KEY
    share = _avalanche(lambda v: naive.digest64(key, v, 4), np.random.default_rng(1))
    assert np.abs(share - 0.5).max() < 5 * np.sqrt(0.25 / 2000)
    weak = _avalanche(lambda v: naive.digest64(key, v, 4, finalize=False), np.random.default_rng(1))
    assert np.abs(weak - 0.5).max() > 0.4  # the last digit's top bit never reaches the low output bits


def test_wide_candidates_admissibility_and_distinctness():
    words, _, _ = encode_items(["naïve long word ok", "x"], 160)
    bad = items_module.ints_to_words([0x61 << 80 | 0x62], 160)  # "\0...a\0b": a zero byte before a non-zero one
    ok = items_module.admissible_prefixes(np.concatenate([words, bad]), 160, "str", 160)
    assert ok.tolist() == [True, True, False]
    with pytest.warns(TruncationWarning):
        cw, _, _ = encode_items(["a" * 20 + "b", "a" * 20 + "c"], 160)
    with pytest.raises(ValueError, match="candidate 1 .* encodes to the same 160-bit word as candidate 0"):
        items_module.distinct_candidates(["a" * 20 + "b", "a" * 20 + "c"], cw, "str", 160)


def test_naive_siphash13_is_cpythons_hash_of_bytes():
    """The naive SipHash (the reference of the keyed words, SipHash-2-4) against an independent implementation:
    CPython hashes bytes with SipHash-1-3 (``sys.hash_info.algorithm``), under a zero key when ``PYTHONHASHSEED=0``."""
    import os
    import subprocess
    import sys

    import naive

    if sys.hash_info.algorithm != "siphash13":
        pytest.skip(f"this Python hashes with {sys.hash_info.algorithm}")
    msgs = [b"abc", bytes(range(32)), "société".encode()]
    out = subprocess.run([sys.executable, "-c", f"print([hash(m) for m in {msgs!r}])"], capture_output=True,
                         text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True).stdout
    want = [h - 2**64 if h >= 2**63 else h for h in (naive.siphash13(bytes(16), m) for m in msgs)]
    assert eval(out) == want
    assert naive.siphash(bytes(16), b"abc", 2, 4) != naive.siphash13(bytes(16), b"abc")  # negative control


#: Every mechanism that hashes items through their digest above 64 bits, at 256 and at 64 bits.
DIGEST_MECHANISMS = {
    "pem": lambda bits: ldp.PEM(4.0, item_bits=bits, top_k=2, n_hashes=4),
    "treehist": lambda bits: ldp.TreeHist(4.0, item_bits=bits, top_k=2, n_hashes=4),
    "count_mean_sketch": lambda bits: ldp.CountMeanSketch(4.0, item_bits=bits, width=64, hashes=4),
    "rappor": lambda bits: ldp.RAPPOR(k=16, h=2, cohorts=2, item_bits=bits),
}


def _with_digest(spec, digest):
    """``spec`` with its ``digest`` parameter replaced (``None``: removed)."""
    import dataclasses

    params = {k: v for k, v in spec.params if k != "digest"}
    if digest is not None:
        params["digest"] = digest
    return dataclasses.replace(spec, params=tuple(params.items()))


def _collect(m, items):
    kw = {"keys": ldp.ClientKeys.generate(len(items), rng=1)} if m.memoized else {}
    return m.aggregate(m.privatize(items, rng=2, **kw))


@pytest.mark.parametrize("name", sorted(DIGEST_MECHANISMS))
def test_specs_of_wide_items_name_the_digest_and_others_are_refused(name):
    wide, narrow = DIGEST_MECHANISMS[name](256), DIGEST_MECHANISMS[name](64)
    assert wide.spec.get("digest") == items_module.DIGEST_NAME
    assert "digest" not in dict(narrow.spec.params)  # specs of at most 64 bits are unchanged
    assert ldp.from_spec(wide.spec) == wide and ldp.from_spec(narrow.spec) == narrow
    with pytest.raises(ValueError, match=f"hashes its 256-bit items with the digest 'siphash13-words/v1'; this "
                                         f"ldpnum computes '{items_module.DIGEST_NAME}'"):
        ldp.from_spec(_with_digest(wide.spec, "siphash13-words/v1"))
    with pytest.raises(ValueError, match="has 256-bit items but names no digest"):
        ldp.from_spec(_with_digest(wide.spec, None))
    with pytest.raises(ValueError, match="names the digest .* but its items have item_bits=64"):
        ldp.from_spec(_with_digest(narrow.spec, items_module.DIGEST_NAME))


@pytest.mark.parametrize("name", sorted(DIGEST_MECHANISMS))
def test_aggregates_of_another_digest_are_neither_merged_nor_estimated(name):
    m = DIGEST_MECHANISMS[name](256)
    agg = _collect(m, ["a" * 31 + "x", "b" * 30] * 1000)
    other = ldp.Aggregate(agg.counts, _with_digest(agg.spec, "siphash13-words/v1"), agg.n_reports)
    older = ldp.Aggregate(agg.counts, _with_digest(agg.spec, None), agg.n_reports)
    for bad, what in ((other, r"parameter digest='siphash13-words/v1' \(str\) instead of"),
                      (older, "parameter 'digest' missing")):
        with pytest.raises(ldp.SpecMismatchError, match=what):
            agg + bad
        with pytest.raises(ldp.SpecMismatchError, match=what):
            ldp.Aggregate.merge([agg, bad])
        estimate = m.estimate_frequencies if name in ("count_mean_sketch", "rappor") else m.estimate_heavy_hitters
        kw = {"candidates": ["a" * 31 + "x"]} if name in ("count_mean_sketch", "rappor") else {}
        with pytest.raises(ldp.SpecMismatchError, match=what):
            estimate(bad, **kw)
    # read back from bytes, the edited spec is refused when the collector states the mechanism it expects
    with pytest.raises(ValueError, match="digest 'siphash13-words/v1'"):
        ldp.from_spec(ldp.Aggregate.from_bytes(other.to_bytes()).spec)
    assert estimate(agg, **kw).n_reports == 2000  # the control: this release's own aggregate is estimated
