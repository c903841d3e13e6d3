"""3-D axes are read as 2-D axes are: their title, the label of each of x, y and z, their tick
labels and their legend, from where the texts are drawn (tick labels in a slanted row along an
axis, its label beyond the row across from its middle), and the judge wants each axis labelled.

The scripts in tests/data/plots/3d are written as models write them (surfaces with colorbars,
scatters with and without a legend, bar3d with category ticks and label padding, panes switched
off, mixed 2-D and 3-D subplots, seaborn and dark styles, points labelled in the panel) and run in this process; the plotly ones
(WebGL scenes) are drawn by plotly.js in the browser.
"""

from __future__ import annotations

import numpy as np
import pytest

import matplotlib.pyplot as plt
from aesenv.kinds.plot.judge import OfflinePlotJudge
from aesenv.tasks import Task
from support.plots import DATA, draw, script

SCRIPTS = DATA / "3d"
TASK = Task(id="3d", kind="plot", category="Data Visualization", prompt="Make a 3D plot of the data.")

# script: per 3-D axes (title, x label, y label, z label, legend entries); mixed.py also has a 2-D axes
EXPECTED = {
    "surface.py": [("Damped Ripple Surface", "X position (m)", "Y position (m)", "Height (m)", None)],
    "scatter_legend.py": [("3D Scatter of Three Clusters", "Feature 1", "Feature 2", "Feature 3",
                           ["Cluster A", "Cluster B", "Cluster C"])],
    "bar3d.py": [("Monthly Sales by Region", "Month", "Region", "Sales (k units)", None)],
    "bar3d_legend.py": [("Units sold per product and year", "Year", "Product", "Units sold",
                         ["Widgets", "Gadgets", "Doohickeys"])],
    "mixed.py": [("Helix trajectory", "X", "Y", "Z", ["Helix", "Samples"])],
    "panes_off.py": [("Customer Age, Income and Spending", "Age (years)", "Income (k$)", "Spending (k$)", None)],
    "wire_subplots.py": [("Saddle: z = x² − y²", "x", "y", "z", None), ("Gaussian bump", "x", "y", "z", None)],
    "lines_legend_style.py": [("Spiral trajectories", "X", "Y", "Time", ["Frequency 1", "Frequency 2", "Frequency 3"])],
    "dark_trisurf.py": [("Terrain from scattered samples", "Easting (km)", "Northing (km)", "Elevation (km)", None)],
    "labelled_points.py": [("Sensor positions", "x (m)", "y (m)", "z (m)", None)],  # 60 point labels in the panel
}
# In the narrow 3-D subplots of mixed.py and wire_subplots.py matplotlib's x tick labels ("−1.00"
# ... "1.00", "−2.0−1.5−1.0") run into each other (seen in the pictures): true collisions. The
# others have none.
CROWDED = {"mixed.py", "wire_subplots.py"}


def solid_axes(meta: dict) -> list[dict]:
    return [a for a in meta["axes"] if a["name"] == "3d"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_a_3d_axes_reads_its_title_labels_and_legend(renderer, name):
    (figure,) = await draw(renderer, script(SCRIPTS / name))
    axes = solid_axes(figure.meta)
    assert len(axes) == len(EXPECTED[name]), [(a["name"], a["title"]) for a in figure.meta["axes"]]
    for ax, (title, x, y, z, legend) in zip(axes, EXPECTED[name]):
        assert (ax["title"], ax["xlabel"], ax["ylabel"], ax["zlabel"]) == (title, x, y, z), ax
        assert (ax["legend"] or {}).get("entries") == legend
        ticks = {t["role"] for t in figure.meta["texts"] if t["axes"] == ax["index"]}
        assert {"xtick", "ytick", "ztick"} <= ticks, ticks
    judgement = OfflinePlotJudge().judge_sync(TASK, [figure])
    assert judgement.evidence["aesthetics"]["axis_labels"]["points"] == 8.0, judgement.evidence["aesthetics"]
    assert judgement.evidence["alignment"]["title"]["points"] == 6.0
    collisions = judgement.evidence["structure"]["tick_collisions"]
    assert (collisions["points"] < 7.0) == (name in CROWDED), collisions


async def test_a_2d_axes_beside_a_3d_one_is_read_as_before(renderer):
    (figure,) = await draw(renderer, script(SCRIPTS / "mixed.py"))
    flat = [a for a in figure.meta["axes"] if a["name"] == "rectilinear"]
    assert [(a["title"], a["xlabel"], a["ylabel"], a["zlabel"]) for a in flat] == [
        ("Components over time", "t (s)", "Value", "")]
    assert flat[0]["legend"]["entries"] == ["x(t)", "y(t)"]
    assert figure.meta["suptitle"] == "Helix analysis"


async def test_an_unlabelled_3d_axes_loses_its_label_points(renderer):
    """Each of x, y and z wants a label, as both axes of a 2-D chart do (before, a 3-D axes was
    not cartesian, and asked for none)."""
    judge = OfflinePlotJudge()
    labelled = judge.judge_sync(TASK, await draw(renderer, script(SCRIPTS / "surface.py")))
    bare = judge.judge_sync(TASK, await draw(renderer, script(SCRIPTS / "surface_no_labels.py")))
    assert labelled.evidence["aesthetics"]["axis_labels"]["points"] == 8.0
    assert bare.evidence["aesthetics"]["axis_labels"]["points"] == 0.0, bare.evidence["aesthetics"]["axis_labels"]
    assert bare.evidence["aesthetics"]["axis_labels"]["missing"] == ["3-D axes 0 x", "3-D axes 0 y", "3-D axes 0 z"]
    assert labelled.total > bare.total


async def test_crowded_3d_tick_labels_collide(renderer):
    """The tick collision check follows a 3-D axis's slant: long labels crammed along it collide,
    where the same axis with a few short labels does not."""
    def crowded():
        X, Y = np.meshgrid(np.linspace(-3, 3, 30), np.linspace(-3, 3, 30))
        ax = plt.figure(figsize=(8, 6)).add_subplot(projection="3d")
        ax.plot_surface(X, Y, np.cos(X) * np.sin(Y), cmap="viridis")
        ticks = np.linspace(-3, 3, 16)
        ax.set_xticks(ticks, [f"{t:.3f} m" for t in ticks])
        ax.set_title("Crowded ticks")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_zlabel("z")

    judgement = OfflinePlotJudge().judge_sync(TASK, await draw(renderer, crowded))
    collisions = judgement.evidence["structure"]["tick_collisions"]
    assert collisions["points"] < 7.0 and "3-D axes" in collisions["note"], collisions


async def test_a_3d_axes_with_its_axis_lines_only_is_still_3d(renderer):
    """Panes and grid switched off and transparent: the slanted axis lines still make it 3-D (a
    3-D axes read as a flat one takes its z label for a y label)."""
    def bare_panes():
        ax = plt.figure(figsize=(8, 6)).add_subplot(projection="3d")
        t = np.linspace(0, 6, 200)
        ax.plot(np.cos(t), np.sin(t), t, color="tab:red")
        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
            axis.set_pane_color((1, 1, 1, 0))
            axis.pane.set_edgecolor((1, 1, 1, 0))
        ax.grid(False)
        ax.set_title("Helix")
        ax.set_xlabel("east")
        ax.set_ylabel("north")
        ax.set_zlabel("height")

    (figure,) = await draw(renderer, bare_panes)
    (ax,) = figure.meta["axes"]
    assert (ax["name"], ax["xlabel"], ax["ylabel"], ax["zlabel"]) == ("3d", "east", "north", "height"), ax


@pytest.mark.parametrize("name,kind", [("plotly_scatter3d.py", "scatter_3d"), ("plotly_surface.py", "surface")])
async def test_a_plotly_3d_scene_is_drawn_and_read(name, kind):
    """plotly draws a 3-D scene with WebGL, outside its SVG: it used to be missing from the
    drawing, so the figure showed nothing and scored 6.8 at most. The scene now comes in as the
    picture plotly.js's own export makes of it: a 3-D panel with data, under the figure's title."""
    from aesenv.kinds.plot.figures import draw_figures
    from aesenv.render import RenderConfig, Renderer
    from aesenv.sandbox.base import Figure, PlotRun, RunStatus

    figures = pytest.importorskip("plotly.basedatatypes")
    shown = []
    show, figures.BaseFigure.show = figures.BaseFigure.show, lambda fig, *args, **kwargs: shown.append(fig)
    try:
        script(SCRIPTS / name)()
    finally:
        figures.BaseFigure.show = show
    (fig,) = shown
    async with Renderer(RenderConfig()) as renderer:  # default deadlines: plotly.js takes seconds to load
        run = await draw_figures(PlotRun(status=RunStatus.OK, figures=[
            Figure(name="plotly-1.json", kind="plotly", plotly_json=fig.to_json())]), renderer)
    (figure,) = run.figures
    assert not figure.meta.get("unusable"), figure.meta
    (ax,) = [a for a in figure.meta["axes"] if a["name"] == "3d"]
    assert ax["artists"] == {"AxesImage": 1}, ax
    judgement = OfflinePlotJudge().judge_sync(TASK, run.figures)
    assert judgement.evidence["presence"] == 1.0
    assert judgement.evidence["alignment"]["title"]["points"] == 6.0, judgement.evidence["alignment"]["title"]
    assert "3d" in judgement.evidence["alignment"]["chart_kind"]["found"]
    assert judgement.total > 60, judgement.rationale
