"""Figures as the sandbox's worker saves them, drawn and described by the host, for tests that
do not put the sandbox itself under test: a drawing function (or a script file) runs in this
process and its figures are saved with the worker's own `save_svg`."""

from __future__ import annotations

import contextlib
import importlib.util
import runpy
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from aesenv.kinds.plot.figures import draw_figures  # noqa: E402
from aesenv.sandbox.base import Figure, PlotRun, RunStatus  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "sandbox_worker", Path(__file__).parents[2] / "aesenv" / "sandbox" / "worker.py")
worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(worker)

DATA = Path(__file__).parents[1] / "data" / "plots"


def saved(build) -> list[Figure]:
    """Run a drawing function, return its figures as the sandbox's worker saves them. The style
    it sets (plt.style.use, sns.set_theme) holds while it is saved and is undone after: rcParams
    are global, and the next test in this process would draw in it."""
    plt.close("all")
    out = []
    with matplotlib.rc_context():
        build()
        for i, num in enumerate(plt.get_fignums(), 1):
            fig = plt.figure(num)
            out.append(Figure(name=f"figure-{i}.png", kind="matplotlib", svg=worker.save_svg(fig), dpi=fig.dpi))
    plt.close("all")
    return out


def script(path: Path):
    """A drawing function that runs a plot script file as `__main__` in a scratch folder (what it
    saves, as model scripts do, lands there), with plt.show doing nothing."""
    def build():
        show, plt.show = plt.show, lambda *args, **kwargs: None
        try:
            with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
                runpy.run_path(str(path.resolve()), run_name="__main__")
        finally:
            plt.show = show
    return build


async def draw(renderer, build) -> list[Figure]:
    """The figures as the host draws and describes them."""
    run = await draw_figures(PlotRun(status=RunStatus.OK, figures=saved(build)), renderer)
    assert run.status is RunStatus.OK, run.reason
    return run.figures
