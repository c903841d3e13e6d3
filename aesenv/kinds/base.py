"""`Kind`: everything that differs between artifact kinds, in one registered object.

A kind says what its answer is (an entry file and the initial workspace), how it is asked for
(the single-turn prompt, the system prompt of training and the refine workspace's brief), how
an answer becomes evidence (render the page, or run the script and draw its figures, keeping a
live page open when a channel needs one), which reward channels and judges it offers, its cheap
potential Φ, and what an agent is shown of a result. The pipeline, the single-turn and refine
envs, the runner, veRL's agent loop, `train.data` and the CLI are written once over kinds.

`register_kind(kind)` also registers the kind's Gymnasium ids, `Aes<Title>-v0` (single turn) and
`Aes<Title>Refine-v0` (refine), whose `EnvSpec.kwargs["kind"]` names the kind: a new kind is one
subclass and one call. A kind whose answer is shown as a page subclasses `PageKind`
(`aesenv.kinds.page`), which provides the page's evidence, failure, Φ and pictures.
"""

from __future__ import annotations

import hashlib
from contextlib import AbstractAsyncContextManager
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from aesenv.artifact import Artifact, ArtifactKind, extract_artifact
from aesenv.channels.base import Channel, Evidence
from aesenv.kinds.envs import DEFAULT_ENVS, env_id
from aesenv.models import ModelRole
from aesenv.registry import Registry
from aesenv.tasks import Task

if TYPE_CHECKING:
    from aesenv.render import Renderer
    from aesenv.sandbox.base import Sandbox


@dataclass(frozen=True)
class Backends:
    """The pipeline's tools a kind turns answers into evidence with."""

    renderer: Renderer
    sandbox: Sandbox


@dataclass
class Look:
    """What an agent is shown when it asks to see its work (a refine `render`)."""

    text: str
    images: list[bytes]
    potential: float  # the kind's cheap Φ of this result
    problem: str = ""  # our side failed to look: nothing to show, and the agent may try again
    measures: dict[str, float] = field(default_factory=dict)  # Φ's parts (a project's per-requirement scores)
    sight: str = ""  # a hash of the pixels captured (two looks with one sight showed the same thing)


def no_provenance(channels: dict[str, Any]) -> dict[str, str]:
    """A kind whose channels report no tool version adds nothing to a record's provenance."""
    return {}


@dataclass(frozen=True)
class Asking:
    """How a kind's tasks are put to an agent, as data: one object so a kind's prompts are read in
    one place and `Kind` keeps its hooks few."""

    system_prompt: str = ""  # the single-turn instruction (training prompts, chat policies)
    workspace_brief: str = ""  # what a refine workspace builds, for the refine system prompt
    # Whether a policy is shown the task's reference (`Kind.reference`) with its first prompt: it is
    # what a page is compared with, so the policy must see it; a kind whose reference is the
    # judge's hidden ground truth says no. The caption goes with the image (not with `request`,
    # which text-only paths send without it).
    shows_reference: bool = False
    reference_caption: str = ""
    observation_lengths: Mapping[str, int] = field(default_factory=lambda: {"prompt": 100_000, "category": 64})

    def shows_reference_for(self, task: Task) -> bool:
        """Whether a policy answering `task` is shown its reference (the kind shows references and
        the task has one)."""
        return self.shows_reference and bool(task.reference_image or task.reference_html)


@dataclass(frozen=True)
class Scoring:
    """A kind's scoring slots, as data: which channels and judge score its answers, which channel
    gates the others, and which aggregates its records carry. The pipeline reads these and names
    no kind or channel itself."""

    judges: ModelRole | None = None  # the `aesenv.models` role that judges this kind's evidence
    channel_classes: tuple[type[Channel], ...] = ()
    # The channels a config that names none scores this kind with (`PipelineConfig.channels`);
    # a kind registered by entry point repeats them in its `KindEntry`.
    default_channels: tuple[str, ...] = ()
    # The channel `PipelineConfig.gate_on_execution` puts in front of the others (None: the kind
    # has no execution check to gate on).
    execution_channel: str | None = None
    # Channels every answer of this kind is scored with whatever `PipelineConfig.channels` names
    # (a verifier that is one formula), and the one whose failure closes the gate on the others
    # whatever `gate_on_execution` says.
    fixed_channels: bool = False
    gate_channel: str | None = None
    # The aggregates a record of this kind carries (`RewardRecord.rewards`): reward name -> the
    # aggregator that computes it. `paper` is the kind's published formula (AesCoder's Eq. 1 for
    # pages and plots, WebCoder's R for projects) and `normalized` its [0, 1] form; every kind
    # declares both. `PipelineConfig.reward` selects one of these for the learner.
    rewards: Mapping[str, str] = field(default_factory=lambda: {"paper": "paper", "normalized": "normalized"})
    # What a record's provenance takes from its channel results (a tool version).
    provenance: Callable[[dict[str, Any]], dict[str, str]] = no_provenance

    def make_judge(self, spec: str, **options: Any) -> Any:
        """The judge `spec` names, built from the `judges` role."""
        return self.judges.build(spec, **options)


class EvidenceReader:
    """How a kind's evidence is read, for the record and for an agent: whether the answer got to
    evidence, why it failed, its cheap Φ and what is shown of it. Kept apart from `Kind` because
    these hooks follow the evidence type (a page's, a plot run's), not the kind's identity; a page
    kind uses `PageReader` (`aesenv.kinds.page`)."""

    stage: ClassVar[str] = "render"  # the timing key of turning the answer into evidence
    blank_frame: ClassVar[tuple[int, int] | None] = None  # (h, w) of `render()` with no image; None: the viewport

    def looked(self, evidence: Evidence) -> bool:
        """Must provide: whether the answer got as far as the evidence step (its time is then recorded)."""
        raise NotImplementedError

    def failure(self, evidence: Evidence, infra: bool) -> str:
        """Must provide: why the answer failed as a whole, for the record ('' when it did not, or when we did)."""
        raise NotImplementedError

    def kept(self, evidence: Evidence) -> dict[str, Any]:
        """Optional: what a `Scored` keeps of the evidence beside its record, by `Scored` field (no rendering)."""
        return {"rendering": None}

    def rendering_summary(self, evidence: Evidence) -> dict[str, Any] | None:
        """Optional: the record's `rendering` field (None: the kind renders no page)."""
        return None

    def live_for_potential(self, task: Task) -> bool:
        """Optional: whether Φ reads the open evidence (then a `render` keeps it open while Φ is measured)."""
        return False

    async def potential(self, evidence: Evidence) -> float:
        """Must provide: the cheap Φ of a result."""
        raise NotImplementedError

    def measures(self, evidence: Evidence) -> dict[str, float]:
        """Optional: Φ's parts, for an env that keeps a ledger of them (none)."""
        return {}

    def look_problem(self, evidence: Evidence) -> str:
        """Must provide: our side's failure to produce the evidence of a `render` ('' when there is none)."""
        raise NotImplementedError

    def describe(self, evidence: Evidence, budget_chars: int) -> str:
        """Must provide: the text an agent reads about a result, within about `budget_chars`."""
        raise NotImplementedError

    def images(self, evidence: Evidence) -> list[bytes]:
        """Must provide: the pictures an agent is shown of a result; the first is what `render()` shows."""
        raise NotImplementedError

    def sight(self, evidence: Evidence) -> str:
        """Optional: a hash of what the result was captured as (its pictures): results with one
        sight look the same, whatever their code says."""
        digest = hashlib.sha256()
        for image in self.images(evidence):
            digest.update(hashlib.sha256(image).digest())
        return digest.hexdigest()

    def picture(self, evidence: Evidence) -> bytes | None:
        """Optional: the one picture a report shows of an answer (the first an agent is shown)."""
        shown = self.images(evidence)
        return shown[0] if shown else None


class Kind:
    """Subclass, set the class attributes, provide the hooks marked "must provide", override the
    optional ones that differ, and `register_kind` an instance. A kind holds its identity and
    answer format, how it asks (`asking` and the asking hooks), how it scores (`scoring`) and how
    its evidence is read (`reader`). A kind whose answer is shown as a page starts from `PageKind`,
    which provides them all."""

    # --- identity and answer format -------------------------------------------------------------
    name: ClassVar[str]  # `Task.kind`
    title: ClassVar[str]  # the Gymnasium id stem: Aes<title>-v0
    artifact: ClassVar[ArtifactKind]  # what an answer must hold
    entry: ClassVar[str]  # the workspace file that is the answer
    default_tasks: ClassVar[str | list[Task]]  # the suite an env loads when given none
    envs: ClassVar[dict[str, tuple[str, str]]] = DEFAULT_ENVS  # mode -> (id suffix, env entry point)
    # --- slots ----------------------------------------------------------------------------------
    asking: ClassVar[Asking] = Asking()
    scoring: ClassVar[Scoring] = Scoring()
    reader: ClassVar[EvidenceReader]  # must provide: how this kind's evidence is read

    def __init__(self) -> None:
        self.channels: Registry[type[Channel]] = Registry(f"{self.name} reward channel")
        for channel in self.scoring.channel_classes:
            self.channels.register(channel.name)(channel)

    def env_id(self, mode: str) -> str:
        return env_id(self.title, self.envs[mode][0])

    # --- asking (optional) ----------------------------------------------------------------------
    def request(self, task: Task) -> str:
        """Optional: the single-turn user prompt (also the first user turn of a refine episode)."""
        return task.prompt

    def chat_prompt(self, task: Task) -> list[dict[str, str]]:
        """Optional: the single-turn chat (system prompt, then `request`)."""
        return [{"role": "system", "content": self.asking.system_prompt}, {"role": "user", "content": self.request(task)}]

    def observe(self, task: Task) -> dict[str, str]:
        """Optional: the single-turn env's observation (keys are `asking.observation_lengths`)."""
        return {"prompt": task.prompt, "category": task.category.value}

    def initial_files(self, task: Task) -> dict[str, bytes]:
        """Optional: what a refine workspace starts with (nothing)."""
        return {}

    async def reference(self, backends: Backends, task: Task) -> tuple[bytes | None, str]:
        """Optional, but a kind whose `asking.shows_reference` provides it: the task's reference
        picture and its visible text ((None, "") without one)."""
        return None, ""

    # --- answering ------------------------------------------------------------------------------
    def extract(self, text: str | bytes) -> Artifact:
        """Optional: the artifact in a model answer (a fenced block or a bare document)."""
        return extract_artifact(text)

    def workspace_artifact(self, code: str) -> Artifact:
        """Optional: a workspace's entry file as this kind's artifact (a refine `render` looks at it as written)."""
        return Artifact(kind=self.artifact, code=code, source_bytes=len(code.encode("utf-8", "replace")))

    def answer_files(self, task: Task, files: dict[str, bytes]) -> dict[str, bytes]:
        """Optional: the files an answer is scored with besides its entry (all of them)."""
        return files

    def evidence(self, backends: Backends, task: Task, artifact: Artifact, files: dict[str, bytes], *,
                 live: bool, pictures: bool) -> AbstractAsyncContextManager[Evidence]:
        """Must provide: an async context of the answer's evidence (a rendering, a sandbox run);
        with `live`, what a channel uses stays open until the block ends."""
        raise NotImplementedError
