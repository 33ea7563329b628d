"""The result modules' shared checks (``ldpnum/_checks.py``): confidence levels and their normal quantiles."""

import math

import numpy as np
import pytest

from ldpnum._checks import check_level, normal_quantile


def test_normal_quantile_is_the_two_sided_critical_value():
    assert normal_quantile(0.95) == pytest.approx(1.959963984540054, rel=1e-12)
    assert normal_quantile(np.float64(0.5)) == pytest.approx(0.6744897501960817, rel=1e-12)
    # two-sided: the interval +-z holds `level` of a standard normal's mass
    for level in (0.5, 0.9, 0.99):
        assert math.erf(normal_quantile(level) / math.sqrt(2)) == pytest.approx(level, rel=1e-12)


@pytest.mark.parametrize("level,err,match", [
    ("0.95", TypeError, "^level must be a real number; got str '0.95'$"),  # a wrong kind was a ValueError; R5
    (True, TypeError, "^level must be a real number; got bool True$"),
    (None, TypeError, "^level must be a real number; got NoneType None$"),
    (0, ValueError, r"^level must be a finite number in \(0, 1\); got 0$"),
    (1.0, ValueError, r"^level must be a finite number in \(0, 1\); got 1.0$"),
    (math.nan, ValueError, r"^level must be a finite number in \(0, 1\); got nan$"),
])
def test_check_level(level, err, match):
    with pytest.raises(err, match=match):
        check_level(level)
    assert check_level(np.float32(0.5)) == 0.5 and type(check_level(1 / 3)) is float
