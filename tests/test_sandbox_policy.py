"""The local sandbox's policy as data: the bubblewrap command a worker starts under, written out by
hand for a machine described here (which system paths exist, which are links, where Python and the
runtimes live), so that any change to what a job can see or write shows up as a difference. What
the command then enforces is tested by running jobs (test_sandbox.py, test_containment.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aesenv.sandbox import local
from aesenv.sandbox.pool import Slot

# The machine: /lib and /bin are merged-/usr links, /lib32 and /libx32 are missing, one of the
# system files is missing, Python lives under /root (whose parents bwrap would make 0700).
LINKS = {"/bin": "usr/bin", "/lib": "usr/lib"}
MISSING = {"/lib32", "/libx32", "/etc/mime.types"}
PYTHON_DIRS = ("/root/venv", "/usr")
PROJECT_MODULES = "/srv/aesenv/project/node_modules"
MPL_CACHE = Path("/var/cache/aesenv/matplotlib")
WORKER = Path("/srv/aesenv/aesenv/sandbox/worker.py")


@pytest.fixture
def machine(monkeypatch):
    monkeypatch.setattr(local.os.path, "islink", lambda p: p in LINKS)
    monkeypatch.setattr(local.os, "readlink", lambda p: LINKS[p])
    monkeypatch.setattr(local.os.path, "exists", lambda p: p not in MISSING)
    monkeypatch.setattr(local.Policy, "runtimes", staticmethod(lambda: {"/opt/aesenv/project/node_modules":
                                                                        PROJECT_MODULES}))
    monkeypatch.setattr(local, "MPL_CACHE", MPL_CACHE)
    monkeypatch.setattr(local, "WORKER_SCRIPT", WORKER)


EXPECTED = [
    # namespaces: own pid, network (no interface), IPC, UTS and cgroup; bwrap dies with us, the job
    # gets a new session and the worker is pid 1
    "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--die-with-parent", "--new-session", "--as-pid-1",
    # only the capabilities the worker needs to switch a job to its uid and clean up after it
    "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_CHOWN", "--cap-add", "CAP_KILL",
    "--cap-add", "CAP_DAC_OVERRIDE", "--cap-add", "CAP_FOWNER", "--cap-add", "CAP_SYS_PTRACE",
    # the system, read-only; merged-/usr links stay links; what is missing is left out
    "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--ro-bind", "/sbin", "/sbin",
    "--symlink", "usr/lib", "/lib", "--ro-bind", "/lib64", "/lib64",
    # a few files of /etc (not /etc itself), each under a 0755 /etc made once
    "--perms", "0755", "--dir", "/etc", "--ro-bind", "/etc/fonts", "/etc/fonts",
    "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind", "/etc/ld.so.conf", "/etc/ld.so.conf",
    "--ro-bind", "/etc/ld.so.conf.d", "/etc/ld.so.conf.d", "--ro-bind", "/etc/alternatives", "/etc/alternatives",
    "--ro-bind", "/etc/localtime", "/etc/localtime",
    # fresh /proc and /dev, private shm and mqueue, and the size-capped scratch tmpfs others cannot list
    "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--mqueue", "/dev/mqueue",
    "--size", str(1024 << 20), "--perms", "0711", "--tmpfs", "/tmp",
    # Python's installation, read-only (its parent made reachable)
    "--perms", "0755", "--dir", "/root", "--ro-bind", "/root/venv", "/root/venv", "--ro-bind", "/usr", "/usr",
    # the runtimes where the sandbox says they are
    "--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", "/opt/aesenv", "--perms", "0755",
    "--dir", "/opt/aesenv/project", "--ro-bind", PROJECT_MODULES, "/opt/aesenv/project/node_modules",
    # the one writable place besides the tmpfs: the font cache (jobs run as a uid that cannot write it)
    "--perms", "0755", "--dir", "/var", "--perms", "0755", "--dir", "/var/cache", "--perms", "0755",
    "--dir", "/var/cache/aesenv", "--bind", str(MPL_CACHE), str(MPL_CACHE),
    # the worker's own code, read-only
    "--ro-bind", str(WORKER), "/opt/aesenv/worker.py",
]


def test_the_policy_is_exactly_this_command(machine):
    assert local.Policy.arguments(PYTHON_DIRS) == EXPECTED


def test_nothing_writable_but_the_font_cache_and_the_tmpfs_mounts(machine):
    args = local.Policy.arguments(PYTHON_DIRS)
    writable = [args[i + 1] for i, a in enumerate(args) if a in ("--bind", "--dev-bind", "--bind-try")]
    assert writable == [str(MPL_CACHE)]
    assert [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"] == ["/dev/shm", "/tmp"]


def test_the_worker_command_runs_the_policy_with_its_job_uid_and_wipes(machine, monkeypatch):
    monkeypatch.setattr(local, "can_isolate", lambda: (True, "isolated"))
    monkeypatch.setattr(local, "_python_dirs", lambda python: ("/tmp/checkout/.venv", "/usr"))
    sandbox = local.LocalSandbox(workers=1, python="/tmp/checkout/.venv/bin/python", isolate=True)
    command = sandbox._command(Slot(3))
    split = command.index("--")
    assert command[0] == "bwrap" and command[1:split] == local.Policy.arguments(("/tmp/checkout/.venv", "/usr"))
    # a venv under /tmp lives under the scratch tmpfs: kept, not wiped as a job's leftover
    assert command[split + 1:] == ["/tmp/checkout/.venv/bin/python", "-I", "/opt/aesenv/worker.py", "--scratch", "/tmp",
                                   "--wipe=/dev/shm", "--wipe=/dev/mqueue", "--keep=/tmp/checkout/.venv",
                                   "--private-ipc", "--uid", str(local.job_uid(3))]


def test_job_uids_are_distinct_per_slot_and_own_no_files():
    uids = [local.job_uid(slot) for slot in range(16)]
    assert len(set(uids)) == 16 and min(uids) >= 200_000 and uids == list(range(uids[0], uids[0] + 16))


def test_unisolated_workers_run_plain_and_say_so(monkeypatch):
    monkeypatch.setattr(local, "can_isolate", lambda: (True, "isolated"))
    sandbox = local.LocalSandbox(workers=1, python="/usr/bin/python3", isolate=False)
    sandbox._scratch = "/tmp/aesenv-sandbox-x"
    assert sandbox._command(Slot(1)) == ["/usr/bin/python3", "-I", str(local.WORKER_SCRIPT), "--scratch",
                                         "/tmp/aesenv-sandbox-x/1"]
    isolation = sandbox._isolation({"network_isolated": True, "uid": 5})
    assert (isolation.network, isolation.filesystem) == (False, False)
    assert isolation.detail == "isolation turned off (isolate=False)"
    monkeypatch.setattr(local, "can_isolate", lambda: (False, "not root"))
    with pytest.raises(ValueError, match="isolation unavailable: not root"):
        local.LocalSandbox(workers=1, isolate=True)


def test_an_isolated_workers_record_believes_only_its_hello(monkeypatch):
    monkeypatch.setattr(local, "can_isolate", lambda: (True, "bubblewrap"))
    sandbox = local.LocalSandbox(workers=1, isolate=True)
    assert sandbox._isolation({"network_isolated": True, "uid": 200_001}).model_dump() == {
        "network": True, "filesystem": True, "detail": "bubblewrap"}
    assert sandbox._isolation({}).model_dump() == {"network": False, "filesystem": False, "detail": "bubblewrap"}
