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


class _Seeing:
    """A chat policy that records the pictures each request carries."""

    name = "seeing"

    def __init__(self) -> None:
        self.pictures: list[bytes] = []

    async def generate(self, task):
        return "<html><body>text only</body></html>"

    async def act(self, messages, tools=None):
        import base64

        for part in messages[-1]["content"]:
            if part["type"] == "image_url":
                self.pictures.append(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
        return {"content": "<html><body>seen</body></html>"}


async def test_single_turn_requests_carry_the_reference_locally_and_from_a_served_env():
    """The runner asks with the reference picture beside the request: from our backends, from the
    first prompt of an env served elsewhere (the server renders it), or a given picture as is."""
    import base64
    from types import SimpleNamespace

    from aesenv.llm.client import image_part
    from aesenv.runner import answer_with_reference
    from aesenv.tasks import Task

    given, served = b"\x89PNG given", b"\x89PNG served"
    picture_task = Task(id="p", prompt="A poster.", reference_image=base64.b64encode(given).decode())
    page_task = Task(id="h", prompt="A poster.", reference_html="<h1>Sale</h1>")

    policy = _Seeing()
    assert await answer_with_reference(picture_task, policy, SimpleNamespace(backends=object())) == \
        "<html><body>seen</body></html>"
    assert policy.pictures == [given]

    class ServedEnv:
        closed = False

        async def reset(self, task):
            return None, {"messages": [{"role": "system", "content": "sys"},
                                       {"role": "user", "content": [{"type": "text", "text": "A poster."},
                                                                    image_part(served)]}]}

        async def close(self):
            ServedEnv.closed = True

    remote = SimpleNamespace(remote_env=lambda task, mode="single": ServedEnv())
    assert await answer_with_reference(page_task, policy, remote) == "<html><body>seen</body></html>"
    assert policy.pictures == [given, served] and ServedEnv.closed
    await answer_with_reference(picture_task, policy, SimpleNamespace())  # a Ray pool: no backends, no server
    assert policy.pictures == [given, served, given]
    assert await answer_with_reference(page_task, policy, SimpleNamespace()) == "<html><body>text only</body></html>"
