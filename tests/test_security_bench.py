"""`aesenv bench security`: every probe is ok on both backends and the browser, and the probes do
see a leak where there is one (an unisolated local sandbox)."""

from __future__ import annotations

import json

import pytest

from aesenv.sandbox import make_sandbox
from benchmarks import security


async def test_probes_see_the_leaks_of_an_unisolated_sandbox():
    host = security.Host()
    try:
        async with make_sandbox("local", workers=1, isolate=False) as sb:
            verdicts = {name: (await security.SANDBOX_PROBES[name](sb, host))[1]
                        for name in ("host-files", "write-outside")}
    finally:
        host.close()
    assert verdicts == {"host-files": "leak", "write-outside": "leak"}


def test_a_probe_name_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        security.probe(security.SANDBOX_PROBES, "host-files")(lambda sb, host: None)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", "docker"])
def test_security_bench_reports_no_failing_probe(tmp_path, backend):
    """The sandbox probes on each backend; the browser's once, with the local one."""
    from test_sandbox import docker_unavailable

    if backend == "docker" and (problem := docker_unavailable()):
        pytest.skip(f"docker sandbox unavailable: {problem}")
    only = [] if backend == "local" else ["--only", ",".join(security.SANDBOX_PROBES)]
    code = security.main(["--out", str(tmp_path), "--backends", backend, *only])
    report = json.loads((tmp_path / "security.json").read_text())
    bad = [o for o in report["outcomes"] if o["verdict"] != "ok"]
    assert code == 0 and not bad, bad
    expected = {(name, backend) for name in security.SANDBOX_PROBES}
    if backend == "local":
        expected |= {(name, "browser") for name in security.BROWSER_PROBES}
    assert {(o["probe"], o["backend"]) for o in report["outcomes"]} == expected
    assert report["probes"] == len(expected)
