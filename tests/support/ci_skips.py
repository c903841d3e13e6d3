"""Under CI a skip is a failure: the one mechanism, and the one list of exceptions.

`make test` (and `.ci/run` before it) installs every part the suite tests: the extras, the vendored
mirror, the Docker engine and images, the vLLM venv. On the CI machine a skip can then only mean
that a part went missing or stopped working, and a suite that silently stops testing it must not go
green. With `CI` set (to anything but "", "0", "false" or "no") every skipped test, fixture and
module is reported as a failure that names the skip's reason, unless the test is listed in
`CI_IMPOSSIBLE` with why the CI machine cannot run it. Tests just skip with a reason; no file has a
CI guard of its own. `tests/conftest.py` registers the two hooks.
"""

from __future__ import annotations

import fnmatch
import os

import pytest
from _pytest.reports import CollectReport

CI_IMPOSSIBLE: dict[str, str] = {
    # node-id glob, as pytest prints it (from the repository root) -> why the CI machine cannot run it
}


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def ci_impossible(nodeid: str) -> str | None:
    """Why `nodeid` may skip under CI, or None when its skip is a failure there."""
    return next((why for pattern, why in CI_IMPOSSIBLE.items() if fnmatch.fnmatchcase(nodeid, pattern)), None)


def skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def ci_message(nodeid: str, reason: str) -> str:
    return (f"skipped under CI: {reason}\n{nodeid}: `make test` installs what this needs, so under CI its skip is "
            "a failure; if the CI machine cannot run it, list it with the reason in CI_IMPOSSIBLE "
            "(tests/support/ci_skips.py)")


class SkippedUnderCI(pytest.Item):
    """Stands for a module that skipped at collection under CI and fails with the skip's reason (a
    failed collection would stop the whole session; this way the rest of the suite still runs)."""

    def __init__(self, *, reason: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        pytest.fail(ci_message(self.parent.nodeid, self.reason), pytrace=False)

    def reportinfo(self):
        return self.path, None, f"{self.parent.nodeid}: skipped at collection"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and under_ci() and not ci_impossible(item.nodeid):
        report.outcome = "failed"
        report.longrepr = ci_message(item.nodeid, skip_reason(report))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and isinstance(collector, pytest.Module) and under_ci() and not ci_impossible(collector.nodeid):
        item = SkippedUnderCI.from_parent(collector, name="skipped-under-CI", reason=skip_reason(report))
        outcome.force_result(CollectReport(collector.nodeid, "passed", None, [item]))
