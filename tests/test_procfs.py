"""/proc readings the benchmarks report: the CPU a process tree used and how busy each core was."""

import os
import subprocess
import sys
import time

from aesenv.procfs import CpuUse, core_jiffies, tree_cpu_seconds

SPIN = "import time\nwhile time.process_time() < 0.4: pass"


def test_core_jiffies_has_one_row_per_core_and_busy_never_exceeds_total():
    cores = core_jiffies()
    assert len(cores) == os.cpu_count()
    assert all(0 <= busy <= total for busy, total in cores)


def test_the_cpu_of_a_child_that_exited_counts_once_in_the_tree():
    before = tree_cpu_seconds(os.getpid())
    with CpuUse() as use:
        subprocess.run([sys.executable, "-c", SPIN], check=True)
    report = use.report()
    assert tree_cpu_seconds(os.getpid()) - before >= 0.35
    assert 0.35 <= report["own_cpu_s"] < 0.35 + report["wall_s"] * os.cpu_count()
    assert len(report["cores_busy_pct"]) == os.cpu_count()
    assert all(0.0 <= pct <= 100.0 for pct in report["cores_busy_pct"])


def test_a_live_child_counts_in_the_tree():
    child = subprocess.Popen([sys.executable, "-c", SPIN + "\nimport sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        for _ in range(200):
            if tree_cpu_seconds(child.pid) >= 0.35:
                break
            time.sleep(0.05)
        assert tree_cpu_seconds(os.getpid()) >= tree_cpu_seconds(child.pid) >= 0.35
    finally:
        child.kill()
        child.wait()
