"""What a job can reach, what it can leave behind, and what a limit means: the attacks an RL cluster
meets, on both backends (the sandbox fixture is the local and the docker backend)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aesenv.sandbox import RunStatus, SandboxLimits, make_sandbox
from aesenv.sandbox import worker as worker_module
from test_sandbox import QUICK, docker_unavailable, sandbox  # noqa: F401 - the two-backend fixture

REPO = Path(__file__).resolve().parents[1]


async def test_host_files_are_not_there(sandbox):
    """Not the checkout's files or its .git, not a project beside it, not /root, not the host's
    /etc/passwd (only the Python installation, read-only, where it lives)."""
    sibling = REPO.parent / f"aesenv-canary-{os.getpid()}"
    sibling.mkdir()
    (sibling / "secret.txt").write_text("canary")
    targets = [REPO / "README.md", REPO / ".git" / "HEAD", sibling / "secret.txt", Path("/root/.bash_history"),
               Path("/etc/passwd")]
    code = (
        f"for path in {[str(t) for t in targets]!r}:\n"
        "    try:\n"
        "        print('READ', path, len(open(path, 'rb').read()))\n"
        "    except OSError as exc:\n"
        "        print('absent', path, type(exc).__name__)\n"
    )
    try:
        run = await sandbox.run_plot(code, {}, QUICK)
    finally:
        (sibling / "secret.txt").unlink()
        sibling.rmdir()
    assert run.status is RunStatus.OK, run.reason + run.stderr
    read = [line for line in run.stdout.splitlines() if line.startswith("READ")]
    if sandbox.name == "docker":  # the image's own /etc/passwd, not the host's
        assert run.stdout.count("absent") == len(targets) - 1 and read[0].startswith("READ /etc/passwd")
    else:
        assert read == [], read


async def test_a_deep_tree_does_not_poison_the_worker(sandbox):
    code = ("import os\nfor _ in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\n"
            "open('leaf', 'w').write('x')\nprint('deep')\n")
    run = await sandbox.run_plot(code, {}, SandboxLimits(timeout_s=30))
    assert run.status is RunStatus.OK, run.reason
    for _ in range(3):  # with one worker, every later job lands on the same one
        after = await sandbox.run_plot("import os\nprint(sorted(os.listdir('.')))\n", {}, QUICK)
        assert after.status is RunStatus.OK and after.stdout == "['main.py']\n", after.reason


async def test_odd_names_modes_and_links_are_cleaned(sandbox):
    code = (
        "import os\n"
        "os.mkdir(b'\\xff\\xfe-not-utf8'); open(b'\\xff\\xfe-not-utf8/\\x80f', 'w').write('x')\n"
        "os.makedirs('locked/inner'); open('locked/inner/f', 'w').write('x'); os.chmod('locked/inner', 0); os.chmod('locked', 0)\n"
        "os.mkfifo('pipe'); os.symlink('/', 'root-link'); os.symlink('root-link', 'loop')\n"
        "open('-rf', 'w').write('x'); open('--one-file-system', 'w').write('x')\n"
        "print('made')\n"
    )
    run = await sandbox.run_plot(code, {}, QUICK)
    assert run.status is RunStatus.OK, run.reason + run.stderr
    after = await sandbox.run_plot("import os\nprint(sorted(os.listdir('.')))\n", {}, QUICK)
    assert after.status is RunStatus.OK and after.stdout == "['main.py']\n", after.reason


IPC_WRITE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print('msg', libc.msgget(4242, 0o1666) >= 0)
print('shm', libc.shmget(4243, 4096, 0o1666) >= 0)
print('sem', libc.semget(4244, 1, 0o1666) >= 0)
rt = ctypes.CDLL('librt.so.1', use_errno=True)
print('mq', rt.mq_open(b'/aesenv-probe', os.O_CREAT | os.O_RDWR, 0o666, None) >= 0)
"""
IPC_READ = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL('librt.so.1', use_errno=True)
seen = [name for name, found in (('msg', libc.msgget(4242, 0o666)), ('shm', libc.shmget(4243, 0, 0o666)),
        ('sem', libc.semget(4244, 0, 0o666)), ('mq', rt.mq_open(b'/aesenv-probe', os.O_RDWR))) if found >= 0]
print('SEEN', seen)
"""


async def test_ipc_objects_do_not_pass_between_jobs(sandbox):
    made = await sandbox.run_plot(IPC_WRITE, {}, QUICK)
    assert made.status is RunStatus.OK, made.reason + made.stderr
    assert "msg True" in made.stdout and "shm True" in made.stdout and "sem True" in made.stdout
    seen = await sandbox.run_plot(IPC_READ, {}, QUICK)
    assert seen.status is RunStatus.OK, seen.reason + seen.stderr
    assert seen.stdout.strip() == "SEEN []"


MEMORY_CORPUS = {
    "line plot": ("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\n", RunStatus.OK),
    "histogram of 10 M samples": ("import numpy as np, matplotlib.pyplot as plt\n"
                                  "plt.hist(np.random.default_rng(0).normal(size=10_000_000), bins=100)\n",
                                  RunStatus.OK),
    "300 MB array": ("import numpy as np\na = np.ones(300 * 2**20 // 8)\nprint(a.sum())\n", RunStatus.OK),
    "a file mapping of 2 GB, untouched": ("import mmap\nm = mmap.mmap(-1, 2 * 2**30)\nprint('mapped')\n",
                                          RunStatus.OK),
    "grows to 1.5 GB": ("import numpy as np\nblocks = [np.ones(100 * 2**20 // 8) for _ in range(15)]\n",
                        RunStatus.KILLED),
    "allocates without end": ("b = []\nwhile True:\n    b.append(bytearray(64 * 2**20))\n", RunStatus.KILLED),
}


@pytest.mark.parametrize("backend", ["local", "docker"])
async def test_memory_verdicts_are_the_same_on_both_backends(backend):
    """Resident memory decides, the same way on both backends (an address-space limit would kill
    the untouched mapping on one backend and not the other): each gives the one expected table."""
    if backend == "docker" and (problem := docker_unavailable()):
        pytest.skip(f"docker sandbox unavailable: {problem}")
    limits = SandboxLimits(timeout_s=30, memory_mb=1024)
    async with make_sandbox(backend, workers=1) as sb:
        verdicts = {name: (await sb.run_plot(code, {}, limits)).status for name, (code, _) in MEMORY_CORPUS.items()}
    assert verdicts == {name: status for name, (_, status) in MEMORY_CORPUS.items()}


def _worker_for(scratch: Path) -> worker_module.Worker:
    worker = worker_module.Worker.__new__(worker_module.Worker)
    worker.scratch, worker.wipe, worker.keep = str(scratch), [str(scratch)], set()
    worker.private_ipc, worker.uid = False, None
    return worker


def test_clean_up_removes_what_python_cannot(tmp_path):
    os.makedirs(tmp_path / "a")
    fd = os.open(tmp_path, os.O_RDONLY)  # 2500 levels: past shutil.rmtree's recursion limit and PATH_MAX
    for _ in range(2500):
        os.mkdir("d", dir_fd=fd)
        new = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = new
    os.close(fd)
    (tmp_path / os.fsdecode(b"\xff-odd")).write_text("x")
    assert _worker_for(tmp_path).clean_up() == ""
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_what_cannot_be_removed_is_reported(tmp_path):
    """A mount inside the scratch root (what rm --one-file-system will not cross) is reported, so
    the worker is replaced and that job is the answer's failure."""
    (tmp_path / "stuck").mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(tmp_path / "stuck")], check=True)
    try:
        (tmp_path / "stuck" / "f").write_text("x")
        assert "stuck" in _worker_for(tmp_path).clean_up()
    finally:
        subprocess.run(["umount", str(tmp_path / "stuck")], check=True)


async def test_an_uncleanable_job_is_its_own_failure_and_the_worker_is_replaced(monkeypatch, tmp_path):
    """The worker says it cannot clean (forced here through its --wipe of a folder holding a mount
    point); the job is an error, not infra_error, and the next job runs on a fresh worker."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    from aesenv.sandbox import local

    stuck = tmp_path / "stuck"
    stuck.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(stuck)], check=True)
    (stuck / "f").write_text("x")
    original = local.LocalSandbox._command

    def command(self, slot):
        return [*original(self, slot), f"--wipe={tmp_path}"]

    monkeypatch.setattr(local.LocalSandbox, "_command", command)
    try:
        async with make_sandbox("local", workers=1, isolate=False) as sb:
            first = await sb.run_plot("print('hello')\n", {}, QUICK)
            assert first.status is RunStatus.ERROR and "could not remove" in first.reason
            pid_before = sb._slots[0].handle[0].pid
            second = await sb.run_plot("print('again')\n", {}, QUICK)
            assert second.status is RunStatus.ERROR  # the mount is still there: every worker says so
            assert sb._slots[0].handle[0].pid != pid_before
    finally:
        subprocess.run(["umount", str(stuck)], check=True)


def test_worker_module_is_standalone():
    """The worker still imports with the standard library alone (the Docker image has no aesenv)."""
    out = subprocess.run([sys.executable, "-I", "-S", "-c", f"import runpy; runpy.run_path({worker_module.__file__!r}, "
                          "run_name='not_main')"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


async def test_a_font_cache_under_tmp_is_not_taken_for_a_jobs_leftover(tmp_path, monkeypatch):
    """AESENV_HOME may live under /tmp, where the isolated worker's scratch tmpfs is mounted: the
    font cache bound there belongs to the sandbox, and every job still runs (it used to be called
    a job's leftover the sandbox could not remove, and every job failed)."""
    from aesenv.sandbox import local

    if not local.can_isolate()[0]:
        pytest.skip(local.can_isolate()[1])
    assert str(tmp_path).startswith(local.SCRATCH + "/")
    monkeypatch.setattr(local, "MPL_CACHE", tmp_path / "matplotlib")
    box = make_sandbox("local", workers=1)
    try:
        for _ in range(2):
            run = await box.run_plot("import matplotlib.pyplot as plt\nplt.plot([1, 2])\n", {}, QUICK)
            assert run.status is RunStatus.OK, run.reason
    finally:
        await box.close()
