"""One registry for every model-backed role (`aesenv.models`): every role's backends load, naming a
role loads nothing heavy, a plugin backend reaches the pipeline, and `JudgeSpec` is the one parse
of the judge flags."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from aesenv.models import PAGE_JUDGE, ROLES, JudgeSpec, ModelRole, add_judge_args, model_role

EXPECTED_ROLES = {"page_judge", "plot_judge", "project_judge", "interactor", "webdev_user", "webdev_grader"}


def test_every_role_offers_offline_and_openai_and_each_entry_point_loads():
    assert set(ROLES) == EXPECTED_ROLES
    for name in ROLES:
        role = ROLES[name]
        assert list(role.backends) == ["offline", "openai"], name
        for backend in role.backends:
            assert callable(role.backends[backend]), f"{name}:{backend}"


@pytest.mark.parametrize("role, args", [("page_judge", ()), ("plot_judge", ()), ("project_judge", ()),
                                        ("interactor", (2,)), ("webdev_user", ()), ("webdev_grader", ())])
def test_each_role_builds_its_offline_backend(role, args):
    built = ROLES[role].build("offline", *args)
    assert built.name.startswith("offline"), built.name


def test_kinds_judge_through_their_role():
    from aesenv.kinds import KINDS

    assert {KINDS[kind].scoring.judges.name for kind in ("web", "plot", "project")} == {"page_judge", "plot_judge",
                                                                                  "project_judge"}
    assert type(KINDS["web"].scoring.make_judge("offline")).__name__ == "OfflineDesignJudge"


def test_naming_roles_loads_no_backend():
    code = ("import sys, aesenv.models as m; [list(m.ROLES[r].backends) for r in m.ROLES]; "
            "print(sorted(x for x in sys.modules if x.startswith(('aesenv.kinds.web', 'aesenv.kinds.plot', 'aesenv.kinds.project', 'aesenv.interact', "
            "'aesenv.webdev', 'openai', 'playwright'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_unknown_backend_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown page judge 'gemini:x'; available: \['offline', 'openai'\]"):
        PAGE_JUDGE.build("gemini:x")


def test_a_role_refuses_a_second_backend_under_a_taken_name():
    with pytest.raises(ValueError, match="already registered"):
        PAGE_JUDGE.backends.register("offline")(lambda _argument, **_: None)
    with pytest.raises(ValueError, match="already registered"):
        model_role("page_judge", "page judge", offline="somewhere:else")


def _constant_judge(argument: str, **options):
    from aesenv.judging.base import StaticJudgement

    class Constant:
        name, version = f"constant:{argument}", "1"

        async def judge(self, task, rendering):
            return StaticJudgement(alignment=30, aesthetics=20, structure=10, total=60)

    return Constant()


async def test_a_plugin_backend_reaches_the_pipeline():
    from aesenv.rewards import PipelineConfig, RewardPipeline
    from aesenv.tasks import Task

    for role in ("page_judge", "plot_judge", "project_judge"):  # the pipeline builds every kind's judge
        ROLES[role].backends.register("constant")(_constant_judge)
    page = "<!doctype html><html><body><h1>Hello</h1><p>A page with some words on it.</p></body></html>"
    config = PipelineConfig(judge="constant:a", channels=["static"], reward="normalized")
    async with RewardPipeline(config) as pipeline:
        record = (await pipeline.score(Task(id="t", prompt="a hello page"), page)).record
    static = record.channels["static"]
    assert static.status == "ok", static
    assert static.score == pytest.approx(0.6)  # the rubric total on [0, 1]


def _parsed(*argv: str, default: str | None = "offline") -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_judge_args(parser, default=default)
    return parser.parse_args(list(argv))


def test_judge_spec_from_the_flags():
    spec = JudgeSpec.from_args(_parsed("--judge", "openai:m", "--judge-samples", "3", "--judge-base-url", "http://h/v1"))
    assert spec == JudgeSpec(spec="openai:m", samples=3, base_url="http://h/v1")
    assert spec.options() == {"samples": 3, "base_url": "http://h/v1"}
    assert JudgeSpec.from_args(_parsed()).options() == {}
    assert JudgeSpec.from_args(_parsed()).offline
    assert JudgeSpec(spec="openai:m", base_url="").options() == {}  # an empty URL is no URL


def test_the_training_default_is_the_vlm_judge(monkeypatch):
    from aesenv.models import DEFAULT_VLM_JUDGE, JUDGE_ENV

    monkeypatch.delenv(JUDGE_ENV, raising=False)
    assert _parsed(default=None).judge == DEFAULT_VLM_JUDGE
    monkeypatch.setenv(JUDGE_ENV, "openai:other")
    assert _parsed(default=None).judge == "openai:other"


def test_judge_spec_problems(monkeypatch):
    for variable in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    assert JudgeSpec(spec="offline").problem() is None
    assert "no endpoint" in JudgeSpec(spec="openai:m").problem()
    assert JudgeSpec(spec="openai:m", base_url="http://h/v1").problem() is None
    assert "needs a model" in JudgeSpec(spec="openai").problem()
    assert "unknown plot judge" in JudgeSpec(spec="nope").problem(ROLES["plot_judge"])
    monkeypatch.setenv("OPENAI_BASE_URL", "http://h/v1")
    assert JudgeSpec(spec="openai:m").problem() is None
    with pytest.raises(ValueError):
        JudgeSpec(spec="openai:m", samples=0)


def test_a_model_role_is_a_small_frozen_value():
    assert isinstance(PAGE_JUDGE, ModelRole)
    with pytest.raises(AttributeError):
        PAGE_JUDGE.name = "other"  # type: ignore[misc]
