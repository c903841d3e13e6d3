"""Plot evidence is untrusted: a script cannot forge its figure description, blow up the judge or
the host, or turn its own fault into a masked infra_error."""

from __future__ import annotations


import pytest

from aesenv.plots.evidence import MAX_PIXELS, screen
from aesenv.rewards import ChannelStatus
from aesenv.sandbox import Figure
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
FORGE = "import sys\nsys.modules['aesenv_figure_meta'].describe = lambda fig: {description}\n"


def answer(code: str) -> str:
    return f"```python\n{code}\n```"


async def _good_description(plot_pipeline) -> dict:
    run = await plot_pipeline.sandbox.run_plot(GOOD, {})
    assert run.ok and "error" not in run.figures[0].meta
    return run.figures[0].meta


async def test_an_empty_figure_with_a_copied_description_scores_as_empty(plot_pipeline):
    description = await _good_description(plot_pipeline)
    honest_empty = (await plot_pipeline.score(LINE, answer("import matplotlib.pyplot as plt\nplt.figure(figsize=(8, 5))\n"))).record
    forged = (await plot_pipeline.score(LINE, answer(
        FORGE.format(description=repr(description)) + "import matplotlib.pyplot as plt\n"
        "plt.figure(figsize=(8, 5))\n"))).record
    good = (await plot_pipeline.score(LINE, answer(GOOD))).record
    static = forged.channels["static"]
    assert static.status is ChannelStatus.FAILED, static
    assert "does not match its pixels" in static.payload["reason"]
    assert static.raw <= honest_empty.channels["static"].raw + 1e-6
    assert good.channels["static"].raw > 50


@pytest.mark.parametrize("hook", [
    "lambda fig: 1 / 0",
    "lambda fig: {'axes': 'not a list', 'texts': 5, 'width_px': 800, 'height_px': 500}",
    "lambda fig: {'width_px': float('nan'), 'height_px': 500}",
    "lambda fig: {'width_px': 800, 'height_px': 500, 'texts': [{'text': 'x', 'bbox': [0, 0, 1, 1]}] * 6000}",
], ids=["raises", "wrong-types", "nan", "6000-texts"])
async def test_a_broken_describe_hook_is_the_answers_failure(plot_pipeline, hook):
    code = (f"import sys\nsys.modules['aesenv_figure_meta'].describe = {hook}\n" + GOOD)
    record = (await plot_pipeline.score(LINE, answer(code))).record
    static = record.channels["static"]
    assert static.status is ChannelStatus.FAILED, static
    assert static.status is not ChannelStatus.INFRA_ERROR and record.reward is not None


async def test_a_replaced_savefig_is_the_answers_failure(plot_pipeline):
    code = "import matplotlib.figure\nmatplotlib.figure.Figure.savefig = lambda self, *a, **k: None\n" + GOOD
    record = (await plot_pipeline.score(LINE, answer(code))).record
    assert record.reward is not None
    assert all(c.status is not ChannelStatus.INFRA_ERROR for c in record.channels.values()), record.channels
    assert record.channels["static"].status is ChannelStatus.FAILED


async def test_a_png_bomb_is_refused_before_decoding(plot_pipeline):
    """420 KB of PNG that would decode to 12000 x 12000 pixels in the host process."""
    code = ("import matplotlib.figure\nfrom PIL import Image\n"
            "def bomb(self, buf, **kwargs):\n    Image.new('1', (12000, 12000)).save(buf, 'PNG')\n"
            "matplotlib.figure.Figure.savefig = bomb\n" + GOOD)
    run = await plot_pipeline.sandbox.run_plot(code, {})
    assert run.ok and len(run.figures) == 1
    figure = run.figures[0]
    assert figure.png is None and figure.meta["unusable"] and f"{MAX_PIXELS:,}" in figure.meta["error"]
    record = (await plot_pipeline.score(LINE, answer(code))).record
    assert record.channels["static"].status is ChannelStatus.FAILED


HONEST = {
    "bars": "import matplotlib.pyplot as plt\nplt.bar(['a', 'b', 'c'], [3, 1, 2], color='tab:green')\nplt.title('Bars')\n",
    "scatter": "import numpy as np, matplotlib.pyplot as plt\nr = np.random.default_rng(1)\n"
               "plt.scatter(r.normal(size=300), r.normal(size=300), s=4, alpha=0.4)\n",
    "pie": "import matplotlib.pyplot as plt\nplt.pie([1, 2, 3], labels=['x', 'y', 'z'], autopct='%1.0f%%')\n",
    "heatmap": "import numpy as np, seaborn as sns\nsns.heatmap(np.arange(25).reshape(5, 5), annot=True)\n",
    "dark": "import matplotlib.pyplot as plt\nplt.style.use('dark_background')\nplt.plot([1, 3, 2], lw=0.5)\n"
            "plt.xlabel('x'); plt.ylabel('y'); plt.title('Dark')\n",
    "subplots-and-text": "import matplotlib.pyplot as plt\nfig, axes = plt.subplots(2, 2)\n"
                         "for i, ax in enumerate(axes.flat):\n    ax.hist(range(i + 5)); ax.set_title(f'p{i}')\n"
                         "fig.text(0.5, 0.01, 'note', ha='center')\nfig.suptitle('Grid')\n",
    "tiny-dpi": "import matplotlib.pyplot as plt\nplt.figure(figsize=(2, 1.5), dpi=40)\nplt.plot([0, 1], [1, 0])\n",
    "white-bars-on-white": "import matplotlib.pyplot as plt\nplt.bar([1, 2], [3, 4], color='white', edgecolor='black')\n",
    "seaborn-lines": "import seaborn as sns, pandas as pd\n"
                     "df = pd.DataFrame({'x': list(range(10)) * 2, 'y': list(range(10)) + list(range(10, 0, -1)),"
                     " 'g': ['a'] * 10 + ['b'] * 10})\nsns.lineplot(data=df, x='x', y='y', hue='g')\n",
}


@pytest.mark.parametrize("name", list(HONEST))
async def test_honest_figures_pass_the_pixel_check(plot_pipeline, name):
    run = await plot_pipeline.sandbox.run_plot(HONEST[name], {})
    assert run.ok, run.reason
    assert run.figures and all(not f.meta.get("unusable") and "error" not in f.meta for f in run.figures), \
        [f.meta.get("error") for f in run.figures]


def test_screen_refuses_a_header_that_promises_too_many_pixels():
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (12000).to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00"
    screened = screen(Figure(name="figure-1.png", kind="matplotlib", png=png, meta={"width_px": 1, "height_px": 1}))
    assert screened.png is None and "12000x12000" in screened.meta["error"]


def test_screen_refuses_bytes_that_are_not_a_png():
    screened = screen(Figure(name="figure-1.png", kind="matplotlib", png=b"GIF89a....", meta={}))
    assert screened.png is None and "not a PNG" in screened.meta["error"]
