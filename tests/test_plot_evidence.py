"""Plot evidence is out of the script's reach: the host draws each figure from its SVG and
describes that drawing, so a script cannot forge its description, blow up the judge or the host,
or turn its own fault into a masked infra_error; and no honest figure is refused (3-D axes,
animations, seaborn, pandas, twin axes, grids, heatmaps, log scales, CJK and Cyrillic labels,
mathtext all draw and describe)."""

from __future__ import annotations

import pytest

from aesenv.kinds.plot.figures import draw_figures
from aesenv.kinds.plot.svg_scene import MAX_IMAGE_PIXELS
from aesenv.rewards import ChannelStatus
from aesenv.sandbox import RunStatus
from aesenv.tasks import load_tasks

TASKS = {t.id: t for t in load_tasks("builtin:plot")}
LINE = TASKS["plot-line-city-temperatures"]
GOOD = """import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(8, 5))
ax.plot([1, 2, 3, 4, 5, 6], [3, 5, 4, 6, 8, 7], marker="o", label="Lisbon")
ax.plot([1, 2, 3, 4, 5, 6], [1, 2, 4, 3, 5, 6], marker="s", label="Oslo")
ax.set_title("Monthly temperatures by city")
ax.set_xlabel("Month")
ax.set_ylabel("Temperature (°C)")
ax.legend()
"""
EMPTY = "import matplotlib.pyplot as plt\nplt.figure(figsize=(8, 5))\n"
# What the old in-sandbox describe hook was: the forgery replaces any `describe` it can find.
HOOK = """import sys
for _module in list(sys.modules.values()):
    if getattr(_module, "describe", None) is not None and "figure" in getattr(_module, "__name__", ""):
        _module.describe = lambda fig, **kw: {description}
"""


def answer(code: str) -> str:
    return f"```python\n{code}\n```"


async def drawn(pipeline, code: str):
    run = await pipeline.sandbox.run_plot(code, {})
    return await draw_figures(run, pipeline.renderer)


async def test_a_replaced_describe_changes_nothing(plot_pipeline):
    good = await drawn(plot_pipeline, GOOD)
    description = good.figures[0].meta
    assert "error" not in description and description["axes"][0]["title"] == "Monthly temperatures by city"
    honest = (await plot_pipeline.score(LINE, answer(EMPTY))).record
    forged = (await plot_pipeline.score(LINE, answer(HOOK.format(description=repr(description)) + EMPTY))).record
    assert forged.channels["static"].raw == honest.channels["static"].raw
    assert forged.channels["static"].status is honest.channels["static"].status
    assert (await plot_pipeline.score(LINE, answer(GOOD))).record.channels["static"].raw > 60


@pytest.mark.parametrize("writer", [
    "lambda self, buf, **kw: (_ for _ in ()).throw(ZeroDivisionError('no'))",
    "lambda self, buf, **kw: buf.write('<svg><g>unclosed')",
    "lambda self, buf, **kw: buf.write('<?xml version=\"1.0\"?><!DOCTYPE svg [<!ENTITY a \"aaaaaaaaaa\">"
    "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" "
    "height=\"10\"><text>&b;</text></svg>')",
    "lambda self, buf, **kw: buf.write('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1e9pt\" height=\"1e9pt\"/>')",
    "lambda self, buf, **kw: buf.write('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\">'"
    " + '<g>' * 200 + '</g>' * 200 + '</svg>')",
], ids=["raises", "unparsable", "entity-bomb", "absurd-size", "too-deep"])
async def test_a_broken_figure_writer_is_the_answers_failure(plot_pipeline, writer):
    code = f"import matplotlib.figure\nmatplotlib.figure.Figure.savefig = {writer}\n" + GOOD
    record = (await plot_pipeline.score(LINE, answer(code))).record
    static = record.channels["static"]
    assert static.status is ChannelStatus.FAILED, static
    assert record.reward is not None
    assert all(c.status is not ChannelStatus.INFRA_ERROR for c in record.channels.values()), record.channels


async def test_a_replaced_savefig_is_the_answers_failure(plot_pipeline):
    code = "import matplotlib.figure\nmatplotlib.figure.Figure.savefig = lambda self, *a, **k: None\n" + GOOD
    record = (await plot_pipeline.score(LINE, answer(code))).record
    assert record.reward is not None
    assert all(c.status is not ChannelStatus.INFRA_ERROR for c in record.channels.values()), record.channels
    assert record.channels["static"].status is ChannelStatus.FAILED


async def test_an_embedded_png_bomb_is_refused_before_decoding(plot_pipeline):
    """An SVG whose image is 420 KB of PNG that would decode to 12000 x 12000 pixels on the host."""
    code = ("import base64, io, matplotlib.figure\nfrom PIL import Image\n"
            "buf = io.BytesIO(); Image.new('1', (12000, 12000)).save(buf, 'PNG')\n"
            "data = base64.b64encode(buf.getvalue()).decode()\n"
            "def bomb(self, out, **kwargs):\n"
            "    out.write('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"300\">'\n"
            "              f'<image href=\"data:image/png;base64,{data}\" width=\"400\" height=\"300\"/></svg>')\n"
            "matplotlib.figure.Figure.savefig = bomb\n" + GOOD)
    run = await drawn(plot_pipeline, code)
    assert run.ok and len(run.figures) == 1
    figure = run.figures[0]
    assert figure.png is None and figure.meta["unusable"] and f"{MAX_IMAGE_PIXELS:,}" in figure.meta["error"]
    record = (await plot_pipeline.score(LINE, answer(code))).record
    assert record.channels["static"].status is ChannelStatus.FAILED


HONEST = {
    "bars": ("import matplotlib.pyplot as plt\nplt.bar(['a', 'b', 'c'], [3, 1, 2], color='tab:green')\n"
             "plt.title('Bars')\n", {"bar"}),
    "scatter": ("import numpy as np, matplotlib.pyplot as plt\nr = np.random.default_rng(1)\n"
                "plt.scatter(r.normal(size=300), r.normal(size=300), s=4, alpha=0.4)\n", {"scatter"}),
    "pie": ("import matplotlib.pyplot as plt\nplt.pie([1, 2, 3], labels=['x', 'y', 'z'], autopct='%1.0f%%')\n",
            {"pie"}),
    "heatmap": ("import numpy as np, seaborn as sns\nsns.heatmap(np.arange(25).reshape(5, 5), annot=True)\n",
                {"heatmap"}),
    "dark": ("import matplotlib.pyplot as plt\nplt.style.use('dark_background')\nplt.plot([1, 3, 2], lw=0.5)\n"
             "plt.xlabel('x'); plt.ylabel('y'); plt.title('Dark')\n", {"line"}),
    "subplots-and-text": ("import matplotlib.pyplot as plt\nfig, axes = plt.subplots(2, 2)\n"
                          "for i, ax in enumerate(axes.flat):\n    ax.hist(range(i + 5)); ax.set_title(f'p{i}')\n"
                          "fig.text(0.5, 0.01, 'note', ha='center')\nfig.suptitle('Grid')\n", {"histogram"}),
    "tiny-dpi": ("import matplotlib.pyplot as plt\nplt.figure(figsize=(2, 1.5), dpi=40)\nplt.plot([0, 1], [1, 0])\n",
                 set()),
    "white-bars-on-white": ("import matplotlib.pyplot as plt\nplt.bar([1, 2], [3, 4], color='white', "
                            "edgecolor='black')\n", {"bar"}),
    "seaborn-lines": ("import seaborn as sns, pandas as pd\n"
                      "df = pd.DataFrame({'x': list(range(10)) * 2, 'y': list(range(10)) + list(range(10, 0, -1)),"
                      " 'g': ['a'] * 10 + ['b'] * 10})\nsns.lineplot(data=df, x='x', y='y', hue='g')\n", {"line"}),
    "mplot3d-surface": ("import numpy as np, matplotlib.pyplot as plt\nfig = plt.figure()\n"
                        "ax = fig.add_subplot(projection='3d')\nX, Y = np.meshgrid(np.linspace(-2, 2, 30), "
                        "np.linspace(-2, 2, 30))\nax.plot_surface(X, Y, np.exp(-X**2 - Y**2), cmap='viridis')\n"
                        "ax.set_title('Gaussian surface'); ax.set_xlabel('x'); ax.set_ylabel('y')\n", {"3d"}),
    "mplot3d-bars-and-scatter": ("import numpy as np, matplotlib.pyplot as plt\nfig = plt.figure(figsize=(8, 4))\n"
                                 "a = fig.add_subplot(1, 2, 1, projection='3d')\n"
                                 "a.bar3d([0, 1, 2], [0, 1, 2], [0, 0, 0], 0.5, 0.5, [1, 3, 2], color='tab:orange')\n"
                                 "b = fig.add_subplot(1, 2, 2, projection='3d')\nr = np.random.default_rng(0)\n"
                                 "b.scatter(r.random(50), r.random(50), r.random(50))\nb.set_title('points')\n",
                                 {"3d"}),
    "funcanimation-blit": ("import numpy as np, matplotlib.pyplot as plt\nfrom matplotlib.animation import "
                           "FuncAnimation\nfig, ax = plt.subplots()\nx = np.linspace(0, 2 * np.pi, 200)\n"
                           "line, = ax.plot(x, np.sin(x))\nax.set_title('A travelling wave')\n"
                           "def update(i):\n    line.set_ydata(np.sin(x + i / 10))\n    return line,\n"
                           "ani = FuncAnimation(fig, update, frames=50, blit=True)\nplt.show()\n", {"line"}),
    "pandas-plot": ("import pandas as pd\ndf = pd.DataFrame({'year': [2020, 2021, 2022, 2023], 'sales': [3, 5, 4, 6],"
                    " 'costs': [2, 3, 3, 4]})\nax = df.plot(x='year', kind='bar', title='Sales and costs')\n"
                    "ax.set_ylabel('k$')\n", {"bar"}),
    "twin-axes-log": ("import numpy as np, matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nx = np.arange(1, 50)\n"
                      "ax.plot(x, x ** 2, color='tab:blue'); ax.set_yscale('log'); ax.set_ylabel('squares (log)')\n"
                      "twin = ax.twinx(); twin.plot(x, np.sqrt(x), color='tab:red'); twin.set_ylabel('roots')\n"
                      "ax.set_xlabel('n'); ax.set_title('Growth')\n", {"line"}),
    "imshow-colorbar": ("import numpy as np, matplotlib.pyplot as plt\nim = plt.imshow(np.outer(np.arange(20), "
                        "np.arange(30)), cmap='magma')\nplt.colorbar(im, label='value')\nplt.title('Field')\n",
                        {"heatmap"}),
    "cjk-cyrillic-mathtext": ("import matplotlib.pyplot as plt\nplt.rcParams['font.family'] = ['DejaVu Sans', "
                              "'Noto Sans CJK JP']\nplt.plot([1, 2, 3], [2, 4, 3])\n"
                              "plt.title('Температура 温度')\n"
                              "plt.xlabel('Время'); plt.ylabel(r'$\\alpha^2 + \\sqrt{x}$')\n", {"line"}),
}


@pytest.mark.parametrize("name", list(HONEST))
async def test_honest_figures_draw_and_describe(plot_pipeline, name):
    """No honest figure is refused: each draws, is described with its texts and marks, and (where
    the chart kind is plain) shows the marks a reader would name it by."""
    from aesenv.kinds.plot.judge import digest

    code, kinds = HONEST[name]
    run = await drawn(plot_pipeline, code)
    assert run.ok, run.reason
    assert run.figures and all(f.png and not f.meta.get("unusable") and "error" not in f.meta for f in run.figures), \
        [f.meta.get("error") for f in run.figures]
    marks = set().union(*(a.marks for a in digest(run.figures).data_axes))
    assert kinds <= marks, (name, marks)
    assert any(a["series"] or a["artists"] for f in run.figures for a in f.meta["axes"]), name


async def test_honest_three_d_and_animation_score_like_any_figure(plot_pipeline):
    """The six real scripts refused before were 3-D axes and FuncAnimations: they score now."""
    for name in ("mplot3d-surface", "funcanimation-blit"):
        record = (await plot_pipeline.score(LINE, answer(HONEST[name][0]))).record
        static = record.channels["static"]
        assert static.status is ChannelStatus.OK, (name, static.payload)
        assert static.raw > 40, (name, static.payload["rationale"])


async def test_cjk_and_mathtext_labels_are_read(plot_pipeline):
    run = await drawn(plot_pipeline, HONEST["cjk-cyrillic-mathtext"][0])
    texts = {t["role"]: t["text"] for t in run.figures[0].meta["texts"] if t["role"] in ("title", "xlabel", "ylabel")}
    assert texts["title"] == "Температура 温度" and texts["xlabel"] == "Время", texts
    assert "α" in texts["ylabel"] and "√" in texts["ylabel"], texts


async def test_our_renderer_failing_is_infra_error(plot_pipeline):
    """A renderer that fails on our side masks the run; it is never the answer's score."""
    from aesenv.render import RenderConfig, Renderer

    run = await plot_pipeline.sandbox.run_plot(GOOD, {})
    broken = Renderer(RenderConfig())

    async def fail(*args, **kwargs):
        raise RuntimeError("browser launch failed")

    broken.start = fail
    drawn_run = await draw_figures(run, broken)
    assert drawn_run.status is RunStatus.INFRA_ERROR, drawn_run.reason
