"""README.md is the landing page: its example runs and its figures are true; its links lead to the guides.

The guides (docs/guides/*.md) hold the text the README used to hold; the README keeps the two commands, what
ldpnum does, one short example, a table of links and the headline benchmark figures.
"""

import contextlib
import io
import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"\]\(((?!https?:|#)[^)\s]+)\)")


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_links_lead_to_files_and_every_guide_is_linked():
    targets = LINK.findall(README)
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"
    guides = {f"docs/guides/{p.name}" for p in (ROOT / "docs" / "guides").glob("*.md")}
    assert len(guides) >= 15
    assert guides - set(targets) == set(), "guides the README's table does not link"


def test_guides_hold_their_own_text():
    # the guides once included the README's sections; now they are the text, so the README can stay short
    for guide in sorted((ROOT / "docs" / "guides").glob("*.md")):
        text = guide.read_text(encoding="utf-8")
        assert "README.md\n" not in text and "{include}" not in text, guide.name
        assert len(text.splitlines()) > 10, f"{guide.name} is nearly empty"


def expected_half_width(mech, x):
    return 1.96 * np.sqrt((np.mean(mech.variance(x)) + np.var(x)) / len(x))


def test_readme_example_is_short_and_its_figures_are_true():
    (block,) = python_blocks(README)
    assert len(block.splitlines()) <= 10
    from ldpnum.demo import flights_frame

    import ldpnum as ldp

    x = flights_frame()["dep_time"].to_numpy(dtype=float)
    assert f"{len(x):,}" in block
    truth = {"mean": x.mean(), "q": np.quantile(x, [0.25, 0.5, 0.75]), "share": np.mean((x >= 360) & (x < 540))}
    mean, half = (float(v) for v in re.search(r"±(\d+\.\d) around the true mean, (\d+\.\d)", block).groups()[::-1])
    assert mean == round(truth["mean"], 1)
    quartiles = [int(q) for q in re.search(r"true quartiles: (\d+), (\d+), (\d+)", block).groups()]
    assert quartiles == [round(q) for q in truth["q"]]
    assert float(re.search(r"true (0\.\d+)", block).group(1)) == round(truth["share"], 3)
    # the interval's half-width: 1.96 · SE, the SE from the per-report estimates' sample variance, whose
    # expectation is the reports' mean closed-form variance plus the values' own variance
    sw = ldp.SquareWave(epsilon=1.0, bounds=(0, 1440))
    assert half == round(expected_half_width(sw, x), 1)


def test_readme_example_runs():
    (block,) = python_blocks(README)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    interval, quartiles, share = out.getvalue().splitlines()
    assert interval.startswith("ConfidenceInterval(low=")
    low, high = (float(v) for v in re.findall(r"=([\d.]+)", interval))
    # measured over 8 seeded collections: 5.086–5.100, a relative standard deviation of 0.07%
    assert (high - low) / 2 == pytest.approx(5.094, rel=0.01)
    assert len(eval(quartiles)) == 3 and 0 < float(share) < 1
