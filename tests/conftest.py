import pytest_asyncio

from aesenv.render import RenderConfig, Renderer
from support.ci_skips import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401 - under CI a skip fails
from support.openai_server import openai_server  # noqa: F401 - fixture: a scripted OpenAI-compatible server
from support.vllm_server import vllm_server  # noqa: F401 - fixture: a real vLLM server on a tiny random model


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def renderer():
    config = RenderConfig(navigation_timeout_s=4, settle_timeout_s=2, snapshot_timeout_s=3, capture_timeout_s=5)
    async with Renderer(config) as r:
        yield r


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def vendored():
    """A renderer serving the installed vendored mirror, with deadlines that fit CDN-heavy pages."""
    import pytest

    from aesenv.render.vendor import VendorMirror

    mirror = VendorMirror.default()
    if not mirror.available:
        pytest.skip("vendored mirror not installed: run `aesenv setup`")
    config = RenderConfig(navigation_timeout_s=8, settle_timeout_s=4, snapshot_timeout_s=4, capture_timeout_s=8)
    async with Renderer(config, resolvers=[mirror]) as r:
        yield r


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def bare_renderer():
    """A renderer with no vendored mirror: every foreign request is blocked."""
    async with Renderer(RenderConfig(navigation_timeout_s=4), resolvers=[]) as r:
        yield r


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def pipeline(renderer):
    from aesenv.rewards import RewardPipeline

    p = RewardPipeline(renderer=renderer)
    yield p
    await p.close_parts()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def plot_pipeline(renderer):
    """A pipeline with its own sandbox, for plot tasks (closed with the module). Its renderer has the
    default page deadlines: every plotly figure is laid out by plotly.js (4.6 MB) in the browser."""
    from aesenv.rewards import RewardPipeline

    async with Renderer(RenderConfig()) as plots_renderer:
        p = RewardPipeline(renderer=plots_renderer)
        yield p
        await p.sandbox.close()
        await p.close_parts()
