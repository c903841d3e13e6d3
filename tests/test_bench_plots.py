"""The plots benchmark end to end, at its smallest: every way runs, and the report carries the
arrival and batch views of the local sandbox with measured (not placeholder) numbers."""

from __future__ import annotations

import json

import pytest

from benchmarks import plots


@pytest.mark.slow
def test_the_plots_benchmark_reports_every_view(tmp_path):
    assert plots.main(["--out", str(tmp_path), "--rounds", "1", "--batch", "6", "--no-progress"]) == 0
    report = json.loads((tmp_path / "plots.json").read_text())
    assert report["cold_median_ms"] > report["local_warm_median_ms"] > 0
    assert report["in_process_median_ms"] > 0 and report["local"]["cpu_median_ms"] > 0
    arrivals = report["arrivals_median_ms"]
    assert set(arrivals) == {"0ms", "10ms", "150ms"} and all(ms > 0 for ms in arrivals.values())
    assert report["batch"]["jobs"] == 6 and report["batch"]["plots_per_s"] > 0
    assert report["stages"]["local"]["run"] > 0
