"""`ScoringActor.pin`: an actor, every thread of it and what it starts later, on the cores it is
given (a one-core node simulated on this machine, `bench scale --pin`)."""

import os
import subprocess
import sys

import pytest

CHILD = """
import asyncio, subprocess, threading, time
from aesenv.rewards.service import ScoringActor
threading.Thread(target=time.sleep, args=(5,), daemon=True).start()  # a thread started before the pin
actor = ScoringActor({})
print(asyncio.run(actor.pin([0])))
print(subprocess.run(["grep", "Cpus_allowed_list", "/proc/self/status"], capture_output=True, text=True).stdout.split()[-1])
import pathlib
print(sorted({pathlib.Path(f"/proc/self/task/{t}/status").read_text().split("Cpus_allowed_list:")[1].split()[0]
              for t in __import__("os").listdir("/proc/self/task")}))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="pinning to one core shows only with two or more")
def test_pin_holds_every_thread_and_later_children_to_the_cores_given():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True,
                         timeout=120).stdout.split("\n")
    assert out[0] == "[0]"
    assert out[1] == "0"  # a process started after the pin (the browser, the driver) inherits it
    assert out[2] == "['0']"  # no thread of the actor left on the other cores
