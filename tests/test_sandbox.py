"""Sandbox behaviour and security, for both backends (the Docker ones need an engine and the image).

A missing Docker engine or image skips the Docker half with the reason (under CI that skip is a
failure: tests/support/ci_skips.py), so CI can never silently stop testing the Docker backend.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys

import pytest
import pytest_asyncio

from aesenv.procfs import tree_cpu_seconds
from aesenv.sandbox import Probe, RunStatus, SandboxLimits, make_sandbox

SECRET = "aesenv-test-secret-7f3a9"
QUICK = SandboxLimits(timeout_s=8)
HANG_GUARD_S = 60.0  # far above any run here (a few seconds at most): only a hang reaches it


def docker_unavailable() -> str:
    """Why the Docker backend cannot be tested here ('' when it can)."""
    from aesenv.sandbox.docker import engine_problem

    return engine_problem()


@pytest_asyncio.fixture(scope="session", loop_scope="session", params=["local", "docker"])
async def sandbox(request):
    if request.param == "docker" and (problem := docker_unavailable()):
        pytest.skip(f"docker sandbox unavailable: {problem}")
    os.environ["AESENV_TEST_SECRET"] = SECRET  # set in the host before any worker starts
    sb = make_sandbox(request.param, workers=1)
    await sb.start()
    yield sb
    await sb.close()


async def test_plot_figures_files_and_imports(sandbox):
    code = (
        "import pandas as pd, matplotlib.pyplot as plt, plotly.express as px\n"
        "df = pd.read_csv('data.csv')\n"
        "fig, ax = plt.subplots(figsize=(4, 3))\n"
        "ax.bar(df['name'], df['value'], label='value')\n"
        "ax.set_title('Values'); ax.legend()\n"
        "px.bar(df, x='name', y='value').show()\n"
        "print('rows', len(df))\n"
    )
    run = await sandbox.run_plot(code, {"data.csv": b"name,value\na,1\nb,3\nc,2\n"}, QUICK)
    assert run.status is RunStatus.OK, run.reason + run.stderr
    assert run.stdout.strip() == "rows 3"
    assert run.backend == sandbox.name
    assert run.imported == ["matplotlib", "pandas", "plotly"]
    kinds = [f.kind for f in run.figures]
    assert kinds == ["matplotlib", "plotly"]
    # the worker saves what it left open as SVG (texts as text) at the figure's dpi; the host draws it
    figure = run.figures[0]
    assert figure.png is None and figure.dpi == 100.0
    assert 'width="288pt" height="216pt"' in figure.svg and ">Values</text>" in figure.svg
    assert json.loads(run.figures[1].plotly_json)["data"][0]["type"] == "bar"


async def test_a_run_says_where_its_time_went(sandbox):
    """The worker's stages (what the plots benchmark breaks a run's cost into), the script's own
    account of running and saving among them; the script cannot put anything else there."""
    code = ("import json, os\n"
            "said = json.dumps({'status': 'ok', 'figures': [], 'timings_ms': {'script': 'x', 'clean': 1e12, "
            "'save': -1, 'setup': 1e9}}).encode()\n"
            "for fd in range(3, 32):\n"
            "    try:\n"
            "        os.write(fd, said)\n"
            "    except OSError:\n"
            "        pass\n"
            "os._exit(0)\n")
    forged = await sandbox.run_plot(code, {}, QUICK)
    assert forged.status is RunStatus.OK, forged.reason
    assert {"prepare", "start", "run", "collect", "clean"} <= set(forged.timings_ms)
    assert not {"run.setup", "run.script", "run.save"} & set(forged.timings_ms) and forged.timings_ms["clean"] < 1e6
    run = await sandbox.run_plot("import matplotlib.pyplot as plt\nplt.plot([1, 2])\n", {}, QUICK)
    assert run.status is RunStatus.OK, run.reason
    stages = run.timings_ms
    assert {"prepare", "start", "run", "collect", "clean", "run.setup", "run.script", "run.save"} <= set(stages), stages
    assert all(ms >= 0 for ms in stages.values())
    assert stages["run.setup"] + stages["run.script"] + stages["run.save"] <= stages["run"]


async def test_raise_gives_error_with_traceback(sandbox):
    run = await sandbox.run_plot("x = 1\n\ndef f():\n    raise ValueError('bad data')\nf()\n", {}, QUICK)
    assert run.status is RunStatus.ERROR
    assert run.reason == "ValueError: bad data"
    assert 'File "main.py", line 5' in run.traceback and "raise ValueError('bad data')" in run.traceback
    assert "worker.py" not in run.traceback


@pytest.mark.parametrize(("code", "status", "reason", "stdout"), [
    ("def broken(:\n", RunStatus.ERROR, "SyntaxError", ""),
    ("import sys\nprint('bye')\nsys.exit(0)\n", RunStatus.OK, None, "bye\n"),
    ("import sys\nprint('going')\nsys.exit(4)\n", RunStatus.ERROR, "exited with code 4", "going\n"),
    ("open('big.bin', 'wb').write(b'x' * (3 * 1024 * 1024))\n", RunStatus.KILLED, "file size limit", ""),
])
async def test_exit_paths(sandbox, code, status, reason, stdout):
    """How a script ends decides the status; a clean exit has no reason at all, and what the
    script printed before it ended is kept."""
    run = await sandbox.run_plot(code, {}, SandboxLimits(timeout_s=8, max_file_mb=2))
    assert run.status is status, run.reason + run.stderr
    if reason is None:
        assert run.reason == "" and run.ok
    else:
        assert reason in run.reason and not run.ok
    assert run.stdout == stdout


async def test_plotly_figures_created_without_show(sandbox):
    code = "import plotly.graph_objects as go\nfig = go.Figure(go.Scatter(x=[1, 2], y=[3, 1]))\nfig.update_layout(title='t')\n"
    run = await sandbox.run_plot(code, {}, QUICK)
    assert run.status is RunStatus.OK, run.reason + run.stderr
    assert [f.kind for f in run.figures] == ["plotly"]
    assert json.loads(run.figures[0].plotly_json)["layout"]["title"]["text"] == "t"


async def test_a_script_that_never_ends_is_stopped_at_its_deadline(sandbox):
    """The deadline ends it, and says which deadline; the script had its turn first (it printed).
    How close to the deadline it stops is measured by `aesenv bench deadlines`, not here; the
    wait_for is a hang guard (a run takes about 2 s here)."""
    code = "print('started', flush=True)\nwhile True:\n    pass\n"
    run = await asyncio.wait_for(sandbox.run_plot(code, {}, SandboxLimits(timeout_s=1.5)), HANG_GUARD_S)
    assert run.status is RunStatus.TIMEOUT and run.reason == "deadline of 1.5 s reached", run.reason
    assert run.stdout == "started\n"
    again = await sandbox.run_plot("print('next')\n", {}, QUICK)  # the worker is ready for the next job
    assert again.ok and again.stdout == "next\n"


async def test_cpu_limit_kills(sandbox):
    run = await sandbox.run_plot("while True:\n    pass\n", {}, SandboxLimits(timeout_s=10, cpu_s=1))
    assert run.status is RunStatus.KILLED
    assert "cpu" in run.reason


async def test_host_environment_invisible(sandbox):
    code = (
        "import os, glob\n"
        f"found = [p for p in glob.glob('/proc/*/environ') if os.access(p, os.R_OK) and b'{SECRET}' in open(p, 'rb').read()]\n"
        "print(os.environ.get('AESENV_TEST_SECRET'), found, sorted(os.environ))\n"
    )
    assert os.environ["AESENV_TEST_SECRET"] == SECRET
    run = await sandbox.run_plot(code, {}, QUICK)
    assert run.status is RunStatus.OK, run.reason
    assert run.stdout.startswith("None []")
    assert SECRET not in run.stdout + run.stderr


async def test_no_network(sandbox):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    port = listener.getsockname()[1]
    code = (
        "import socket\n"
        f"for host in ('127.0.0.1', socket.gethostname(), '172.17.0.1', '1.1.1.1'):\n"
        "    s = socket.socket(); s.settimeout(2)\n"
        "    try:\n"
        f"        s.connect((host, {port})); print('CONNECTED', host)\n"
        "    except OSError as exc:\n"
        "        print('refused', host, exc.errno)\n"
    )
    try:
        run = await sandbox.run_plot(code, {}, QUICK)
        assert run.status is RunStatus.OK, run.reason + run.stderr
        assert "CONNECTED" not in run.stdout and run.stdout.count("refused") == 4
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    assert run.isolation.network


async def test_writes_confined_to_workspace(sandbox):
    outside = ["/", "/root", "/etc", "/usr/lib", "/var/tmp", "/dev/shm", "/run/lock", os.getcwd()]
    if sandbox.name == "local":
        outside.append("/tmp")
    code = (
        "import os\n"
        f"for d in {outside!r}:\n"
        "    try:\n"
        "        open(os.path.join(d, 'aesenv-escape'), 'w').write('x'); print('WROTE', d)\n"
        "    except OSError:\n"
        "        pass\n"
        "open('inside.txt', 'w').write('ok'); print('inside', open('inside.txt').read())\n"
    )
    run = await sandbox.run_plot(code, {}, QUICK)
    assert run.status is RunStatus.OK, run.reason + run.stderr
    assert "WROTE" not in run.stdout and "inside ok" in run.stdout
    assert not os.path.exists(os.path.join(os.getcwd(), "aesenv-escape"))
    assert run.isolation.filesystem


async def test_nothing_survives_a_job(sandbox):
    first = await sandbox.run_plot(
        "import os, subprocess\nopen('left.txt', 'w').write('x')\n"
        "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "if os.fork() == 0:\n    os.setsid()\n    import time; time.sleep(300)\n", {}, QUICK)
    assert first.status is RunStatus.OK, first.reason + first.stderr
    second = await sandbox.run_plot(
        "import os, glob\nprint(os.listdir('.'), glob.glob('/tmp/*/left.txt'))\n"
        "print(sorted(open(f'/proc/{p}/cmdline').read().split('\\0')[0] for p in os.listdir('/proc') if p.isdigit()))\n",
        {}, QUICK)
    assert second.status is RunStatus.OK, second.reason
    listing, processes = second.stdout.splitlines()
    assert listing == "['main.py'] []"
    # left: this script and its worker (docker adds the container's init and its `sleep infinity`)
    expected = {"local": [sys.executable] * 2, "docker": ["/sbin/docker-init", "python3", "python3", "sleep"]}
    assert sorted(eval(processes)) == expected[sandbox.name]


# What one job changes in its process and places; the next job must see none of it (each job's
# process is a fresh copy of the clean worker, and what it writes is wiped).
_LEAVE_STATE = (
    "import builtins, json, os, sys, types, wave, matplotlib, matplotlib.pyplot as plt\n"
    "builtins.left_by_job = json.left_by_job = 1\n"
    "sys.modules['left_module'] = types.ModuleType('left_module')\n"
    "os.environ['LEFT_BY_JOB'] = '1'\n"
    "matplotlib.rcParams['lines.linewidth'] = 9.5\n"
    "plt.figure(7)\n"
    "open('left.txt', 'w').write('x')\n"
    "for place in ('/tmp/left.txt', '/dev/shm/left.txt'):  # where a backend lets a job write\n"
    "    try:\n"
    "        open(place, 'w').write('x')\n"
    "    except OSError:\n"
    "        pass\n"
    "print('aesenv-prev' + '-job-' + 'output')\n"
)
_SEE_STATE = (
    "import builtins, gc, glob, json, os, sys, matplotlib, matplotlib.pyplot as plt\n"
    "marker = 'aesenv-prev' + '-job-' + str('output')\n"
    "mine = globals()\n"
    "held = [sorted(o)[:3] for o in gc.get_objects() if isinstance(o, dict) and o is not mine\n"
    "        and any(isinstance(v, str) and marker in v for v in list(o.values()))]\n"
    "frame, in_frames = sys._getframe(), []\n"
    "while frame is not None:\n"
    "    if frame.f_code.co_filename != 'main.py':\n"
    "        in_frames += [k for k, v in frame.f_locals.items() if marker in repr(v)]\n"
    "    frame = frame.f_back\n"
    "print(json.dumps({'builtins': hasattr(builtins, 'left_by_job'), 'json': hasattr(json, 'left_by_job'),\n"
    "    'modules': sorted(set(sys.modules) - {'gc', 'glob'}), 'env': 'LEFT_BY_JOB' in os.environ,\n"
    "    'rc': matplotlib.rcParams['lines.linewidth'], 'figures': plt.get_fignums(),\n"
    "    'files': os.listdir('.') + glob.glob('/tmp/*/left.txt') + glob.glob('/tmp/left.txt') + glob.glob('/dev/shm/*'),\n"
    "    'output_held': held, 'output_in_frames': in_frames}))\n"
)


async def test_a_job_sees_nothing_of_the_job_before(sandbox):
    """Globals, modules, environment, matplotlib state, open figures, files and the previous job's
    output (in the worker's memory the job's process copies) do not pass to the next job."""
    fresh = await sandbox.run_plot(_SEE_STATE, {}, QUICK)
    assert fresh.status is RunStatus.OK, fresh.reason + fresh.stderr
    left = await sandbox.run_plot(_LEAVE_STATE, {}, QUICK)
    assert left.status is RunStatus.OK and "aesenv-prev-job-output" in left.stdout, left.reason + left.stderr
    after = await sandbox.run_plot(_SEE_STATE, {}, QUICK)
    assert after.status is RunStatus.OK, after.reason + after.stderr
    seen, before = json.loads(after.stdout), json.loads(fresh.stdout)
    assert seen == before
    assert seen["files"] == ["main.py"] and seen["rc"] != 9.5 and seen["figures"] == []
    assert not seen["builtins"] and not seen["json"] and "left_module" not in seen["modules"]
    assert "wave" not in seen["modules"] and not seen["env"]
    assert seen["output_held"] == [] and seen["output_in_frames"] == []


async def test_a_job_that_closes_its_pipes_early_is_stopped_before_its_places_are_wiped(sandbox):
    """A plot with every pipe closed has said all it can, so the worker answers without waiting for
    its exit; whatever it and a helper it left in a new session go on writing must not outlive the
    clean-up that comes before the answer."""
    code = (
        "import os\n"
        "def close_everything():\n"
        "    for fd in range(64):\n"
        "        try:\n"
        "            os.close(fd)\n"
        "        except OSError:\n"
        "            pass\n"
        "for fd in range(3, 64):  # a result of its own on whichever descriptor is the result pipe\n"
        "    try:\n"
        "        os.write(fd, b'{\"status\": \"ok\", \"figures\": []}')\n"
        "    except OSError:\n"
        "        pass\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    close_everything()\n"
        "    n = 0\n"
        "    while True:\n"
        "        n += 1\n"
        "        for place in ('.', '/tmp', '/dev/shm'):\n"
        "            try:\n"
        "                open(f'{place}/late-{n}.txt', 'w').write('x')\n"
        "            except OSError:\n"
        "                pass\n"
        "close_everything()\n"
        "while True:\n"
        "    open('later.txt', 'w').write('x')\n"
    )
    first = await sandbox.run_plot(code, {}, QUICK)
    assert first.status is RunStatus.OK, first.reason  # answered on the hand-over: a timeout would say so
    second = await sandbox.run_plot(
        "import os, glob\nprint(os.listdir('.'), glob.glob('/tmp/*/late*') + glob.glob('/tmp/late*')"
        " + glob.glob('/dev/shm/late*'))\n"
        "print(sorted(open(f'/proc/{p}/cmdline').read().split('\\0')[0] for p in os.listdir('/proc') if p.isdigit()))\n",
        {}, QUICK)
    assert second.status is RunStatus.OK, second.reason + second.stderr
    listing, processes = second.stdout.splitlines()
    assert listing == "['main.py'] []"
    expected = {"local": [sys.executable] * 2, "docker": ["/sbin/docker-init", "python3", "python3", "sleep"]}
    assert sorted(eval(processes)) == expected[sandbox.name]


async def test_a_cut_result_is_not_taken_for_a_handed_one(sandbox):
    """The worker answers early only for a whole result; a process that dies with its result cut
    short (a limit's kill mid-write) is reaped and reported by how it died, as before."""
    code = (
        "import os, signal\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, b'{\"status\": \"ok\", \"figures\": [')\n"
        "    except OSError:\n"
        "        pass\n"
        "for fd in range(64):\n"
        "    try:\n"
        "        os.close(fd)\n"
        "    except OSError:\n"
        "        pass\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    run = await sandbox.run_plot(code, {}, QUICK)
    assert run.status is RunStatus.KILLED, run.reason


async def test_cpu_ms_is_the_jobs_own_work(sandbox):
    """`cpu_ms` is read before the job's process is reaped (the worker answers first): it still
    counts what the script spent and not what the worker spent before the job."""
    busy = await sandbox.run_plot(
        "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4:\n    pass\n", {}, QUICK)
    idle = await sandbox.run_plot("import time\ntime.sleep(0.4)\n", {}, QUICK)
    assert busy.status is RunStatus.OK and idle.status is RunStatus.OK
    assert 400 <= busy.cpu_ms < 1500, busy.cpu_ms
    assert idle.cpu_ms < 200, idle.cpu_ms


async def test_script_cannot_kill_its_worker(sandbox):
    run = await sandbox.run_plot("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('alive')\n", {}, QUICK)
    assert run.status is RunStatus.ERROR and "PermissionError" in run.reason
    again = await sandbox.run_plot("print('next')\n", {}, QUICK)
    assert again.status is RunStatus.OK and again.stdout == "next\n"


async def test_script_cannot_forge_an_infra_error(sandbox):
    code = (
        "import os\n"
        "forged = b'{\"status\": \"infra_error\", \"reason\": \"not me\", \"figures\": []}'\n"
        "for fd in range(3, 32):\n"
        "    try:\n"
        "        os.write(fd, forged)\n"
        "    except OSError:\n"
        "        pass\n"
        "os._exit(0)\n"
    )
    run = await sandbox.run_plot(code, {}, QUICK)
    assert run.status is RunStatus.ERROR and "result channel" in run.reason


async def test_fork_bomb_is_contained(sandbox):
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    run = await sandbox.run_plot(code, {}, SandboxLimits(timeout_s=3, max_procs=32))
    assert run.status in (RunStatus.TIMEOUT, RunStatus.KILLED)
    after = await sandbox.run_plot("print('fine')\n", {}, QUICK)
    assert after.status is RunStatus.OK and after.stdout == "fine\n"


async def test_memory_bomb_is_contained(sandbox):
    code = "blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 1024 * 1024))\n"
    run = await sandbox.run_plot(code, {}, SandboxLimits(timeout_s=10, memory_mb=768))
    assert run.status is RunStatus.KILLED
    assert "memory" in run.reason


async def test_giant_output_is_cut(sandbox):
    limits = SandboxLimits(timeout_s=10, max_output_bytes=100_000)
    run = await sandbox.run_plot("while True:\n    print('x' * 1000)\n", {}, limits)
    assert run.status is RunStatus.KILLED and "stdout" in run.reason
    assert run.stdout_truncated and 0 < len(run.stdout) <= 100_000


async def test_command_returns_files(sandbox):
    run = await sandbox.run(["sh", "-c", "cat in.txt > out.txt; echo made; exit 3"], {"in.txt": b"hello"}, QUICK)
    assert run.status is RunStatus.ERROR and run.exit_code == 3
    assert run.stdout == "made\n"
    assert run.files_out == {"in.txt": b"hello", "out.txt": b"hello"}


# A server on port 4173 that answers `/` with a small page and any other path with its own name.
_SERVER = ("require('http').createServer((q, r) => { r.writeHead(200, {'content-type': 'text/html'}); "
           "r.end(q.url === '/' ? '<html>page</html>' : 'file ' + q.url) }).listen(4173, '127.0.0.1')")


async def test_the_sandbox_probes_a_served_port_itself(sandbox):
    """The probe is the worker's: it reads what the server sends (size, SHA-256, first bytes), keeps
    probing after the start command itself returns (a server left in the background), and ends
    the server once it has looked."""
    import hashlib

    probe = Probe(port=4173, paths=[("/", 100), ("/a.js", 100), ("/big", 3)], wait_s=8)
    run = await sandbox.run(["sh", "-c", f'node -e "{_SERVER}" & echo started'], {},
                            SandboxLimits(timeout_s=20), probe=probe)
    assert run.status is RunStatus.OK and run.stdout == "started\n" and run.probe.answered, run
    page, asset, big = (run.probe.responses[p] for p in ("/", "/a.js", "/big"))
    assert (page.status, page.head) == (200, b"<html>page</html>")
    assert page.sha256 == hashlib.sha256(b"<html>page</html>").hexdigest()
    assert asset.head == b"file /a.js" and asset.size == 10
    assert big.truncated and big.size == 4  # read one byte past the limit: enough to tell it differs


@pytest.mark.parametrize("command", [
    "echo 'UP 200 5000 1'; sleep 30",                     # says it is up: says nothing to the probe
    "exit 3",                                           # ends at once, leaves nothing running
    "printf 'HTTP/1.0 200 OK\\r\\n\\r\\n<html>'; sleep 30",  # an answer on its own stdout, not on the port
])
async def test_what_a_command_prints_never_answers_the_probe(sandbox, command):
    run = await sandbox.run(["sh", "-c", command], {}, SandboxLimits(timeout_s=20),
                            probe=Probe(port=4173, paths=[("/", 100)], wait_s=3))
    assert run.status is not RunStatus.INFRA_ERROR and run.probe is not None
    assert not run.probe.answered and run.probe.responses == {}


async def test_a_malformed_answer_is_the_servers_failure_not_the_probes(sandbox):
    """Digits only Python's str.isdigit takes ("²00") must not make our probe raise (that would be
    reported as our failure): the port did not answer with HTTP."""
    garbage = ("require('net').createServer((s) => s.end('HTTP/1.0 \\u00b200 OK\\r\\nContent-Length: \\u00b2\\r\\n"
               "\\r\\nxyz', 'latin1')).listen(4173, '127.0.0.1')")
    run = await sandbox.run(["node", "-e", garbage], {}, SandboxLimits(timeout_s=20),
                            probe=Probe(port=4173, paths=[("/", 100)], wait_s=3))
    assert run.status is not RunStatus.INFRA_ERROR and not run.probe.answered
    assert not run.probe.error.startswith("probe:") and "not an HTTP answer" in run.probe.error


async def test_file_names_outside_workspace_are_refused(sandbox):
    run = await sandbox.run_plot("print(1)\n", {"../escape.txt": b"x"}, QUICK)
    assert run.status is RunStatus.INFRA_ERROR and "outside the workspace" in run.reason


async def test_concurrent_runs_are_separate():
    sb = make_sandbox("local", workers=2)
    async with sb:
        runs = await asyncio.gather(*(sb.run_plot(f"open('n.txt','w').write('{i}')\nimport os\nprint(sorted(os.listdir('.')))\n", {}, QUICK)
                                      for i in range(4)))
    assert all(r.status is RunStatus.OK and r.stdout.strip() == "['main.py', 'n.txt']" for r in runs)


async def test_without_isolation_the_record_says_so():
    sb = make_sandbox("local", workers=1, isolate=False)
    async with sb:
        run = await sb.run_plot("import os\nprint(os.environ.get('AESENV_TEST_SECRET'))\n", {}, QUICK)
    assert run.status is RunStatus.OK and run.stdout == "None\n"
    assert not run.isolation.network and not run.isolation.filesystem


@pytest.mark.slow
async def test_docker_containers_are_removed():
    if problem := docker_unavailable():
        pytest.skip(f"docker sandbox unavailable: {problem}")
    from aesenv.sandbox.docker import LABEL, client

    engine = client()
    before = {c.id for c in engine.containers.list(all=True, filters={"label": LABEL})}
    stale = engine.containers.create(image_name_for_tests(), ["true"], labels={LABEL: f"{socket.gethostname()}:999999999"})
    sb = make_sandbox("docker", workers=2)
    await sb.start()
    labelled = engine.containers.list(all=True, filters={"label": LABEL})
    assert stale.id not in {c.id for c in labelled}  # a dead owner's container is removed at start
    started = {c.id for c in labelled if c.labels[LABEL] == f"{socket.gethostname()}:{os.getpid()}"} - before
    assert len(started) == 2
    await sb.close()
    assert not started & {c.id for c in engine.containers.list(all=True, filters={"label": LABEL})}


def image_name_for_tests() -> str:
    from aesenv.sandbox.image import image_name

    return image_name()


async def _until_spinning(worker_pid: int, running: asyncio.Task) -> None:
    """Until a job of `while True: pass` is running: the worker's process tree burns CPU. (A count
    of processes cannot tell: the job's process is forked ahead, before the job exists.)"""
    loop = asyncio.get_running_loop()
    deadline, idle = loop.time() + HANG_GUARD_S, tree_cpu_seconds(worker_pid)
    while tree_cpu_seconds(worker_pid) - idle < 0.3:
        assert loop.time() < deadline and not running.done(), "the job never started"
        await asyncio.sleep(0.02)


async def test_close_during_a_run_leaves_nothing():
    sb = make_sandbox("local", workers=1)
    await sb.start()
    slot = sb._slots[0]
    worker = slot.handle[0]
    running = asyncio.create_task(sb.run_plot("while True:\n    pass\n", {}, SandboxLimits(timeout_s=30)))
    await _until_spinning(worker.pid, running)
    await sb.close()
    run = await asyncio.wait_for(running, 10)
    assert run.status is RunStatus.INFRA_ERROR
    assert worker.returncode is not None
    assert slot.handle is None  # no replacement worker was started for a closed pool


async def test_close_wakes_a_run_still_waiting_for_a_worker():
    sb = make_sandbox("local", workers=1)
    await sb.start()
    worker = sb._slots[0].handle[0]
    spin = SandboxLimits(timeout_s=30)
    running = asyncio.create_task(sb.run_plot("while True:\n    pass\n", {}, spin))
    await _until_spinning(worker.pid, running)
    queued = asyncio.create_task(sb.run_plot("print('never')\n", {}, spin))  # waits: the one worker is busy
    await asyncio.sleep(0.2)
    assert not queued.done()
    await sb.close()
    first, second = await asyncio.wait_for(asyncio.gather(running, queued), 10)
    assert first.status is RunStatus.INFRA_ERROR
    assert second.status is RunStatus.INFRA_ERROR and "closed while the job waited" in second.reason


_SPARE_SCENARIO = """
import json, os, runpy, sys, tempfile, time
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot
w = runpy.run_path(sys.argv[1], run_name="not_main")
told_to_warm = sys.argv[2] == "idle"
child = w["Child"](None, warm=True)
if told_to_warm:
    child.warm_up()
    time.sleep(1.0)
workspace = tempfile.mkdtemp()
limits = {"timeout_s": 10, "cpu_s": 10, "memory_mb": 2048, "max_procs": 64, "max_output_bytes": 10000,
          "max_file_mb": 16}
child.start(workspace, {"kind": "plot", "code": "print('ran')", "limits": limits})
raw = b""
while chunk := os.read(child.res_r, 65536):
    raw += chunk
os.waitpid(child.pid, 0)
print(json.dumps({"pre_job_ms": w["PRE_JOB"].unpack(raw[:8])[0] / 1000, "ok": json.loads(raw[8:])["status"]}))
"""


@pytest.mark.parametrize("scenario", ["idle", "busy"])
def test_a_spare_warms_up_only_when_the_worker_says_it_is_idle(scenario):
    """A job that comes back to back must not wait for the spare's warm-up figure (tens of ms):
    the spare draws it only once the worker has been idle (`Worker.idle` closes its pipe)."""
    from aesenv.sandbox import worker as worker_module

    out = subprocess.run([sys.executable, "-c", _SPARE_SCENARIO, worker_module.__file__, scenario],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["ok"] == "ok"
    if scenario == "idle":
        assert seen["pre_job_ms"] > 10, seen  # it drew its figure before the job
    else:
        assert seen["pre_job_ms"] < 10, seen  # it went straight to the job
