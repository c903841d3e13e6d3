"""Under CI a skip is a failure (tests/support/ci_skips.py): run on a small suite of its own, one
of each kind of skip, with and without CI."""

from __future__ import annotations

import pytest

from support import ci_skips

pytest_plugins = ["pytester"]

SUITE = {
    "conftest.py": "from support.ci_skips import pytest_make_collect_report, pytest_runtest_makereport\n",
    "test_kinds.py": """
import pytest

def test_passes():
    pass

def test_skips_in_the_body():
    pytest.skip("no engine here")

@pytest.mark.skipif(True, reason="the marker says no")
def test_skipif_marker():
    pass

@pytest.fixture
def engine():
    pytest.skip("the fixture could not start it")

def test_fixture_skips(engine):
    pass

@pytest.mark.xfail(reason="a known bug", strict=True)
def test_expected_failure():
    assert False

def test_listed_as_impossible():
    pytest.skip("the CI machine has no such thing")
""",
    "test_module_skip.py": "import pytest\npytest.importorskip('aesenv_no_such_module')\n\ndef test_never():\n    pass\n",
}


@pytest.fixture
def suite(pytester, monkeypatch):
    pytester.makepyfile(**{name.removesuffix(".py"): text for name, text in SUITE.items()})
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    monkeypatch.setitem(ci_skips.CI_IMPOSSIBLE, "test_kinds.py::test_listed_*", "no such thing on the CI machine")
    return pytester


@pytest.mark.parametrize("value", [None, "", "0", "false", "No"])
def test_outside_ci_skips_stay_skips(suite, monkeypatch, value):
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=5, xfailed=1)


@pytest.mark.parametrize("value", ["1", "true"])
def test_under_ci_every_unlisted_skip_fails_with_its_reason(suite, monkeypatch, value):
    monkeypatch.setenv("CI", value)
    result = suite.runpytest("-p", "no:cacheprovider", "-rfEs")
    # the body's skip and the module's fail; the marker's and the fixture's are errors at set-up;
    # the listed one stays a skip; an xfail is not a skip
    result.assert_outcomes(passed=1, failed=2, errors=2, skipped=1, xfailed=1)
    out = result.stdout.str()
    for reason in ("no engine here", "the marker says no", "the fixture could not start it",
                   "could not import 'aesenv_no_such_module'"):
        assert f"skipped under CI: {reason}" in out, reason
    assert "skipped under CI: the CI machine has no such thing" not in out
    assert "SKIPPED [1] test_kinds.py" in out and "the CI machine has no such thing" in out


def test_the_list_of_impossibilities_says_why_for_each_entry():
    assert all(isinstance(why, str) and len(why) > 20 for why in ci_skips.CI_IMPOSSIBLE.values())
    assert ci_skips.ci_impossible("tests/test_nothing.py::test_x") is None
