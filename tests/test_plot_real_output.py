"""What real model-written plotting scripts did to the sandbox, replayed as regression tests.

Three findings from replaying 160 scripts through the default pipeline: an error raised while a
figure is drawn (a mathtext label is only parsed then) reached the model as an empty or unrelated
message; scripts with ~75-150 MB of arrays were killed at the memory limit, mostly by the
sandbox's own figure description; scripts importing scipy failed because the sandbox lacked it.
The sandbox tests run on both backends (Docker skips without an engine or an up-to-date image,
except under CI, where it fails, as in test_sandbox).
"""

from __future__ import annotations

import importlib.metadata
import re

import numpy as np
import pytest
import pytest_asyncio

from aesenv.sandbox import RunStatus, SandboxLimits, make_sandbox

LIMITS = SandboxLimits(timeout_s=60, cpu_s=60)  # the default memory limit: what the pipeline runs with


@pytest_asyncio.fixture(scope="module", loop_scope="session", params=["local", "docker"])
async def sandbox(request):
    if request.param == "docker":
        from aesenv.sandbox.docker import engine_problem

        if problem := engine_problem():
            pytest.skip(f"docker sandbox unavailable: {problem}")
    sb = make_sandbox(request.param, workers=1)
    await sb.start()
    yield sb
    await sb.close()


def no_worker_internals(run) -> None:
    """The model is shown the traceback and stderr: none of our own frames belong there."""
    for text in (run.traceback, run.stderr, run.reason):
        assert "worker.py" not in text and "run_script" not in text and "child_plot" not in text, text


# ---------------------------------------------------------------- 1. the user's real exception


MATHTEXT = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3])\n"


@pytest.mark.parametrize(("label", "message"), [
    (r"$\alpha_{1$", "Expected end_group"),
    (r"$\foo{x}$", r"Unknown symbol: \foo"),
])
async def test_mathtext_error_at_the_final_save_is_reported(sandbox, label, message):
    """The label is only parsed when the sandbox saves the figure after the script: the model
    must read matplotlib's own message (which starts with a newline), and that it happened there."""
    run = await sandbox.run_plot(MATHTEXT + f"ax.set_xlabel({label!r})\nplt.show()\n", {}, LIMITS)
    assert run.status is RunStatus.ERROR
    assert run.reason.startswith("ValueError: ") and message in run.reason, run.reason
    assert "saving figure 1" in run.reason and "SystemError" not in run.reason
    assert run.error_line is None  # nothing of the script was running
    assert "ParseFatalException" in run.traceback or "ParseSyntaxException" in run.traceback
    no_worker_internals(run)


async def test_mathtext_error_in_the_scripts_own_savefig_names_its_line(sandbox):
    run = await sandbox.run_plot(MATHTEXT + "ax.set_title(r'$\\foo{x}$')\nfig.tight_layout()\nfig.savefig('out.png')\n",
                                 {}, LIMITS)
    assert run.status is RunStatus.ERROR
    assert run.reason.startswith("ValueError: ") and r"Unknown symbol: \foo" in run.reason, run.reason
    assert run.error_line == 5
    assert 'File "main.py", line 5' in run.traceback
    no_worker_internals(run)


async def test_exception_while_saving_a_figure_names_the_users_line(sandbox):
    code = (
        "import matplotlib.pyplot as plt\n"
        "from matplotlib.artist import Artist\n"
        "class Badge(Artist):\n"
        "    def draw(self, renderer):\n"
        "        raise ZeroDivisionError('badge has no size')\n"
        "fig, ax = plt.subplots()\n"
        "ax.add_artist(Badge())\n"
    )
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert run.status is RunStatus.ERROR
    assert run.reason.startswith("ZeroDivisionError: badge has no size") and "saving figure 1" in run.reason
    assert run.error_line == 5 and 'File "main.py", line 5, in draw' in run.traceback
    no_worker_internals(run)


async def test_output_while_saving_is_kept(sandbox):
    code = (
        "import matplotlib.pyplot as plt\n"
        "from matplotlib.artist import Artist\n"
        "class Note(Artist):\n"
        "    def draw(self, renderer):\n"
        "        print('drawn at', int(renderer.dpi))\n"
        "fig, ax = plt.subplots(dpi=80)\n"
        "ax.add_artist(Note())\n"
    )
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert run.status is RunStatus.OK, run.reason
    assert "drawn at 80" in run.stdout


async def test_exception_in_a_plotly_figures_json(sandbox):
    code = (
        "import plotly.graph_objects as go\n"
        "fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 1]))\n"
        "def broken(*args, **kwargs):\n"
        "    raise TypeError('cannot encode column')\n"
        "fig.to_json = broken\n"
        "fig.show()\n"
    )
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert run.status is RunStatus.ERROR
    assert run.reason.startswith("TypeError: cannot encode column") and "plotly figure 1" in run.reason
    assert run.error_line == 4
    no_worker_internals(run)


@pytest.mark.parametrize(("code", "status", "reason", "line"), [
    ("x = 1\nraise KeyboardInterrupt\n", RunStatus.ERROR, "KeyboardInterrupt", 2),
    ("import sys\nsys.exit(0)\n", RunStatus.OK, "", None),
    ("import sys\nsys.exit()\n", RunStatus.OK, "", None),
    ("import sys\nsys.exit(1)\n", RunStatus.ERROR, "exited with code 1", 2),
    ("import sys\n\nsys.exit('no data.csv found')\n", RunStatus.ERROR, "exited with code 1: no data.csv found", 3),
    ("class Odd(Exception):\n    def __str__(self):\n        raise RuntimeError('no text')\nraise Odd()\n",
     RunStatus.ERROR, "Odd: <exception str() failed>", 4),
    ("class Odd(Exception):\n    def __str__(self):\n        return 42\nraise Odd()\n",
     RunStatus.ERROR, "Odd: <exception str() failed>", 4),
])
async def test_exit_and_interrupt_paths(sandbox, code, status, reason, line):
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert run.status is status, run.reason + run.stderr
    assert run.reason == reason
    assert run.error_line == line
    no_worker_internals(run)


async def test_exit_with_a_message_prints_it_as_python_does(sandbox):
    run = await sandbox.run_plot("import sys\nsys.exit('no data.csv found')\n", {}, LIMITS)
    assert run.stderr == "no data.csv found\n"


async def test_usetex_without_latex_is_not_a_permission_error(sandbox):
    """matplotlib's tex cache lived in the worker's (read-only) cache directory: the model was told
    about a PermissionError on a host path instead of the missing LaTeX."""
    code = ("import matplotlib.pyplot as plt\nplt.rcParams['text.usetex'] = True\nfig, ax = plt.subplots()\n"
            "ax.plot([1, 2, 3])\nax.set_title(r'$\\alpha$')\nfig.savefig('a.png')\n")
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert "PermissionError" not in run.reason and "tex.cache" not in run.reason, run.reason
    assert run.status is RunStatus.OK or "latex" in run.reason.lower(), run.reason


def test_exception_text_keeps_a_multi_line_message():
    from aesenv.sandbox.worker import exception_text

    error = ValueError("\n\\alpha_{1\n         ^\nParseSyntaxException: Expected end_group  (at char 9)")
    assert exception_text(error) == r"ValueError: \alpha_{1; ParseSyntaxException: Expected end_group (at char 9)"
    assert exception_text(KeyboardInterrupt()) == "KeyboardInterrupt"
    assert exception_text(ValueError("bad data")) == "ValueError: bad data"


# ---------------------------------------------------------------- 2. memory


N_75MB = 75 * 2**20 // 16  # x and y of this many float64 points: 75 MB


async def test_dense_line_with_75_mb_of_data_fits(sandbox):
    """A noisy line of 4.9 M points: the figure description densified every segment to 4 px steps
    (hundreds of millions of points, GBs) before keeping 400 of them; the job paid for it."""
    code = ("import numpy as np, matplotlib.pyplot as plt\n"
            f"x = np.arange({N_75MB}, dtype=float)\ny = np.sin(x)\n"
            "fig, ax = plt.subplots()\nax.plot(x, y)\nax.set_title('signal')\n")
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert run.status is RunStatus.OK, run.reason + run.stderr
    assert len(run.figures) == 1 and "error" not in run.figures[0].meta, run.figures[0].meta


async def test_image_of_150_mb_fits_the_default_limit(sandbox):
    """matplotlib itself needs ~1.3 GB to draw a 150 MB array with imshow: the old 1 GB limit
    killed it."""
    code = ("import numpy as np, matplotlib.pyplot as plt\n"
            f"a = np.random.default_rng(0).random(({2 * N_75MB // 1500}, 3000))\n"
            "fig, ax = plt.subplots()\nim = ax.imshow(a, cmap='viridis')\nfig.colorbar(im)\n")
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert run.status is RunStatus.OK, run.reason + run.stderr
    assert len(run.figures) == 1


@pytest.mark.parametrize("code", [
    "blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 1024 * 1024))\n",
    "import numpy as np\na = np.ones(6 * 2**30 // 8)\n",
    "import numpy as np\na = np.ones(16 * 2**30 // 8)\n",
])
async def test_runaway_allocation_is_killed_at_the_default_limit(sandbox, code):
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert run.status is RunStatus.KILLED, run.reason + run.stderr
    assert "memory limit" in run.reason


def test_default_limit_leaves_room_for_big_arrays():
    assert SandboxLimits().memory_mb >= 3072  # pcolormesh of a 150 MB grid: 1.84 GB in matplotlib alone


def test_docker_container_holds_a_job_at_its_limit_and_the_worker():
    from aesenv.sandbox.docker import DockerSandbox

    limits = SandboxLimits(memory_mb=3000)
    sandbox = DockerSandbox(limits=limits, scratch_mb=1024)
    assert sandbox.memory_mb >= 3000 + 1024 + 256
    assert DockerSandbox(memory_mb=5000).memory_mb == 5000


def densify_then_cap(paths: list[np.ndarray], limit: int) -> np.ndarray:
    """What the figure description computed before: every inserted point of every path, then
    `limit` of them (the reference the lean version must match exactly)."""
    from aesenv.kinds.plot.drawn import STEP_PX, cap

    dense = []
    for pts in paths:
        if len(pts) < 2:
            dense.append(pts)
            continue
        seg = np.diff(pts, axis=0)
        n = np.minimum(np.maximum(1, np.ceil(np.hypot(seg[:, 0], seg[:, 1]) / STEP_PX).astype(int)), 2000)
        steps = np.concatenate([np.arange(k) / k for k in n])[:, None]
        dense.append(np.concatenate([pts[:-1].repeat(n, axis=0) + seg.repeat(n, axis=0) * steps, pts[-1:]]))
    return cap(np.concatenate(dense), limit)


def test_sampling_along_a_line_matches_densify_then_cap():
    """The lean sampling gives exactly the points the judge saw before, for paths of any shape."""
    from aesenv.kinds.plot import drawn as fm

    rng = np.random.default_rng(3)
    shapes = [np.zeros((0, 2)), rng.random((1, 2)), rng.random((2, 2)) * 5, rng.random((50, 2)) * 900,
              np.cumsum(rng.normal(size=(5000, 2)), axis=0), rng.random((20_000, 2)) * [500, 400],
              np.array([[0.0, 0.0], [1e6, 0.0], [1e6, 3.0]])]
    for pts in shapes:
        assert np.array_equal(fm.densify_capped([pts], fm.MAX_POINTS_PER_ARTIST),
                              densify_then_cap([pts], fm.MAX_POINTS_PER_ARTIST))
    paths = [rng.random((k, 2)) * 300 for k in (1, 7, 300, 2)]
    for limit in (1, 5, 100, 10_000):
        assert np.array_equal(fm.densify_capped(paths, limit), densify_then_cap(paths, limit))


async def test_a_dense_line_is_saved_as_pixels_and_still_scores(plot_pipeline):
    """A million-point line would make a vector file of tens of MB: the worker saves such an
    artist as an image inside the SVG, and the figure draws, describes and scores as a chart."""
    from aesenv.kinds.plot.figures import draw_figures
    from aesenv.tasks import load_tasks

    code = ("import numpy as np, matplotlib.pyplot as plt\nx = np.arange(1_000_000, dtype=float)\n"
            "fig, ax = plt.subplots()\nax.plot(x, np.sin(x / 5000) + np.random.default_rng(0).normal(0, .1, x.size))\n"
            "ax.set_title('Noisy signal'); ax.set_xlabel('sample'); ax.set_ylabel('value')\n")
    run = await plot_pipeline.sandbox.run_plot(code, {}, LIMITS)
    assert run.status is RunStatus.OK, run.reason + run.stderr
    assert len(run.figures[0].svg) < 4 * 2**20 and "data:image/png" in run.figures[0].svg
    figure = (await draw_figures(run, plot_pipeline.renderer)).figures[0]
    assert figure.png and not figure.meta.get("unusable"), figure.meta
    assert figure.meta["axes"][0]["title"] == "Noisy signal"
    task = load_tasks("builtin:plot")[0]
    static = (await plot_pipeline.score(task, f"```python\n{code}```")).record.channels["static"]
    assert static.status.value == "ok" and static.raw > 30, static.payload


# ---------------------------------------------------------------- 3. the scientific stack


SCIPY_SCRIPT = """
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from scipy import signal, stats

df = pd.read_csv('data.csv')
rng = np.random.default_rng(0)
t = np.linspace(0, 10, 500)
noisy = np.sin(t) + rng.normal(0, 0.3, t.size)
smooth = signal.savgol_filter(noisy, 51, 3)
peaks, _ = signal.find_peaks(smooth, prominence=0.5)
values = df.select_dtypes('number').to_numpy().ravel()
grid = np.linspace(values.min() - 1, values.max() + 1, 200)

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.plot(t, noisy, color='0.7', label='measured')
left.plot(t, smooth, color='tab:blue', label='Savitzky-Golay')
left.plot(t[peaks], smooth[peaks], 'v', color='tab:red', label='peaks')
left.set(title='Smoothed signal', xlabel='time (s)', ylabel='amplitude')
left.legend(loc='lower left')
right.hist(values, bins=10, density=True, color='tab:green', alpha=0.6, label='data')
right.plot(grid, stats.gaussian_kde(values)(grid), color='black', label='KDE')
right.plot(grid, stats.norm.pdf(grid, *stats.norm.fit(values)), '--', color='tab:orange', label='normal fit')
right.set(title='Distribution of values', xlabel='value', ylabel='density')
right.legend()
fig.tight_layout()
plt.show()
"""


async def test_scipy_script_plots_and_is_scored(plot_pipeline):
    from aesenv.tasks import load_tasks

    task = load_tasks("builtin:plot")[0]
    scored = await plot_pipeline.score(task, f"```python\n{SCIPY_SCRIPT}```")
    assert scored.plot.status is RunStatus.OK, scored.plot.reason + scored.plot.stderr
    assert "scipy" in scored.plot.imported
    execution, static = scored.record.channels["execution"], scored.record.channels["static"]
    assert execution.status.value == "ok" and execution.score == 1.0
    assert static.status.value == "ok" and static.score > 0.3, static.payload


def test_the_sandbox_libraries_are_aesenv_dependencies():
    """One list for both backends: the Docker image pins exactly what the local sandbox's Python
    has, and set-up installs it (it is in aesenv's own requirements)."""
    from aesenv.sandbox.image import SANDBOX_LIBRARIES, wheels

    required = {re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower()
                for r in importlib.metadata.requires("aesenv") or [] if "extra ==" not in r}
    assert {"scipy", "numpy", "pandas", "matplotlib", "seaborn", "plotly"} <= set(SANDBOX_LIBRARIES)
    assert set(SANDBOX_LIBRARIES) <= required, set(SANDBOX_LIBRARIES) - required
    assert all(w.split("==")[1] == importlib.metadata.version(w.split("==")[0]) for w in wheels())


async def test_scientific_stack_imports_in_the_sandbox(sandbox):
    from aesenv.sandbox.image import SANDBOX_LIBRARIES

    modules = list(SANDBOX_LIBRARIES.values())
    code = ("import importlib\n"
            f"for name in {modules!r}:\n"
            "    print(name, importlib.import_module(name).__version__)\n"
            "import scipy.stats, scipy.signal, scipy.optimize, scipy.interpolate\n")
    run = await sandbox.run_plot(code, {}, LIMITS)
    assert run.status is RunStatus.OK, run.reason + run.stderr
    assert [line.split()[0] for line in run.stdout.splitlines()] == modules
