"""An animation is judged at a frame it draws, as a viewer sees it play, not at the empty state it
starts from: the sandbox plays every animation left on an open figure (its first draw, then its
frames in order, at most FRAMES_PER_ANIMATION) before saving the figure. The frame functions are
the answer's code: one that raises or hangs is the answer's failure, reported with its line, and
bounded in time.

The scripts in tests/data/plots/animations are written as models write them: a line growing over
frames with blitting and an init_func that clears it, a scatter moving, a bar race redrawing its
axes each frame, frames from a generator function, an ArtistAnimation, and faulty ones (a frame
that raises, one that never returns, an animation nobody keeps, one on a closed figure).
"""

from __future__ import annotations

import pytest
import pytest_asyncio

from aesenv.kinds.plot.figures import draw_figures
from aesenv.kinds.plot.judge import OfflinePlotJudge
from aesenv.sandbox import RunStatus, SandboxLimits, make_sandbox
from aesenv.tasks import Task
from support.plots import DATA, worker

SCRIPTS = DATA / "animations"
LIMITS = SandboxLimits(timeout_s=30, cpu_s=30)
TASK = Task(id="animation", kind="plot", category="Data Visualization", prompt="Animate the chart over time.")
FRAMES = worker.FRAMES_PER_ANIMATION


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def sandbox():
    sb = make_sandbox("local", workers=1)
    await sb.start()
    yield sb
    await sb.close()


async def played(sandbox, renderer, name: str):
    run = await sandbox.run_plot((SCRIPTS / name).read_text(), {}, LIMITS)
    assert run.status is RunStatus.OK, (run.reason, run.traceback)
    assert "run.frames" in run.timings_ms
    run = await draw_figures(run, renderer)
    assert run.status is RunStatus.OK, run.reason
    return run.figures


def lines(meta: dict) -> list[dict]:
    return [s for a in meta["axes"] for s in a["series"] if s["kind"] == "line"]


async def test_a_growing_line_is_judged_at_its_last_frame_drawn(sandbox, renderer):
    """blit=True and an init_func that empties the line: before, the figure was saved empty (no
    frame drawn) and scored 0. Now frames 0..FRAMES-1 are drawn: the line holds FRAMES points."""
    (figure,) = await played(sandbox, renderer, "line_grow.py")
    (line,) = lines(figure.meta)
    assert line["n"] == FRAMES, line
    judgement = OfflinePlotJudge().judge_sync(TASK, [figure])
    assert judgement.evidence["presence"] == 1.0 and judgement.total > 60, judgement.rationale


async def test_an_init_func_that_clears_a_drawn_line_is_followed_by_frames(sandbox, renderer):
    """The line is drawn whole by the script, cleared by init_func, and regrown frame by frame."""
    (figure,) = await played(sandbox, renderer, "init_clears.py")
    grown = max(lines(figure.meta), key=lambda s: s["n"])
    assert FRAMES - 2 <= grown["n"] < 300, grown  # update(i) draws t[:i]: frame FRAMES-1 shows FRAMES-1 points


async def test_a_moving_scatter_is_drawn(sandbox, renderer):
    (figure,) = await played(sandbox, renderer, "scatter_update.py")
    (ax,) = figure.meta["axes"]
    assert ax["artists"].get("PathCollection") == 1 and len(ax["data_points"]) == 50, ax["artists"]


async def test_a_bar_race_shows_its_last_year(sandbox, renderer):
    """frames is a list of 21 years (repeat=False), each frame clears the axes and redraws them:
    all 21 are drawn, so the figure shows 2020."""
    (figure,) = await played(sandbox, renderer, "bar_race.py")
    (ax,) = figure.meta["axes"]
    assert ax["title"] == "GDP index by country, 2020" and ax["artists"].get("Rectangle") == 6, ax


async def test_frames_from_a_generator_function_are_bounded(sandbox, renderer):
    """frames=phases, an endless generator: FRAMES frames are drawn, then the figure is saved."""
    run = await sandbox.run_plot((SCRIPTS / "generator_frames.py").read_text(), {}, LIMITS)
    assert run.status is RunStatus.OK and run.timings_ms["run.frames"] < worker.FRAMES_BUDGET_S * 1000 + 500
    (figure,) = (await draw_figures(run, renderer)).figures
    (line,) = lines(figure.meta)
    assert line["n"] >= 20, line  # the wave (matplotlib simplifies its 200 points), drawn by the frames only


async def test_an_artist_animation_shows_one_frame_not_all(sandbox, renderer):
    """An ArtistAnimation's frames are lists of artists all added to the axes: unplayed, all 20
    sine curves show at once; played, only the last frame's does."""
    (figure,) = await played(sandbox, renderer, "artist_anim.py")
    assert len(lines(figure.meta)) == 1, lines(figure.meta)


async def test_a_frame_that_raises_is_the_answers_error(sandbox):
    run = await sandbox.run_plot((SCRIPTS / "throws_on_frame3.py").read_text(), {}, LIMITS)
    assert run.status is RunStatus.ERROR
    assert run.reason.startswith("IndexError: list index out of range") and "frame 3" in run.reason, run.reason
    assert run.error_line == 13 and 'File "main.py", line 13, in update' in run.traceback, run.traceback
    assert "worker.py" not in run.traceback and "play_animations" not in run.traceback
    assert run.figures, "the figures are still saved, at the frame that failed"


async def test_a_frame_that_never_returns_is_bounded_and_the_answers_error(sandbox):
    run = await sandbox.run_plot((SCRIPTS / "hang.py").read_text(), {}, LIMITS)
    assert run.status is RunStatus.ERROR, (run.status, run.reason)
    assert run.reason.startswith("FrameHung") and "frame 2" in run.reason, run.reason
    assert worker.FRAME_HANG_S * 1000 <= run.timings_ms["run.frames"] < (worker.FRAME_HANG_S + 3) * 1000
    assert run.error_line is not None and 'File "main.py"' in run.traceback, run.traceback


@pytest.mark.parametrize("name", ["unreferenced.py", "closed.py"])
async def test_animations_that_never_play_are_not_played(sandbox, name):
    """An animation nobody keeps is collected before it plays (matplotlib warns); one whose figure
    was closed has nothing to draw on. Their frame functions raise if called: they must not be."""
    run = await sandbox.run_plot((SCRIPTS / name).read_text(), {}, LIMITS)
    assert run.status is RunStatus.OK, (run.reason, run.traceback)
    assert len(run.figures) == 1
