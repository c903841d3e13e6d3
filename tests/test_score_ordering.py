"""`aesenv score` orders a polished page above each of its degraded variants (end to end)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.degradation import DEGRADATIONS

GOOD = Path(__file__).parent / "data" / "good_page.html"
PROMPT = "A landing page for a coffee roastery with a shop of this week's roasts and a subscription plan"


def score(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "aesenv.cli", "score", str(path), "--prompt", PROMPT,
                          "--category", "Website", "--json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def good_record():
    return score(GOOD)


@pytest.mark.slow
@pytest.mark.parametrize("degradation", sorted(DEGRADATIONS))
def test_cli_orders_good_page_above_degraded(tmp_path, good_record, degradation):
    bad = tmp_path / f"{degradation}.html"
    bad.write_text(DEGRADATIONS[degradation](GOOD.read_text()))
    bad_record = score(bad)
    good_static = good_record["channels"]["static"]["raw"]
    bad_static = bad_record["channels"]["static"]["raw"]
    assert good_static > bad_static, (degradation, good_static, bad_static)
    assert good_record["reward"] > bad_record["reward"]
