"""The shared core (``ldpnum/base.py``): the registry's names and aliases, refusing a taken name, rebuilding a
mechanism from its spec."""

import pytest

import ldpnum as ldp
from ldpnum.mechanisms import registered


def test_registry_names_and_aliases():
    from ldpnum.mechanisms import lookup

    reg = registered()
    assert reg["square_wave"] is ldp.SquareWave and reg["grr"] is ldp.GRR
    for name, cls in reg.items():
        assert cls.name == name
        for spelling in (name, cls.__name__, name.upper().replace("_", "-"), *cls.aliases):
            assert lookup(spelling) is cls
    with pytest.raises(ValueError, match="unknown mechanism 'magic'"):
        lookup("magic")
    with pytest.raises(TypeError):
        lookup(3)


def test_registry_refuses_a_taken_name_or_alias():
    from ldpnum import base as _base

    before = dict(_base._REGISTRY), dict(_base._NAMES)
    with pytest.raises(TypeError, match="already taken"):
        type("Impostor", (ldp.Mechanism,), {"name": "square_wave"})
    with pytest.raises(TypeError, match="already names"):
        type("Impostor", (ldp.Mechanism,), {"name": "impostor", "aliases": ("sw",)})
    with pytest.raises(TypeError, match="tuple of strings"):
        type("Impostor", (ldp.Mechanism,), {"name": "impostor", "aliases": "imp"})
    assert (dict(_base._REGISTRY), dict(_base._NAMES)) == before  # nothing half-registered


def test_from_spec_rebuilds_an_equal_mechanism():
    for m in (ldp.GRR(1.0, 4), ldp.SquareWave(2.0, (0, 10)), ldp.Piecewise(1.0, (0, 1), n_cells=16)):
        again = ldp.from_spec(m.spec)
        assert type(again) is type(m) and again.spec == m.spec and again == m
