"""`Kind`: everything that differs between artifact kinds, in one registered object.

A kind says what its answer is (an entry file and the initial workspace), how it is asked for
(the single-turn prompt, the system prompt of training and the refine workspace's brief), how
an answer becomes evidence (render the page, or run the script and draw its figures, keeping a
live page open when a channel needs one), which reward channels and judges it offers, its cheap
potential Φ, and what an agent is shown of a result. The pipeline, the single-turn and refine
envs, the runner, veRL's agent loop, `train.data` and the CLI are written once over kinds.

`register_kind(kind)` also registers the kind's Gymnasium ids, `Aes<Title>-v0` (single turn) and
`Aes<Title>Refine-v0` (refine), whose `EnvSpec.kwargs["kind"]` names the kind: a new kind is one
subclass and one call.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aesenv.artifact import Artifact, ArtifactKind, extract_artifact
from aesenv.channels.base import Channel, Evidence
from aesenv.kinds.page import PageEvidence
from aesenv.models import ModelRole
from aesenv.render.describe import describe_rendering, structural_score
from aesenv.render.references import decode_reference
from aesenv.registry import Registry
from aesenv.render import Renderer, RenderStatus
from aesenv.sandbox.base import Sandbox
from aesenv.tasks import Task
from aesenv.render.references import ReferenceRenderings

from aesenv.kinds.envs import DEFAULT_ENVS, env_id


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


class Kind:
    """Subclass, set the class attributes, override the hooks that differ, and `register_kind` an
    instance. The defaults fit a kind whose answer is one HTML document rendered as a page."""

    name: ClassVar[str]  # `Task.kind`
    title: ClassVar[str]  # the Gymnasium id stem: Aes<title>-v0
    artifact: ClassVar[ArtifactKind] = ArtifactKind.HTML  # what an answer must hold
    entry: ClassVar[str] = "index.html"  # the workspace file that is the answer
    page: ClassVar[str] = "index.html"  # the name the answer's page is served under when rendered
    default_tasks: ClassVar[str | list[Task]]  # the suite an env loads when given none
    stage: ClassVar[str] = "render"  # the timing key of turning the answer into evidence
    system_prompt: ClassVar[str]  # the single-turn instruction (training prompts, chat policies)
    workspace_brief: ClassVar[str]  # what a refine workspace builds, for the refine system prompt
    observation_lengths: ClassVar[dict[str, int]] = {"prompt": 100_000, "category": 64}
    blank_frame: ClassVar[tuple[int, int] | None] = None  # (h, w) of `render()` with no image; None: the viewport
    channel_classes: ClassVar[tuple[type[Channel], ...]] = ()
    # Channels every answer of this kind is scored with whatever `PipelineConfig.channels` names
    # (a verifier that is one formula), and the one whose failure closes the gate on the others
    # whatever `gate_on_execution` says.
    fixed_channels: ClassVar[bool] = False
    gate_channel: ClassVar[str | None] = None
    # The channel `PipelineConfig.gate_on_execution` puts in front of the others (None: the kind
    # has no execution check to gate on).
    execution_channel: ClassVar[str | None] = None
    # The channels a config that names none scores this kind with (`PipelineConfig.channels`);
    # a kind registered by entry point repeats them in its `KindEntry`.
    default_channels: ClassVar[tuple[str, ...]] = ()
    # The aggregates a record of this kind carries (`RewardRecord.rewards`): reward name -> the
    # aggregator that computes it. `paper` is the kind's published formula (AesCoder's Eq. 1 for
    # pages and plots, WebCoder's R for projects) and `normalized` its [0, 1] form; every kind
    # declares both. `PipelineConfig.reward` selects one of these for the learner.
    rewards: ClassVar[dict[str, str]] = {"paper": "paper", "normalized": "normalized"}
    judges: ClassVar[ModelRole]  # the `aesenv.models` role that judges this kind's evidence
    envs: ClassVar[dict[str, tuple[str, str]]] = DEFAULT_ENVS  # mode -> (id suffix, env entry point)
    # Whether a policy is shown the task's reference (`reference`) with its first prompt: it is
    # what a page is compared with, so the policy must see it; a kind whose reference is the
    # judge's hidden ground truth says no. The caption goes with the image (not with `request`,
    # which text-only paths send without it).
    shows_reference: ClassVar[bool] = True
    reference_caption: ClassVar[str] = "The attached image is the reference design: match its layout and look."
    # A reference page as its whole page (the long screenshot, up to the renderer's cap) rather
    # than its first screen: what a kind that scores whole pages compares with and shows.
    whole_page_reference: ClassVar[bool] = False

    def __init__(self) -> None:
        self.channels: Registry[type[Channel]] = Registry(f"{self.name} reward channel")
        for channel in self.channel_classes:
            self.channels.register(channel.name)(channel)

    def shows_reference_for(self, task: Task) -> bool:
        """Whether a policy answering `task` is shown its reference (the kind shows references and
        the task has one)."""
        return self.shows_reference and bool(task.reference_image or task.reference_html)

    def env_id(self, mode: str) -> str:
        return env_id(self.title, self.envs[mode][0])

    # --- asking -------------------------------------------------------------------------------
    def request(self, task: Task) -> str:
        """The single-turn user prompt (also the first user turn of a refine episode)."""
        return task.prompt

    def chat_prompt(self, task: Task) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": self.request(task)}]

    def observe(self, task: Task) -> dict[str, str]:
        """The single-turn env's observation (keys are `observation_lengths`)."""
        return {"prompt": task.prompt, "category": task.category.value}

    def initial_files(self, task: Task) -> dict[str, bytes]:
        """What a refine workspace starts with."""
        return {}

    async def reference(self, backends: Backends, task: Task) -> tuple[bytes | None, str]:
        """The task's reference picture and its visible text: `reference_image` as given, else the
        first screen of `reference_html` at the task's canvas (its whole page when the kind sets
        `whole_page_reference`). The page is rendered once per renderer, in the cache the reference
        channels score against, so the policy sees the very pixels it is compared with. (None, "")
        without a reference or when it did not render."""
        if task.reference_image:
            return decode_reference(task.reference_image), ""
        if not task.reference_html:
            return None, ""
        references = ReferenceRenderings.of(backends.renderer)
        await references.prepare(task, backends.renderer)
        rendering = references.get(task)
        if rendering is None or rendering.status is not RenderStatus.OK or not rendering.viewport_png:
            return None, ""
        png = rendering.full_page_png if self.whole_page_reference else rendering.viewport_png
        return png, rendering.metrics.visible_text

    # --- answering ----------------------------------------------------------------------------
    def make_judge(self, spec: str, **options: Any) -> Any:
        return self.judges.build(spec, **options)

    def extract(self, text: str | bytes) -> Artifact:
        """The artifact in a model answer."""
        return extract_artifact(text)

    def workspace_artifact(self, code: str) -> Artifact:
        """A workspace's entry file as this kind's artifact (a refine `render` looks at it as written)."""
        return Artifact(kind=self.artifact, code=code, source_bytes=len(code.encode("utf-8", "replace")))

    def as_page(self, code: str) -> str:
        """The HTML document that shows an artifact (a page is its own)."""
        return code

    def answer_files(self, task: Task, files: dict[str, bytes]) -> dict[str, bytes]:
        """The files an answer is scored with besides its entry."""
        return files

    @contextlib.asynccontextmanager
    async def evidence(self, backends: Backends, task: Task, artifact: Artifact, files: dict[str, bytes], *,
                       live: bool, pictures: bool) -> AsyncIterator[PageEvidence]:
        """The answer rendered as a page (at the task's canvas size when it has one); with `live`,
        the page stays open until the block ends. `pictures` is for kinds whose evidence is not
        always drawn (plotly figures)."""
        if artifact.kind is not self.artifact:
            yield PageEvidence(task, artifact)
            return
        viewport = (task.canvas.width, task.canvas.height) if task.canvas else None
        html = self.as_page(artifact.code)
        if live:
            async with backends.renderer.session(html, files=files, entry=self.page, viewport=viewport) as (rendering, page):
                yield PageEvidence(task, artifact, rendering, page)
        else:
            yield PageEvidence(task, artifact, await backends.renderer.render(html, files=files, entry=self.page,
                                                                       viewport=viewport))

    def kept(self, evidence: PageEvidence) -> dict[str, Any]:
        """What a `Scored` keeps of the evidence beside its record, by `Scored` field: a page's
        rendering (images stay in memory, not in the record's JSON)."""
        return {"rendering": evidence.rendering}

    def rendering_summary(self, evidence: Evidence) -> dict[str, Any] | None:
        """The record's `rendering` field: the page's rendering summary (None when nothing rendered)."""
        rendering = getattr(evidence, "rendering", None)
        return rendering.summary() if rendering is not None else None

    def provenance(self, channels: dict[str, Any]) -> dict[str, str]:
        """What a record's provenance takes from its channel results (a tool version); none by default."""
        return {}

    def looked(self, evidence: PageEvidence) -> bool:
        """Whether the answer got as far as the evidence step (its time is then recorded)."""
        return evidence.rendering is not None

    def failure(self, evidence: PageEvidence, infra: bool) -> str:
        """Why the answer failed as a whole, for the record ('' when it did not, or when we did)."""
        artifact, rendering = evidence.artifact, evidence.rendering
        if artifact.kind is not self.artifact:
            return f"{artifact.kind.value}: {artifact.reason}"
        if rendering is not None and rendering.error and not infra:
            return rendering.error
        return ""

    # --- showing ------------------------------------------------------------------------------
    def live_for_potential(self, task: Task) -> bool:
        """Whether Φ reads the open page (then a `render` keeps it open while Φ is measured)."""
        return False

    async def potential(self, evidence: PageEvidence) -> float:
        """The cheap Φ of a result: a page's structural score (`aesenv.render.describe`)."""
        return structural_score(evidence.rendering)

    def measures(self, evidence: Evidence) -> dict[str, float]:
        """Φ's parts, for an env that keeps a ledger of them (none by default)."""
        return {}

    def look_problem(self, evidence: PageEvidence) -> str:
        """Our side's failure to produce the evidence of a `render` ('' when there is none)."""
        rendering = evidence.rendering
        if rendering.status is RenderStatus.INFRA_ERROR:
            return f"the renderer failed on our side ({rendering.error}); try again"
        return ""

    def describe(self, evidence: PageEvidence, budget_chars: int) -> str:
        """The text an agent reads about a result, within about `budget_chars`."""
        return describe_rendering(evidence.rendering)

    def images(self, evidence: PageEvidence) -> list[bytes]:
        """The pictures an agent is shown of a result (a page's first screen); the first is what
        `render()` shows."""
        png = evidence.rendering.viewport_png if evidence.rendering else None
        return [png] if png else []

    def sight(self, evidence: PageEvidence) -> str:
        """A hash of every pixel the result was captured with (a page's full capture, a plot's
        figures): results with one sight look the same, whatever their code says."""
        digest = hashlib.sha256()
        pixels = evidence.rendering.pixels if getattr(evidence, "rendering", None) is not None else None
        if pixels is not None:
            digest.update(repr(pixels.shape).encode())
            digest.update(pixels.tobytes())
        else:
            for image in self.images(evidence):
                digest.update(hashlib.sha256(image).digest())
        return digest.hexdigest()

    def picture(self, evidence: PageEvidence) -> bytes | None:
        """The one picture a report shows of an answer: a page's full-page screenshot, else the
        first picture an agent is shown."""
        if evidence.rendering is not None:
            return evidence.rendering.full_page_png
        shown = self.images(evidence)
        return shown[0] if shown else None
