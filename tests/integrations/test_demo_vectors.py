"""`ldpnum demo vectors`: the mean of the normalized digit images under PrivUnitG, and its data."""

import io

import numpy as np

import ldpnum as ldp
from ldpnum.cli import main
from ldpnum.data import load_digits
from ldpnum.demo import demo_vectors


def test_digits_data():
    images, digits = load_digits()
    assert images.shape == (1797, 64) and images.dtype == np.uint8 and images.max() == 16
    assert np.bincount(digits).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    unit, _ = load_digits(normalize=True)
    assert np.allclose(np.linalg.norm(unit, axis=1), 1.0)


def test_demo_estimates_the_mean_image_within_its_expected_error():
    buf = io.StringIO()
    est = demo_vectors(buf, epsilon=4.0, rng=3)
    x, _ = load_digits(normalize=True)
    m = ldp.PrivUnitG(4.0, 64)
    err = float(np.sum((est.mean - x.mean(axis=0)) ** 2))
    # E|err| is the closed form; one collection's error is a sum of 64 squared normals: below 2x with margin
    assert err < 2.0 * m.expected_squared_error(x)
    text = buf.getvalue()
    assert "squared error" in text and "SampledDimensions" in text and "true mean image" in text
    assert est == demo_vectors(io.StringIO(), epsilon=4.0, rng=3)


def test_cli_demo_vectors(capsys):
    assert main(["demo", "vectors", "--epsilon", "2", "--rng", "1"]) == 0
    assert "PrivUnitG(epsilon=2.0" in capsys.readouterr().out
    assert main(["demo", "vectors", "--top-k", "3"]) == 2
