"""`aesenv bench deadlines`: where the suite's old timing asserts went. Its arithmetic on hand-made
numbers (fast), and one quick run whose report has every section with the statuses the deadlines
must give (slow); the ratios themselves are the benchmark's to report, never a test's to judge."""

from __future__ import annotations

import json

import pytest

from benchmarks import deadlines


def test_ratio_summary_divides_by_the_deadline():
    assert deadlines.ratio_summary([1.5, 3.0, 1.8], 1.5) == {"deadline_s": 1.5, "n": 3, "median_ratio": 1.2,
                                                          "min_ratio": 1.0, "max_ratio": 2.0}
    assert deadlines.ratio_summary([], 2.0) == {"deadline_s": 2.0, "n": 0, "median_ratio": None, "min_ratio": None,
                                                "max_ratio": None}


def test_cost_ratios_are_medians_over_the_reference_median():
    ms = {"clean": [100.0, 300.0, 200.0], "empty": [10.0, 30.0], "none": []}
    assert deadlines.cost_ratios(ms, "clean") == {"clean": 1.0, "empty": 0.1, "none": None}
    assert deadlines.cost_ratios({"clean": [], "x": [1.0]}, "clean") == {"clean": None, "x": None}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_quick_run_reports_every_section(tmp_path, capsys):
    assert deadlines.main(["--out", str(tmp_path), "--rounds", "1"]) == 0
    report = json.loads((tmp_path / "deadlines.json").read_text())
    sandbox = report["sandbox"]
    assert {name.split("@")[0] for name in sandbox} <= {"local", "docker"} and "local@1.0s" in sandbox
    assert all(row["statuses"] == ["timeout"] and row["n"] == 1 for row in sandbox.values())
    assert set(report["render"]) == set(deadlines.HOSTILE_PAGES)
    assert all(set(row["statuses"]) <= {"timeout", "crashed", "ok"} for row in report["render"].values())
    assert report["webgl_frame"]["statuses"] == ["timeout"]
    assert set(report["bad_answers"]["ratio_to_clean"]) == {"clean", *deadlines.BAD_ANSWERS}
    assert report["bad_answers"]["ratio_to_clean"]["clean"] == 1.0
    assert "elapsed/deadline" in capsys.readouterr().out
