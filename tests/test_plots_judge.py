"""The offline plot judge orders a clean plot above the same plot with one defect.

Figures are built in-process here (the sandbox is not under test) and saved as the worker saves
them (SVG); the host then draws and describes them as in any episode. Each case builds a clean
chart and a copy with one measurable defect, and the judge must score the clean one higher.
"""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from aesenv.kinds.plot.figures import draw_figures  # noqa: E402
from aesenv.kinds.plot.judge import OfflinePlotJudge  # noqa: E402
from aesenv.sandbox.base import Figure, PlotRun, RunStatus  # noqa: E402
from aesenv.tasks import Task  # noqa: E402
from support.plots import draw  # noqa: E402

RNG = np.random.default_rng(7)
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
REGIONS = {r: 100 + np.cumsum(RNG.normal(4, 9, 12)) for r in ("North", "South", "West")}
PRODUCTS = ["Laptops", "Phones", "Tablets", "Monitors", "Printers"]
SALES = np.array([42.0, 55.0, 23.0, 31.0, 12.0])


def line(legend="outside", size=11, labels=True, colors=None, title_y=None, extra_empty=False):
    def build():
        fig, axes = plt.subplots(1, 2 if extra_empty else 1, figsize=(9, 5), constrained_layout=title_y is None,
                                 squeeze=False)
        ax = axes[0][0]
        for i, (region, y) in enumerate(REGIONS.items()):
            ax.plot(MONTHS, y, label=region, linewidth=2, color=colors[i] if colors else None)
        if labels:
            ax.set_title("Monthly revenue by region", fontsize=size + 3, y=title_y or 1.0)
            ax.set_xlabel("Month", fontsize=size)
            ax.set_ylabel("Revenue (k$)", fontsize=size)
        ax.tick_params(labelsize=size)
        if legend == "outside":
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=size)
        elif legend == "center":
            ax.legend(loc="center", fontsize=size + 4, framealpha=1)
    return build


def bars(rotate=True, long_names=False, legend_on_bars=False):
    names = [f"{p} and accessories division" for p in PRODUCTS] if long_names else PRODUCTS

    def build():
        fig, ax = plt.subplots(figsize=(7, 5), constrained_layout=True)
        ax.bar(names, SALES, color="#3b6ea5", label="2024 sales")
        ax.bar(names, SALES * 0.6, color="#e39b3b", label="2023 sales")
        ax.set_title("Sales by product")
        ax.set_xlabel("Product")
        ax.set_ylabel("Units sold (k)")
        ax.legend(loc="lower center" if legend_on_bars else "upper left",
                  bbox_to_anchor=None if legend_on_bars else (1.01, 1))
        if rotate:
            ax.tick_params(axis="x", labelrotation=30 if long_names else 0)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right" if long_names else "center")
    return build


def scatter(alpha=0.8, color="#1f77b4"):
    def build():
        fig, ax = plt.subplots(figsize=(7, 5), constrained_layout=True)
        x = RNG.normal(170, 8, 120)
        ax.scatter(x, x * 0.9 - 90 + RNG.normal(0, 6, 120), alpha=alpha, color=color)
        ax.set_title("Height vs weight")
        ax.set_xlabel("Height (cm)")
        ax.set_ylabel("Weight (kg)")
    return build


def pie(small_font=False):
    def build():
        fig, ax = plt.subplots(figsize=(6, 6), constrained_layout=True)
        ax.pie(SALES, labels=PRODUCTS, autopct="%1.0f%%", textprops={"fontsize": 4 if small_font else 11})
        ax.set_title("Share of units sold by product")
    return build


def panels(layout=True):
    def build():
        fig, axes = plt.subplots(2, 2, figsize=(8, 6), constrained_layout=layout)
        for ax, (region, y) in zip(axes.flat, list(REGIONS.items()) + [("Total", sum(REGIONS.values()))]):
            ax.plot(MONTHS, y)
            ax.set_title(f"{region} revenue", fontsize=13)
            ax.set_xlabel("Month", fontsize=12)
            ax.set_ylabel("Revenue (k$)", fontsize=12)
            ax.tick_params(labelsize=11)
        fig.suptitle("Revenue by region")
    return build


LINE_TASK = Task(id="line", kind="plot", category="Data Visualization",
                 prompt="Line chart of monthly revenue for the North, South and West regions.")
BAR_TASK = Task(id="bar", kind="plot", category="Data Visualization",
                prompt="Bar chart comparing units sold per product in 2023 and 2024.")
SCATTER_TASK = Task(id="scatter", kind="plot", category="Data Visualization",
                    prompt="Scatter plot of height against weight.")
PIE_TASK = Task(id="pie", kind="plot", category="Data Visualization",
                prompt="Pie chart of the share of units sold by product.")
PANEL_TASK = Task(id="panels", kind="plot", category="Data Visualization",
                  prompt="A 2x2 grid of subplots with monthly revenue per region and the total.")

# (name, task, clean drawing, degraded drawing, the metric that must explain the drop)
PAIRS = [
    ("legend over the data", LINE_TASK, line(), line(legend="center"), "legend_overlap"),
    ("tiny fonts", LINE_TASK, line(), line(size=4), "font_size"),
    ("no title or axis labels", LINE_TASK, line(), line(labels=False), "axis_labels"),
    ("indistinguishable series colours", LINE_TASK, line(), line(colors=["#1f77b4", "#1f77b5", "#2077b4"]), "palette"),
    ("series colour on the background", LINE_TASK, line(), line(colors=["#1f77b4", "#fdfdf0", "#d62728"]), "palette"),
    ("title pushed off the figure", LINE_TASK, line(), line(title_y=1.35), "clipping"),
    ("an empty extra panel", LINE_TASK, line(), line(extra_empty=True), "empty_axes"),
    ("colliding long tick labels", BAR_TASK, bars(long_names=True), bars(rotate=False, long_names=True),
     "tick_collisions"),
    ("legend on the bars", BAR_TASK, bars(), bars(legend_on_bars=True), "legend_overlap"),
    ("no legend for two series", BAR_TASK, bars(), None, "legend"),
    ("near-invisible points", SCATTER_TASK, scatter(), scatter(color="#f4f4f4"), "palette"),
    ("tiny pie labels", PIE_TASK, pie(), pie(small_font=True), "font_size"),
    ("panels colliding without layout", PANEL_TASK, panels(), panels(layout=False), "text_overlaps"),
    ("line instead of the requested bars", BAR_TASK, bars(), line(), "chart_kind"),
]


def _no_legend_bars():
    bars()()
    plt.gca().get_legend().remove()


@pytest.mark.parametrize("name,task,clean,degraded,metric", PAIRS, ids=[p[0] for p in PAIRS])
async def test_clean_plot_outscores_its_degraded_copy(renderer, name, task, clean, degraded, metric):
    judge = OfflinePlotJudge()
    good = judge.judge_sync(task, await draw(renderer, clean))
    bad = judge.judge_sync(task, await draw(renderer, degraded or _no_legend_bars))
    assert good.total > bad.total, (name, good.rationale, bad.rationale)
    group = next(g for g in ("alignment", "aesthetics", "structure") if metric in good.evidence[g])
    assert bad.evidence[group][metric]["points"] < good.evidence[group][metric]["points"], bad.evidence[group][metric]


async def test_judge_is_deterministic_and_capped(renderer):
    figures = await draw(renderer, line())
    a = OfflinePlotJudge().judge_sync(LINE_TASK, figures)
    b = OfflinePlotJudge().judge_sync(LINE_TASK, figures)
    assert a == b
    assert a.total <= 85.0 + 1e-6
    assert "proxy" in a.rationale


async def test_nothing_plotted_scores_no_design_points(renderer):
    def build():
        plt.subplots()

    judgement = OfflinePlotJudge().judge_sync(LINE_TASK, await draw(renderer, build))
    assert judgement.aesthetics == 0 and judgement.structure == 0
    assert judgement.evidence["alignment"]["data"]["points"] == 0


def test_missing_description_is_judged_empty_not_crashed():
    broken = Figure(name="figure-1.png", kind="matplotlib", png=None, meta={"error": "describe raised"})
    judgement = OfflinePlotJudge().judge_sync(LINE_TASK, [broken])
    assert judgement.total < 20
    assert "describe raised" in " ".join(judgement.evidence["notes"])


async def test_plotly_figure_is_judged_from_what_plotly_draws():
    """Formerly judged from its JSON with geometry unmeasured: now from plotly.js's own drawing,
    with its geometry measured like a matplotlib figure's."""
    from aesenv.render import RenderConfig, Renderer

    plotly = pytest.importorskip("plotly.graph_objects")
    fig = plotly.Figure([plotly.Bar(x=PRODUCTS, y=SALES, name="2024"), plotly.Bar(x=PRODUCTS, y=SALES * 0.6, name="2023")])
    fig.update_layout(title="Units sold per product", xaxis_title="Product", yaxis_title="Units (k)")
    async with Renderer(RenderConfig()) as renderer:  # default deadlines: plotly.js takes seconds to load
        run = await draw_figures(PlotRun(status=RunStatus.OK, figures=[
            Figure(name="plotly-1.json", kind="plotly", plotly_json=fig.to_json())]), renderer)
    judgement = OfflinePlotJudge().judge_sync(BAR_TASK, run.figures)
    assert judgement.evidence["alignment"]["chart_kind"]["found"] == ["bar"]
    assert judgement.evidence["structure"]["legend_overlap"].get("measured", True) is True
    assert judgement.evidence["aesthetics"]["legend"]["points"] == 3.0, judgement.evidence["aesthetics"]["legend"]
    assert judgement.total > 60, judgement.rationale
