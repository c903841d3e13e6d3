"""The counterfactual variants `checkout_ab --after-variant` prices: `floor` does the one capture
issue 47 prescribes and nothing else, `off` does nothing; both credit nothing, and the real
measure is back once the variant's block ends."""

from __future__ import annotations

import gc

import pytest

from aesenv.render import counterfactual as cf
from benchmarks.checkout_ab import main as checkout_ab
from benchmarks.counterfactual_floor import VARIANTS, install, variant

PAGE = """<!doctype html><html><body style="margin:0;font:18px sans-serif">
<h1>Harbour bakery</h1><p>Sourdough loaf six dollars, rye on Fridays.</p>
<img alt="" width="80" height="40" src="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='80' height='40'%3E%3Crect width='80' height='40' fill='%23c03'/%3E%3C/svg%3E">
</body></html>"""


@pytest.fixture
def captures(monkeypatch):
    """How many counterfactual captures the render under test took."""
    taken = []
    real = cf.capture

    async def counted(*args, **kwargs):
        taken.append(args[1])
        return await real(*args, **kwargs)

    monkeypatch.setattr(cf, "capture", counted)
    return taken


async def test_the_floor_captures_once_and_credits_nothing_then_the_measure_is_back(renderer, captures):
    with variant("floor"):
        floor = await renderer.render(PAGE)
    assert len(captures) == 1, captures  # one group of text and pictures, one band
    assert floor.metrics.visible_text == "" and floor.metrics.headings == []
    assert any("floor variant" in note for note in floor.notes), floor.notes
    captures.clear()
    real = await renderer.render(PAGE)
    assert "Sourdough loaf six dollars" in real.metrics.visible_text
    assert captures, "the real measure takes captures of its own"


async def test_off_measures_nothing(renderer, captures):
    with variant("off"):
        off = await renderer.render(PAGE)
    assert captures == []
    assert off.metrics.visible_text == ""
    assert any("off variant" in note for note in off.notes), off.notes


async def test_install_keeps_the_variant_for_the_process_as_a_worker_needs(renderer, captures, monkeypatch):
    monkeypatch.setattr(cf, "_measure_frozen", cf._measure_frozen)  # (put back after the test)
    install("off")
    gc.collect()  # (a dropped context manager's generator would be closed here and undo it)
    off = await renderer.render(PAGE)
    assert captures == [] and off.metrics.visible_text == "", off.metrics.visible_text


def test_an_unknown_variant_is_refused_by_name_and_by_the_command_line(capsys):
    with pytest.raises(ValueError, match="floor, off"):
        with variant("fast"):
            pass
    with pytest.raises(SystemExit):
        checkout_ab(["--before", ".", "--after-variant", "fast"])
    assert "invalid choice" in capsys.readouterr().err
    assert VARIANTS == ("floor", "off")
