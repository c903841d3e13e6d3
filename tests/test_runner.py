import json
import re

from aesenv.rewards import PipelineConfig
from aesenv.runner import run_and_report
from aesenv.tasks import load_tasks
from policies import TemplatePolicy, make_policy


class CountingPolicy(TemplatePolicy):
    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, task):
        self.calls += 1
        return await super().generate(task)


async def test_demo_run_writes_summary_report_and_resumes(tmp_path):
    tasks = load_tasks("builtin:web")[::10]
    policy = CountingPolicy()
    summary = await run_and_report(tasks, policy, tmp_path, config=PipelineConfig(), progress=False)
    assert policy.calls == len(tasks) == summary["n_total"]
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["n_total"] == len(tasks) and on_disk["n_infra_error"] == 0
    assert set(on_disk["per_category"]) == {t.category.value for t in tasks}
    assert 0 < on_disk["static_total_mean"] <= 100
    report = (tmp_path / "report.html").read_text()
    assert report.count("data:image/jpeg;base64,") == len(tasks)
    assert not re.search(r"""(src|href)=["']https?://""", report)  # self-contained
    again = await run_and_report(tasks, policy, tmp_path, progress=False)
    assert policy.calls == len(tasks)  # finished items are skipped on a rerun
    assert again["n_total"] == len(tasks)


async def test_a_failing_policy_is_a_failure_record_not_a_crash(tmp_path):
    class Broken:
        name = "broken"

        async def generate(self, task):
            raise ConnectionError("endpoint down")

    tasks = load_tasks("builtin:web")[:2]
    summary = await run_and_report(tasks, Broken(), tmp_path, progress=False)
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert summary["n_total"] == 2 and summary["n_infra_error"] == 2 and summary["n"] == 0
    assert all("endpoint down" in r["failure"] and r["reward"] is None for r in records)
    assert make_policy("template").name == "template"
