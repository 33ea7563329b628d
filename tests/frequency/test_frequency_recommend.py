"""`ldpnum.frequency.recommend` recommends only an oracle that can be built with (k, ε), and never divides by
zero at tiny ε."""

import math

import pytest

import ldpnum as ldp
from ldpnum.frequency import recommend


def test_recommendation_can_be_built():
    # The rule picks GRR while k < 3e^ε + 2: at ε = 12 that is k up to ~4.9e5, beyond GRR's k <= 65536
    rec = recommend(100_000, 12.0)
    assert rec.name == "OUE" and rec.mechanism(k=100_000, epsilon=12.0).k == 100_000
    assert recommend(4, 1.0).name == "GRR" and recommend(1024, 1.0).name == "OUE"
    assert recommend(1024, 1.0, communication="low").name == "OLH"


def test_tiny_epsilon_falls_back_then_refuses_clearly():
    # ZeroDivisionError from e^ε - 1 = 0 below ε ≈ 1.1e-16; at 1e-15 OUE (the rule's choice) cannot be built
    rec = recommend(10, 1e-15)
    assert rec.name == "OLH" and math.isfinite(rec.variance)
    rec.mechanism(k=10, epsilon=1e-15)
    assert recommend(10, 1e-10).variance == pytest.approx(4 / math.expm1(1e-10) ** 2, rel=1e-9)
    for eps in (1e-16, 1e-17, 1e-300):
        with pytest.raises(ValueError, match=f"no frequency oracle can be built for k=10 at epsilon={eps!r}"):
            recommend(10, eps)


def test_recommend_follows_the_seed_rule():
    ee = math.e
    assert recommend(4, 1.0).name == "GRR"  # 4 < 3e + 2 = 10.15
    assert recommend(10, 1.0).name == "GRR"
    assert recommend(11, 1.0).name == "OUE"
    assert recommend(11, 1.0, communication="low").name == "OLH"
    assert recommend(4, 1.0).variance == pytest.approx((4 - 2 + ee) / (ee - 1) ** 2)
    assert recommend(1024, 1.0).variance == pytest.approx(4 * ee / (ee - 1) ** 2)
    assert recommend(4, 1.0).mechanism is ldp.GRR
    with pytest.raises(ValueError):
        recommend(4, 1.0, communication="high")
