"""Warm fork-server for sandboxed Python plots and commands (runs inside both backends).

Standalone on purpose (standard library at import; numpy/pandas/matplotlib/seaborn/plotly loaded
once at start-up, no aesenv imports) because the Docker image runs it without aesenv installed.
Paying the ~2 s of plotting imports once and forking a fresh child per job is what makes an
isolated run cost about as much as an unisolated in-process run.

Protocol on stdin/stdout: frames of a 4-byte big-endian length followed by UTF-8 JSON; bytes are
base64. The worker says {"hello": {...}} once, then answers each {"job": {...}} with
{"result": {...}}. One job at a time: the host keeps a pool of workers.

Each job: a fresh workspace under the scratch root holding the job's files; a child forked from
the clean worker (ahead of time, between jobs: `Child`) that starts its own session, drops to the
job uid (when the worker is root), sets rlimits, clears the environment, and runs the script with
`__name__ == "__main__"` (or execs the command). At the
end, or at the deadline, every process below the worker (a child subreaper, or pid 1 of its own
pid namespace) is killed, and the job's places are wiped once none of them can run again; the
answer goes out then, and the processes, left with the kernel releasing their memory, are reaped
before the next job. A plot's process ends by handing over its result and closing its pipes.

A command job may ask for a probe of a port it serves on (a project's start script): the worker
itself, in the job's network namespace but outside its processes and uid, fetches the listed
paths over HTTP once something answers, and reports status, size and SHA-256 of each body. What
the job prints or writes can never stand in for that answer.
"""

from __future__ import annotations

import argparse
import ast
import base64
import ctypes
import errno
import gc
import hashlib
import io
import json
import linecache
import os
import resource
import select
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
import traceback
import types
import weakref

MAX_RESULT_BYTES = 64 * 1024 * 1024  # figures + metadata a child may send back
MAX_FILES_OUT_BYTES = 32 * 1024 * 1024
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PF_EXITING = 0x4  # /proc/<pid>/task/<tid>/stat flags: the thread is inside exit and runs no user code again
IPC_RMID = 0
MEMORY_POLL_S = 0.02  # how often a job's resident memory is measured
# Address space is only a backstop for allocations faster than the poll: the limit that decides a
# verdict is resident memory, the same on both backends (a 1 GiB file mapping costs nothing).
ADDRESS_SPACE_SLACK_MB = 4096
WIPE_TIMEOUT_S = 60.0
CHILD_PATH = "/usr/local/bin:/usr/bin:/bin"
PROBE_INTERVAL_S = 0.2  # between tries of a port nothing answers on yet
PROBE_REQUEST_S = 5.0  # one request, connect to last byte: a server that trickles gets no longer
PROBE_MAX_PATHS = 64
PROBE_HEAD_BYTES = 2048  # of each body, returned as is (what the first bytes look like)
PROBE_HEADER_BYTES = 64 * 1024

_libc = ctypes.CDLL(None, use_errno=True)


# ---------------------------------------------------------------- framing


def read_frame(stream) -> dict | None:
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return json.loads(stream.read(size))


def write_frame(stream, message: dict) -> None:
    data = json.dumps(message).encode()
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


# ---------------------------------------------------------------- start-up


def warm_imports() -> None:
    """Import the plotting stack and draw the common chart kinds once, so every child inherits
    loaded fonts and filled caches instead of paying for them; then freeze what exists, so the
    children's garbage collector does not touch (and copy) the inherited objects."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.animation  # noqa: F401 - `capture_animations` hooks it in every job
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd
    import plotly.express as px
    import plotly.io  # noqa: F401
    import seaborn as sns

    frame = pd.DataFrame({"group": list("abcd"), "value": [3.0, 1.0, 2.0, 4.0]})
    fig, axes = plt.subplots(2, 3, figsize=(9, 6))
    axes[0, 0].plot(np.arange(10), np.arange(10) ** 2, marker="o", label="line")
    axes[0, 0].legend()
    axes[0, 1].bar(frame["group"], frame["value"], color="tab:orange")
    points = axes[0, 2].scatter(np.arange(10), np.arange(10), c=np.arange(10), cmap="viridis")
    fig.colorbar(points, ax=axes[0, 2])
    axes[1, 0].hist(np.linspace(0, 1, 100), bins=10)
    axes[1, 1].pie([1, 2, 3], labels=["x", "y", "z"], autopct="%1.0f%%")
    sns.barplot(data=frame, x="group", y="value", ax=axes[1, 2])
    for ax in axes.flat:
        ax.set_title("Title", fontweight="bold")
        ax.set_xlabel("x label")
        ax.set_ylabel("y label")
    fig.suptitle("warm-up")
    fig.tight_layout()
    save_svg(fig)
    plt.close("all")
    px.bar(frame, x="group", y="value").to_json()
    gc.collect()
    gc.freeze()


def network_isolated() -> bool:
    """True in a network namespace of our own with no way out: no interface but loopback (which
    reaches only this namespace) and no IPv4 route."""
    import socket

    if [name for _, name in socket.if_nameindex()] != ["lo"]:
        return False
    try:
        with open("/proc/net/route") as f:
            return len(f.read().strip().splitlines()) <= 1
    except OSError:
        return False


# ---------------------------------------------------------------- probing a served port


def http_get(port: int, path: str, max_bytes: int, deadline: float) -> dict | None:
    """GET http://127.0.0.1:<port><path> (HTTP/1.0, no compression asked for) within `deadline`,
    reading at most `max_bytes` of the body: its status, size, SHA-256 and first bytes. None when
    nothing answered (no connection, or closed before a status line)."""
    try:
        conn = socket.create_connection(("127.0.0.1", port), timeout=max(0.05, deadline - time.monotonic()))
    except OSError:
        return None
    raw = bytearray()
    limit = PROBE_HEADER_BYTES + max_bytes
    error = ""
    try:
        conn.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        while len(raw) <= limit:
            left = deadline - time.monotonic()
            if left <= 0:
                error = "no complete answer in time"
                break
            conn.settimeout(left)
            chunk = conn.recv(65536)
            if not chunk:
                break
            raw += chunk
            head_end = raw.find(b"\r\n\r\n")
            if head_end >= 0 and (length := _content_length(raw[:head_end])) is not None \
                    and len(raw) - head_end - 4 >= length:
                break  # all the body it announced: a server keeping the connection open is not waited for
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc}"[:200]
    finally:
        conn.close()
    head_end = raw.find(b"\r\n\r\n")
    if head_end < 0:
        return None if not raw else {"status": None, "size": 0, "sha256": "", "head": "", "truncated": False,
                                     "error": error or "no HTTP header"}
    lines = bytes(raw[:head_end]).decode("latin-1").split("\r\n")
    parts = lines[0].split()
    status = int(parts[1]) if len(parts) > 1 and parts[0].startswith("HTTP/") and _digits(parts[1], 3) else None
    if status is None:
        return None if not raw else {"status": None, "size": 0, "sha256": "", "head": "", "truncated": False,
                                     "error": "not an HTTP answer"}
    body = bytes(raw[head_end + 4:])
    if any(line.lower().replace(" ", "") == "transfer-encoding:chunked" for line in lines[1:]):
        body = _dechunk(body)
    length = _content_length(raw[:head_end])
    if length is not None:
        body = body[:length]
    truncated = len(body) > max_bytes
    body = body[:max_bytes + 1]
    return {"status": status, "size": len(body), "sha256": hashlib.sha256(body).hexdigest(),
            "head": base64.b64encode(body[:PROBE_HEAD_BYTES]).decode(), "truncated": truncated, "error": error}


def _digits(text: str, most: int) -> bool:
    """ASCII digits only (str.isdigit also takes "²", which int() refuses), at most `most` of them."""
    return 0 < len(text) <= most and all("0" <= c <= "9" for c in text)


def _content_length(header: bytes) -> int | None:
    for line in bytes(header).decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length" and _digits(value.strip(), 18):
            return int(value.strip())
    return None


def _dechunk(data: bytes) -> bytes:
    out, at = bytearray(), 0
    while True:
        end = data.find(b"\r\n", at)
        if end < 0:
            return bytes(out)
        digits = data[at:end].split(b";")[0].strip()
        if not digits or len(digits) > 15 or any(c not in b"0123456789abcdefABCDEF" for c in digits):
            return bytes(out)
        size = int(digits, 16)
        if size == 0:
            return bytes(out)
        out += data[end + 2:end + 2 + size]
        at = end + 2 + size + 2


class Prober(threading.Thread):
    """Our own look at the port a job serves on: tries the first path until something answers or
    `wait_s` pass since the job started, then fetches every path once. It runs in the worker, not
    in the job, so the job's processes can neither answer for it nor change what it reports."""

    def __init__(self, spec: dict, started: float) -> None:
        super().__init__(daemon=True)
        self.port = int(spec["port"])
        self.paths = [(str(p), int(n)) for p, n in spec["paths"]][:PROBE_MAX_PATHS]
        self.wait_until = started + float(spec["wait_s"])
        self.stop = threading.Event()
        self.done = threading.Event()
        self.result: dict = {"answered": False, "responses": {}, "error": ""}

    def run(self) -> None:
        try:
            if not self.paths:
                return
            (first, limit), rest = self.paths[0], self.paths[1:]
            answer = None
            while answer is None and not self.stop.is_set() and time.monotonic() < self.wait_until:
                answer = http_get(self.port, first, limit, time.monotonic() + PROBE_REQUEST_S)
                if answer is None or answer["status"] is None:
                    if answer is not None:
                        self.result["error"] = answer["error"]
                    answer = None
                    self.stop.wait(PROBE_INTERVAL_S)
            if answer is None:
                return
            self.result["answered"] = True
            self.result["responses"][first] = answer
            for path, limit in rest:
                if self.stop.is_set():
                    break
                got = http_get(self.port, path, limit, time.monotonic() + PROBE_REQUEST_S)
                self.result["responses"][path] = got or {"status": None, "size": 0, "sha256": "", "head": "",
                                                         "truncated": False, "error": "no answer"}
        except Exception as exc:  # noqa: BLE001 - reported with the job's result, never a crash
            self.result["error"] = f"probe: {exc!r}"[:300]
        finally:
            self.done.set()


class Lingering:
    """After the start script itself ended: whether to stop following the job (the probe is done,
    or no process of the job is left to answer), looking at the processes at most every 0.25 s."""

    def __init__(self, prober: Prober, meter: "JobMemory") -> None:
        self.prober, self.meter, self.next = prober, meter, 0.0

    def over(self) -> bool:
        if self.prober.done.is_set():
            return True
        now = time.monotonic()
        if now < self.next:
            return False
        self.next = now + 0.25
        return not self.meter.alive()


# ---------------------------------------------------------------- the child


def set_limits(limits: dict) -> None:
    mib = 1024 * 1024
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 1))
    resource.setrlimit(resource.RLIMIT_AS, ((limits["memory_mb"] + ADDRESS_SPACE_SLACK_MB) * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["max_file_mb"] * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["max_procs"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def enter_child(workspace: str, uid: int | None, limits: dict, fds: tuple[int, int], keep: int) -> None:
    """Become the sandboxed process: own session, stdio to pipes, no privileges, limits, clean env."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(fds[0], 1)
    os.dup2(fds[1], 2)
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)
    os.chdir(workspace)
    set_limits(limits)
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    os.umask(0o077)
    os.environ.clear()
    # Node's WebAssembly reserves ~10 GB of guard pages per instance, past the address-space
    # backstop (Vite's module lexer is WebAssembly): bounds checks in code instead.
    os.environ.update(HOME=workspace, TMPDIR=workspace, PATH=CHILD_PATH, LANG="C.UTF-8",
                      MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1", NODE_OPTIONS="--disable-wasm-trap-handler")


MAX_MESSAGE_CHARS = 2000  # of an exception's text read for its one-line reason
MAX_REASON_CHARS = 300


def exception_text(exc: BaseException) -> str:
    """'Type: message' on one line, as the model should read it. The whole message, not its first
    line: matplotlib's mathtext errors start with a newline (their first line is empty) and put
    the real cause (ParseFatalException: Unknown symbol: \\foo) last. Lines that only point (^)
    under the line above are dropped. A message whose __str__ raises, or returns something that
    is not text, is named so, as Python does, instead of taking the report down with it."""
    try:
        name = type(exc).__name__
    except BaseException:  # noqa: BLE001 - a metaclass can make even the name raise
        name = "Exception"
    try:
        message = str(exc)[:MAX_MESSAGE_CHARS]
    except BaseException:  # noqa: BLE001 - the user's __str__ may raise anything
        message = "<exception str() failed>"
    lines = [" ".join(line.split()) for line in message.splitlines()]
    text = "; ".join(line for line in lines if line.strip("^~ "))
    return f"{name}: {text}" if text else name


def classify(exc: BaseException) -> tuple[str, str]:
    """(status, reason) for an exception that escaped the user's script."""
    if isinstance(exc, MemoryError):
        return "killed", f"memory limit reached ({exception_text(exc)})"[:MAX_REASON_CHARS]
    if isinstance(exc, BlockingIOError) and exc.errno == errno.EAGAIN:
        return "killed", "process limit reached"
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return "killed", "file size limit reached"
    return "error", exception_text(exc)[:MAX_REASON_CHARS]


def with_context(reason: str, context: str) -> str:
    """The reason and where it happened, cut so that the where survives the length limit."""
    suffix = f" ({context})" if context else ""
    return reason[:MAX_REASON_CHARS - len(suffix)] + suffix


def _ours(tb) -> bool:
    """A frame of this worker (its run_script, the plotly hooks), by module rather than file name:
    under Docker the worker runs from `-c` and its file name is `<string>`, like any exec'd text."""
    return tb.tb_frame.f_globals is globals()


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _drop_our_frames(te: traceback.TracebackException, exc: BaseException | None, seen: set[int]) -> None:
    """Remove the worker's frames from a formatted traceback and from every exception it chains.
    The TracebackException's frames are those of the exception's traceback, in order."""
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    ours = [_ours(tb) for tb in _walk(exc.__traceback__)]
    if len(ours) == len(te.stack):
        te.stack = traceback.StackSummary.from_list([frame for frame, mine in zip(te.stack, ours) if not mine])
    if te.__cause__ is not None:
        _drop_our_frames(te.__cause__, exc.__cause__, seen)
    if te.__context__ is not None:
        _drop_our_frames(te.__context__, exc.__context__, seen)


def format_traceback(exc: BaseException, note: str = "") -> str:
    """The traceback as Python prints it, without our frames, after a note on where it happened.
    Formatting never fails the report: at worst it is the one-line text."""
    try:
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
        _drop_our_frames(te, exc, set())
        text = "".join(te.format())
    except BaseException:  # noqa: BLE001 - a traceback too deep or too big to format
        text = exception_text(exc) + "\n"
    return f"{note}\n{text}" if note else text


def error_line(exc: BaseException) -> int | None:
    """The line of the user's script the exception came from: its innermost frame in main.py (a
    syntax error: the line it points at); None when none of the script was running."""
    if isinstance(exc, SyntaxError) and exc.filename == "main.py":
        return exc.lineno
    line = None
    for tb in _walk(exc.__traceback__):
        if tb.tb_frame.f_code.co_filename == "main.py":
            line = tb.tb_lineno
    return line


def exit_outcome(exc: SystemExit) -> tuple[str, str]:
    """(status, reason) for the script's own sys.exit, with Python's meaning of its argument:
    None or 0 is success, another integer the exit status, anything else is printed to stderr
    and exits with status 1."""
    code = exc.code
    if code is None or (isinstance(code, int) and code == 0):
        return "ok", ""
    if isinstance(code, int):
        return "error", f"exited with code {int(code)}"
    try:
        text = str(code)
    except BaseException:  # noqa: BLE001 - the argument's __str__ is the user's
        text = "<exit message str() failed>"
    try:
        print(text, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - the user may have replaced or closed stderr
        pass
    one_line = "; ".join(part.strip() for part in text.splitlines() if part.strip())
    return "error", f"exited with code 1: {one_line}"[:MAX_REASON_CHARS]


def flush_output() -> None:
    """Flush the script's stdout and stderr (they may be the user's own objects, or closed)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - nothing more can be written to a broken stream
            pass


def cache_in_workspace(workspace: str) -> None:
    """matplotlib resolved its cache directory once, in the worker, where jobs may not write: LaTeX
    output (text.usetex) goes to the job's workspace instead, so a script is told that LaTeX is
    missing rather than about a directory of ours it cannot create."""
    try:
        from matplotlib import texmanager
    except ImportError:
        return
    manager = getattr(texmanager, "TexManager", None)
    if manager is not None and hasattr(manager, "_cache_dir"):
        manager._cache_dir = type(manager._cache_dir)(workspace, ".cache", "matplotlib", "tex.cache")


MAX_VECTOR_MARKS = 50_000  # an artist with more paths, points or vertices is saved as pixels


def save_svg(fig) -> str:
    """The figure as SVG, the one artifact the host draws and describes (the worker saves nothing
    else, and describes nothing: whatever runs here runs beside the script). Texts stay `<text>`
    elements; animated artists (a FuncAnimation's) are saved as they stand, like any other; an
    artist too dense for a vector file (a million-point line, a fine mesh) is saved as an image."""
    import matplotlib

    for artist in fig.findobj():
        if getattr(artist, "get_animated", lambda: False)():
            artist.set_animated(False)
        if _dense(artist):
            artist.set_rasterized(True)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "aesenv", "svg.image_inline": True}):
        fig.savefig(buf, format="svg", dpi=fig.dpi, metadata={"Date": None})
    return buf.getvalue()


def _dense(artist) -> bool:
    try:
        if hasattr(artist, "get_xydata"):
            return len(artist.get_xydata()) > MAX_VECTOR_MARKS
        if hasattr(artist, "get_offsets") and hasattr(artist, "get_paths"):
            return max(len(artist.get_offsets()), len(artist.get_paths())) > MAX_VECTOR_MARKS
    except Exception:  # noqa: BLE001 - an artist that cannot say is saved as it is
        return False
    return False


def run_script(code: str, plotly_figures, workspace: str, received: float | None = None,
               timeout_s: float | None = None, animations=lambda: []) -> dict:
    """Run the script, play the animations it left on open figures (`play_animations`), then save
    every figure it left open. Whatever any of these raises is reported as the user's: its type
    and whole message, the line of main.py it came from, and for a failure after the script
    (a frame of an animation; a mathtext label is only parsed when the figure is drawn) what was
    being done. `timeout_s`: the job's deadline, counted from `received`."""
    import matplotlib.pyplot as plt

    cache_in_workspace(workspace)
    status, reason, tb, line = "ok", "", "", None
    main_module = types.ModuleType("__main__")
    main_module.__file__ = "main.py"
    sys.modules["__main__"] = main_module
    sys.argv = ["main.py"]
    linecache.cache["main.py"] = (len(code), None, code.splitlines(True), "main.py")
    started = time.monotonic()
    try:
        exec(compile(code, "main.py", "exec"), main_module.__dict__)
    except SystemExit as exc:
        status, reason = exit_outcome(exc)
        if status != "ok":
            line = error_line(exc)
    except BaseException as exc:  # noqa: BLE001 - the user's code may raise anything
        status, reason = classify(exc)
        tb, line = format_traceback(exc), error_line(exc)
    flush_output()
    ran = time.monotonic()
    if status == "ok":
        deadline = (received if received is not None else started) + timeout_s if timeout_s else None
        played = play_animations(animations(), deadline)
        if played is not None:
            status, reason, tb, line = played
        flush_output()
    played_at = time.monotonic()
    figures = []
    step = ""
    try:
        for index, number in enumerate(plt.get_fignums(), start=1):
            step = f"figure {index}"
            fig = plt.figure(number)
            figures.append({"name": f"figure-{index}.png", "kind": "matplotlib", "svg": save_svg(fig),
                            "dpi": float(fig.dpi)})
        for index, fig in enumerate(plotly_figures(), start=1):
            step = f"plotly figure {index}"
            figures.append({"name": f"plotly-{index}.json", "kind": "plotly", "plotly_json": fig.to_json()})
    except BaseException as exc:  # noqa: BLE001 - a figure the user broke is the user's error
        if status == "ok":
            where = f"while saving {step}, after the script ended"
            status, reason = classify(exc)
            reason = with_context(reason, where)
            tb = format_traceback(exc, "The script ended without an error; the sandbox then saves every figure"
                                       f" left open, and saving {step} raised:")
            line = error_line(exc)
    flush_output()  # what saving printed (a user's draw callback, warnings): the child leaves by os._exit
    timings = {"script": (ran - started) * 1000, "frames": (played_at - ran) * 1000,
               "save": (time.monotonic() - played_at) * 1000}
    if received is not None:  # from the job's arrival to its first line: becoming the sandboxed process
        timings["setup"] = (started - received) * 1000
    return {"status": status, "reason": reason, "traceback": tb, "error_line": line, "figures": figures,
            "timings_ms": timings}


# An animation is judged as a viewer sees it play, not at the empty state it starts from (a
# FuncAnimation draws nothing until its figure is first shown): its frames are drawn in order, at
# most FRAMES_PER_ANIMATION of them (the picture is then the last one drawn), within
# FRAMES_BUDGET_S for all animations together (checked between frames, never cutting one). A
# frame that does not return within FRAME_HANG_S is hung, and a frame that raises is broken: the
# answer's failure either way (an error of the run: the child may not claim a timeout, which
# only the worker's deadline decides), as a viewer would see it fail.
FRAMES_PER_ANIMATION = 100
FRAMES_BUDGET_S = 3.0
FRAME_HANG_S = 5.0


class FrameHung(BaseException):
    """Raised into a frame function that outlived FRAME_HANG_S (a BaseException, so that an
    `except Exception` in the frame function does not swallow it)."""


def capture_animations():
    """Record the animations the script makes; the returned function gives those still alive (an
    animation nobody keeps a reference to is collected, as matplotlib warns, and never plays)."""
    from matplotlib import animation

    made: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # animation -> the order it was made in
    original_init = animation.Animation.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        made[self] = len(made)

    animation.Animation.__init__ = init

    def alive() -> list:
        if not made:
            return []
        gc.collect()
        return sorted(made.keys(), key=made.__getitem__)

    return alive


def _hung(signum, frame):
    raise FrameHung("an animation frame did not finish in time")


def _bounded(call, deadline: float | None):
    """call() with FRAME_HANG_S (or what is left of the job) as its limit: FrameHung past it."""
    limit = FRAME_HANG_S if deadline is None else max(0.01, min(FRAME_HANG_S, deadline - time.monotonic()))
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return call()
    except FrameHung as exc:
        exc.args = (f"an animation frame did not finish within {limit:.3g} s",)  # keeps the user's traceback
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def play_animations(animations: list, deadline: float | None) -> tuple[str, str, str, int | None] | None:
    """Draw the frames of each animation on a figure still open (its first draw, then frame after
    frame, as matplotlib plays it, without rendering each one: the figure is saved afterwards).
    None when all went well (or there was nothing to play), else the answer's failure as
    (status, reason, traceback, line)."""
    if not animations:
        return None
    import matplotlib.pyplot as plt

    open_figures = {id(plt.figure(number)) for number in plt.get_fignums()}
    playing = [a for a in animations if id(getattr(a, "_fig", None)) in open_figures]
    if not playing:
        return None
    stop_at = time.monotonic() + FRAMES_BUDGET_S
    if deadline is not None:
        stop_at = min(stop_at, deadline - 1.0)
    previous = signal.signal(signal.SIGALRM, _hung)
    try:
        for number, anim in enumerate(playing, start=1):
            which = f"animation {number}" if len(playing) > 1 else "the animation"
            step = "its first draw"
            try:
                with _no_idle_draws(anim._fig.canvas):
                    _bounded(anim._init_draw, deadline)
                    frames = anim.frame_seq
                    for index in range(FRAMES_PER_ANIMATION):
                        if time.monotonic() >= stop_at:
                            break
                        step = f"frame {index}"
                        try:
                            data = _bounded(lambda: next(frames), deadline)
                        except StopIteration:
                            break
                        _bounded(lambda: (anim._pre_draw(data, False), anim._draw_frame(data)), deadline)
            except FrameHung as exc:
                where = f"drawing {step} of {which}, after the script ended"
                return ("error", with_context(f"FrameHung: {exc}", where),
                        format_traceback(exc, _FRAMES_NOTE.format(step=step, which=which, what="did not finish")),
                        error_line(exc))
            except BaseException as exc:  # noqa: BLE001 - a frame function is the user's code
                status, reason = classify(exc)
                return (status, with_context(reason, f"while drawing {step} of {which}, after the script ended"),
                        format_traceback(exc, _FRAMES_NOTE.format(step=step, which=which, what="raised")),
                        error_line(exc))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return None


_FRAMES_NOTE = ("The script ended without an error; the sandbox then plays each animation left on an open "
                "figure, as a viewer would see it, and {step} of {which} {what}:")


class _no_idle_draws:
    """Frames are drawn into the figure's artists only: the canvas is not rendered after each
    (`draw_idle`), since the figure is saved once they are done."""

    def __init__(self, canvas) -> None:
        self.canvas = canvas
        self.own = vars(canvas).get("draw_idle") if hasattr(canvas, "__dict__") else None

    def __enter__(self):
        self.canvas.draw_idle = lambda *args, **kwargs: None
        return self

    def __exit__(self, *exc) -> None:
        if self.own is not None:
            self.canvas.draw_idle = self.own
        else:
            del self.canvas.draw_idle


def unique(items: list) -> list:
    seen: set[int] = set()
    return [x for x in items if not (id(x) in seen or seen.add(id(x)))]


def capture_plotly():
    """Record plotly figures; the returned function gives those shown, or, without any show,
    every figure created (matplotlib's `plt.show` is a no-op under Agg and is silenced too)."""
    import matplotlib.pyplot as plt
    import plotly.basedatatypes as bdt
    import plotly.io as pio

    shown: list = []
    created: list = []
    original_init = bdt.BaseFigure.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        created.append(self)

    def show(fig, *args, **kwargs):
        shown.append(fig)

    bdt.BaseFigure.__init__ = init
    bdt.BaseFigure.show = show
    pio.show = show
    plt.show = lambda *args, **kwargs: None
    return lambda: unique(shown) if shown else [f for f in unique(created) if type(f).__name__ == "Figure"]


def child_plot(code: str, result_fd: int, workspace: str, received: float, timeout_s: float) -> None:
    """Run the job and hand its result over, then close every pipe to the worker before exiting:
    the worker answers on seeing them all closed (`Streams.follow`'s "handed"), while the kernel
    still releases this copy of the warm worker's memory (some 7 ms of a plot's run)."""
    result = run_script(code, capture_plotly(), workspace, received, timeout_s, capture_animations())
    data = json.dumps(result).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(result_fd, view):]
    os.nice(19)  # the release of its memory yields the CPU to whoever reads the answer
    for fd in (result_fd, 1, 2):
        os.close(fd)


# ---------------------------------------------------------------- the job's process


class Child:
    """A copy of the warm worker waiting for one job. The worker forks it ahead of time, once the
    previous job's processes are dead and its files wiped (so it is a copy of the clean worker, as
    a fork at the job's start would be), which takes the fork off the next job's path. Until its
    job comes it runs our code only: it keeps no descriptor of the worker's channel (so a dead
    worker is still seen as one), and dies with the worker."""

    def __init__(self, uid: int | None, warm: bool = False) -> None:
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        self.res_r, res_w = os.pipe()
        job_r, self.job_w = os.pipe()
        warm_r, self.warm_w = os.pipe() if warm else (-1, -1)  # the worker closes it: "warm up now"
        worker = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:
            await_job(worker, uid, warm_r, job_r, (out_w, err_w), res_w)  # never returns
        for fd in (out_w, err_w, res_w, job_r, warm_r):
            if fd >= 0:
                os.close(fd)

    def warm_up(self) -> None:
        """Let it draw its warm-up figure now (the worker has been idle: see `Worker.idle`)."""
        if self.warm_w >= 0:
            os.close(self.warm_w)
            self.warm_w = -1

    def start(self, workspace: str, job: dict) -> None:
        """Hand the child its job (OSError when it is gone: then nothing of it has run)."""
        task = {"workspace": workspace, "kind": job["kind"], "limits": job["limits"],
                "code": job.get("code", ""), "argv": job.get("argv", [])}
        try:
            view = memoryview(json.dumps(task).encode())
            while view:
                view = view[os.write(self.job_w, view):]
        finally:
            for fd in (self.job_w, self.warm_w):  # the job first: with it there, no warm-up
                if fd >= 0:
                    os.close(fd)
            self.job_w = self.warm_w = -1

    def abandon(self) -> None:
        """Close our ends of a child that will not run a job (`stop_all` reaps it)."""
        for fd in (self.out_r, self.err_r, self.res_r, self.job_w, self.warm_w):
            if fd >= 0:
                os.close(fd)
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


PRE_JOB = struct.Struct(">Q")  # microseconds of CPU a child spent before its job
# The spare warms up only once the worker has waited this long for a job: jobs that come back to
# back (a batch) find it idle, rather than wait for a warm-up that costs more than it saves.
IDLE_BEFORE_WARM_S = 0.005


def warm_child(job_r: int | None = None) -> None:
    """Draw a small figure in a child forked ahead of its job, while the worker is idle. A
    fork shares the worker's memory until either side writes to it, and drawing writes to much of
    what it touches (reference counts, caches), so a fresh child's first figure pays thousands of
    page copies: some 20 ms, paid here, between jobs, so that the job draws about as fast as the
    warm worker itself would. A job that comes meanwhile (on `job_r`) ends it at the next of its
    steps (~45 ms in all, the longest ~25). The fonts it opened are let go again (the job starts
    with no open file but its pipes), as a fork leaves them: reloading one costs about a ms."""
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib import font_manager

    def steps():  # each `yield` is a point where a job that came ends the warm-up
        yield
        # Every built-in plot task reads a CSV: a fresh copy's first read costs ~5 ms more than later ones.
        pd.read_csv(io.StringIO("label,value\na,1.5\nb,2\n"))
        yield
        fig, ax = plt.subplots(figsize=(2, 2))
        yield
        ax.plot([0, 1], [1, 0])
        ax.set_title("warm", fontweight="bold")
        yield
        save_svg(fig)

    try:
        for _ in steps():
            if job_r is not None and select.select([job_r], [], [], 0)[0]:
                break
    finally:
        plt.close("all")
        font_manager._get_font.cache_clear()  # what matplotlib itself does in a forked child


def open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def warming_is_clean() -> bool:
    """Whether `warm_child` leaves no file open (with another matplotlib it might: the job's
    process closes every descriptor, and a cached font on one would fail to draw); tried once, in
    a throwaway child, before any spare is warmed."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            before = open_fds()
            warm_child()
            code = 0 if open_fds() <= before else 1
        except BaseException:  # noqa: BLE001 - any failure means: do not warm
            pass
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def close_all_but(keep: set[int]) -> None:
    """Close every descriptor but `keep` (never an empty range: closerange(0, 0) closes them all)."""
    low = 0
    for fd in sorted(keep):
        if low < fd:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)


def await_job(worker: int, uid: int | None, warm_r: int, job_r: int, fds: tuple[int, int], res_w: int) -> None:
    """The forked child: wait for the job (drawing once meanwhile if the worker says so first by
    closing `warm_r`'s other end: `warm_child`), then become the sandboxed process and run it.
    Before any of the job's code runs it puts the CPU time it spent waiting at the head of the
    result pipe (`PRE_JOB`): not the job's."""
    exit_code = 1
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != worker:  # the worker died before we asked to die with it
            os._exit(1)
        close_all_but({0, 1, 2, job_r, *fds, res_w, warm_r} - {-1})
        if warm_r >= 0 and job_r not in select.select([job_r, warm_r], [], [])[0]:
            try:
                warm_child(job_r)
            except Exception:  # noqa: BLE001 - a failed warm-up is no reason to lose the job
                pass
        with os.fdopen(job_r, "rb") as f:
            task = json.loads(f.read())
        received = time.monotonic()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        os.write(res_w, PRE_JOB.pack(round((usage.ru_utime + usage.ru_stime) * 1e6)))
        exit_code = 0 if task["kind"] == "plot" else 127
        enter_child(task["workspace"], uid, task["limits"], fds, res_w)
        if task["kind"] == "plot":
            child_plot(task["code"], res_w, task["workspace"], received, float(task["limits"]["timeout_s"]))
        else:
            for sig in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            os.execvp(task["argv"][0], task["argv"])
    except BaseException:  # noqa: BLE001 - report and leave without running our cleanup
        exit_code = exit_code or 1
        traceback.print_exc()
        sys.stderr.flush()
    finally:
        os._exit(exit_code)


# ---------------------------------------------------------------- the worker


class Clock:
    """Milliseconds spent in each stage of a job, each stage ending where the next begins."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.stages: dict[str, float] = {}

    def mark(self, stage: str) -> None:
        now = time.monotonic()
        self.stages[stage] = round(self.stages.get(stage, 0.0) + (now - self.last) * 1000, 3)
        self.last = now


class Worker:
    def __init__(self, args: argparse.Namespace) -> None:
        self.scratch = args.scratch
        self.wipe = [args.scratch, *args.wipe]
        self.keep = {os.path.join(args.scratch, os.path.relpath(path, args.scratch).split(os.sep)[0])
                     for path in args.keep}
        self.private_ipc = args.private_ipc
        self.uid = args.uid if os.getuid() == 0 else None
        self.jobs = 0
        self.unclean = ""  # what the last job left that could not be removed: the worker must go
        self.spare: Child | None = None  # forked ahead for the next job
        self.last_kind = "plot"
        warm_imports()
        self.warm = warming_is_clean()
        if os.getpid() != 1:
            _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def run_job(self, job: dict) -> dict:
        """The job's result, with `timings_ms`: where the worker's time went, stage by stage (the
        benchmark's breakdown of what a sandboxed run costs over running the script in place)."""
        self.jobs += 1
        self.last_kind = job.get("kind")
        workspace = os.path.join(self.scratch, f"job-{self.jobs}")
        self.clock = clock = Clock()
        result: dict = {}
        try:
            try:
                self.prepare(workspace, job)
            except (OSError, ValueError) as exc:
                result = {"status": "infra_error", "reason": f"workspace: {exc}"}
                return result
            clock.mark("prepare")
            result = self.execute(workspace, job)
            return result
        finally:
            if self.spare is not None:  # the workspace failed before the spare took the job
                self.spare.abandon()
                self.spare = None
            self.stop_all()
            self.unclean = self.clean_up()
            clock.mark("clean")
            result["timings_ms"] = {**clock.stages, **result.get("timings_ms", {})}

    def prepare(self, workspace: str, job: dict) -> None:
        os.mkdir(workspace, 0o700)
        files = {name: base64.b64decode(data) for name, data in job.get("files", {}).items()}
        if job["kind"] == "plot":
            files.setdefault("main.py", job["code"].encode())
        for name, data in files.items():
            path = os.path.normpath(os.path.join(workspace, name))
            if os.path.isabs(name) or not path.startswith(workspace + os.sep):
                raise ValueError(f"file name outside the workspace: {name!r}")
            os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        for name, target in job.get("links", {}).items():
            path = os.path.normpath(os.path.join(workspace, name))
            if os.path.isabs(name) or not path.startswith(workspace + os.sep) or os.path.lexists(path):
                raise ValueError(f"link name outside the workspace or taken: {name!r}")
            os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
            os.symlink(target, path)
        if self.uid is not None:
            for root, dirs, names in os.walk(workspace):
                for name in [root] + [os.path.join(root, n) for n in dirs + names]:
                    os.lchown(name, self.uid, self.uid)

    def prefork(self) -> None:
        """Fork the next job's process now, between jobs (see `Child`); called only once no process
        of the last job can act again (`stop_all`) and its places are wiped. A failed fork is
        retried at the job. It can warm itself for a plot when the last job was one (a command
        job execs: nothing to warm), when told to (`idle`)."""
        if self.spare is None and not self.unclean:
            try:
                self.spare = Child(self.uid, warm=self.warm and self.last_kind == "plot")
            except OSError:
                self.spare = None

    def idle(self, channel) -> None:
        """Between jobs: if no job comes within IDLE_BEFORE_WARM_S, the spare warms up."""
        if self.spare is not None and not select.select([channel], [], [], IDLE_BEFORE_WARM_S)[0]:
            self.spare.warm_up()

    def start_child(self, workspace: str, job: dict) -> Child:
        """The job's process: the spare forked ahead, or (none, or it died) one forked now."""
        child, self.spare = self.spare, None
        if child is not None:
            try:
                child.start(workspace, job)
                return child
            except OSError:
                child.abandon()
        child = Child(self.uid)
        child.start(workspace, job)
        return child

    def execute(self, workspace: str, job: dict) -> dict:
        limits = job["limits"]
        started = time.monotonic()
        child = self.start_child(workspace, job)
        pid = child.pid
        self.clock.mark("start")
        streams = Streams(child.out_r, child.err_r, child.res_r, limits["max_output_bytes"])
        meter = JobMemory(pid, self.uid, limits["memory_mb"] << 10)
        deadline = started + limits["timeout_s"]
        prober = Prober(job["probe"], started) if job.get("probe") else None
        if prober is None:
            outcome = streams.follow(pid, deadline, meter, handover=job["kind"] == "plot")
        else:
            prober.start()
            try:
                outcome = streams.follow(pid, deadline, meter, stop=prober.done.is_set)
                if outcome == "reaped" and not prober.done.is_set():
                    # The start script may leave its server running in the background: probe on
                    # while any process of the job lives.
                    rest = streams.follow(None, deadline, meter, stop=Lingering(prober, meter).over)
                    if rest != "probed":
                        outcome = rest
            finally:
                prober.stop.set()
                prober.join()
        self.clock.mark("run")
        self.stop_all()
        streams.drain()
        result = {"stdout": streams.text(1), "stderr": streams.text(2),
                  "stdout_truncated": streams.truncated[1], "stderr_truncated": streams.truncated[2],
                  "duration_ms": (time.monotonic() - started) * 1000}
        raw = streams.result
        waited_us = PRE_JOB.unpack(raw[:PRE_JOB.size])[0] if len(raw) >= PRE_JOB.size else 0
        result["cpu_ms"] = max(0.0, streams.cpu_ms - waited_us / 1000)
        result.update(self.outcome(job, outcome, streams, raw[PRE_JOB.size:], limits))
        if prober is not None:
            result["probe"] = prober.result
        if job["kind"] == "plot":
            result["imported"] = imported_modules(job["code"])
        else:
            result["files_out"], result["files_skipped"] = collect_files(workspace)
        self.clock.mark("collect")
        return result

    def outcome(self, job: dict, outcome: str, streams: "Streams", raw: bytes, limits: dict) -> dict:
        if outcome == "probed":  # we ended a serving job once its port was probed: not its failure
            return {"status": "ok", "exit_code": None, "reason": ""}
        if outcome == "timeout":
            return {"status": "timeout", "reason": f"deadline of {limits['timeout_s']} s reached"}
        if outcome == "memory":
            return {"status": "killed", "reason": f"memory limit of {limits['memory_mb']} MB reached (resident)"}
        if outcome.startswith("overflow:"):
            return {"status": "killed", "reason": f"{outcome[9:]} exceeded its size limit"}
        if outcome == "handed":  # a plot that gave its result (how its process then ends is not the job's)
            return checked_result(streams.handed)
        code = os.waitstatus_to_exitcode(streams.wait_status)
        if code < 0:
            sig = -code
            if sig == signal.SIGXCPU:
                return {"status": "killed", "reason": f"cpu time limit of {limits['cpu_s']} s reached"}
            if sig == signal.SIGKILL:
                return {"status": "killed", "reason": "killed (cpu time or memory limit)"}
            return {"status": "error", "reason": f"crashed with signal {signal.Signals(sig).name}"}
        if job["kind"] == "command":
            return {"status": "ok" if code == 0 else "error", "exit_code": code,
                    "reason": "" if code == 0 else f"exit code {code}"}
        if not raw:
            return {"status": "ok" if code == 0 else "error",
                    "reason": "the script ended the process itself" if code == 0 else f"exit code {code}"}
        return child_result(raw)

    def stop_all(self) -> None:
        """Kill every process below us (the job and anything it left behind) and wait until none
        can act again: each reaped, or every one of its threads inside exit, where only the
        kernel's release of its memory is left. That is all cleaning the job's places needs; the
        release runs on while the worker answers, and `kill_all` reaps them before the next job."""
        for attempt in range(1000):
            if all(exiting(pid) for pid in self.kill_below()):
                return
            time.sleep(backoff(attempt))

    def kill_all(self, keep: int | None = None) -> None:
        """Kill and reap every process below us but `keep` (the spare already forked for the next
        job, while these released their memory)."""
        for attempt in range(1000):
            if not self.kill_below(keep):
                return
            time.sleep(backoff(attempt))

    @staticmethod
    def kill_below(keep: int | None = None) -> list[int]:
        """SIGKILL every process below us but `keep` (orphans of a job are re-parented to us, as
        subreaper or pid 1), reap those that ended, and return the rest, as they are now."""
        for pid in subtree(os.getpid()):
            if pid != keep:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        return [pid for pid in subtree(os.getpid()) if pid != keep]

    def clean_up(self) -> str:
        """Empty every place a job could write (workspaces, /dev/shm, message queues, SysV IPC):
        what a plot leaves (a workspace of a few files) with a few system calls, anything else
        with coreutils' rm, which no depth, name or mode defeats; '' when clean, else what is left.
        Either way, what is left afterwards is what is reported."""
        self.remove_ipc_objects()
        left = []
        for root in self.wipe:
            if not os.path.isdir(root):
                continue
            try:
                there = [os.path.join(root, n) for n in os.listdir(root) if os.path.join(root, n) not in self.keep]
            except OSError:
                there = None
            if there is not None and remove_small(there, os.lstat(root).st_dev):
                continue
            command = ["find", root, "-mindepth", "1", "-maxdepth", "1"]
            for kept in sorted(self.keep):
                command += ["!", "-path", kept]
            command += ["-exec", "rm", "-rf", "--one-file-system", "--", "{}", "+"]
            try:
                subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=WIPE_TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired) as exc:
                left.append(f"{root}: {type(exc).__name__}")
            try:
                left += [os.path.join(root, n) for n in os.listdir(root) if os.path.join(root, n) not in self.keep]
            except OSError as exc:
                left.append(f"{root}: {exc.strerror}")
        if self.private_ipc:
            left += [f"SysV {kind} objects" for kind, ids in ipc_objects().items() if ids]
        return ", ".join(ascii(x) for x in left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")

    def remove_ipc_objects(self) -> None:
        """Remove the SysV message queues, semaphores and shared memory jobs created; only in our
        own IPC namespace (elsewhere they would be the host user's). Done as the job uid, which owns
        them: removing another's needs CAP_SYS_ADMIN, which the worker does not keep."""
        objects = ipc_objects() if self.private_ipc else {}
        if not any(objects.values()):
            return
        pid = os.fork()
        if pid == 0:
            try:
                if self.uid is not None:
                    os.setgroups([])
                    os.setgid(self.uid)
                    os.setuid(self.uid)
                for ident in objects["msg"]:
                    _libc.msgctl(ident, IPC_RMID, None)
                for ident in objects["shm"]:
                    _libc.shmctl(ident, IPC_RMID, None)
                for ident in objects["sem"]:
                    _libc.semctl(ident, 0, IPC_RMID)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)


SMALL_TREE_ENTRIES = 256  # what remove_small removes itself; more is left to rm


def remove_small(paths: list[str], device: int) -> bool:
    """Remove these files and directory trees ourselves if they are small and plain (a plot's
    workspace: a few files), which spares a `find`/`rm` process per job; False at the first thing
    that is not (many entries, a deep tree, another filesystem, a directory we cannot read or
    remove): rm is then run on what is left. Every job process is dead by now: nothing moves."""
    budget = SMALL_TREE_ENTRIES
    stack = [(path, False) for path in paths]
    while stack:
        path, emptied = stack.pop()
        try:
            if emptied:
                os.rmdir(path)
                continue
            budget -= 1
            info = os.lstat(path)
            if budget < 0 or info.st_dev != device:
                return False
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(path)
                continue
            stack.append((path, True))
            with os.scandir(path) as entries:
                stack += [(entry.path, False) for entry in entries]
        except OSError:
            return False
    return True


def ipc_objects() -> dict[str, list[int]]:
    """The ids of this IPC namespace's SysV objects (second column of /proc/sysvipc/*)."""
    found: dict[str, list[int]] = {}
    for kind in ("msg", "sem", "shm"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                found[kind] = [int(line.split()[1]) for line in f.readlines()[1:] if line.strip()]
        except (OSError, ValueError, IndexError):
            found[kind] = []
    return found


def json_object(raw: bytes) -> dict | None:
    """`raw` read as one complete JSON object, or None (a result cut short by a kill is not one)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def child_result(raw: bytes) -> dict:
    """The report of a child that exited, as its result pipe holds it."""
    return checked_result(json_object(raw))


def checked_result(data: dict | None) -> dict:
    """The child's report, checked: it shares a process with the user's code, so it can claim a
    user-side status (ok, error, killed) and carry figures, never an infra error or a timeout."""
    forged = {"status": "error", "reason": "the script wrote over its result channel"}
    if data is None or data.get("status") not in ("ok", "error", "killed"):
        return forged
    figures = data.get("figures")
    if not isinstance(figures, list) or not all(valid_figure(f) for f in figures):
        return forged
    line = data.get("error_line")
    timings = data.get("timings_ms") if isinstance(data.get("timings_ms"), dict) else {}
    return {"status": data["status"], "reason": str(data.get("reason", ""))[:300],
            "traceback": str(data.get("traceback", "")), "figures": figures,
            "error_line": line if type(line) is int and line > 0 else None,
            # the script's own account of its time (informational: it could say anything here)
            "timings_ms": {f"run.{key}": float(timings[key]) for key in ("setup", "script", "frames", "save")
                           if type(timings.get(key)) in (int, float) and 0 <= timings[key] < 1e9}}


def valid_figure(figure: object) -> bool:
    return (isinstance(figure, dict) and set(figure) <= {"name", "kind", "svg", "dpi", "plotly_json"}
            and isinstance(figure.get("name"), str) and figure.get("kind") in ("matplotlib", "plotly")
            and all(isinstance(figure.get(k), (str, type(None))) for k in ("svg", "plotly_json"))
            and (figure.get("dpi") is None or type(figure.get("dpi")) in (int, float)))


def stat_fields(pid: int | str) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name, which may contain spaces and
    parentheses (so they start after the last ")"): [1] ppid, [3] session. OSError once the
    process is gone. The same as aesenv.procfs.stat_fields, which this standalone script
    cannot import (it is shipped alone: a bound file, or `python -c` source)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def backoff(attempt: int) -> float:
    """Seconds between polls for killed processes: a killed process enters exit within
    microseconds, and releasing a copy of the warm worker's memory takes milliseconds."""
    return min(0.002, 0.0001 * 2 ** attempt)


def subtree(root: int) -> list[int]:
    """Every live process below `root` (children, theirs, ...), read from /proc: what
    aesenv.procfs.descendants gives, which this standalone script cannot import."""
    below: dict[str, list[str]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                below.setdefault(stat_fields(name)[1], []).append(name)
            except OSError:
                continue
    found, stack = [], [str(root)]
    while stack:
        for child in below.get(stack.pop(), []):
            found.append(int(child))
            stack.append(child)
    return found


def exiting(pid: int) -> bool:
    """Whether the process runs no user code again: gone, a zombie, or every thread flagged as
    inside exit by the kernel (after a SIGKILL, or the job's own exit)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for tid in threads:
        try:
            fields = stat_fields(f"{pid}/task/{tid}")
        except OSError:
            continue
        if fields[0] not in ("Z", "X") and not int(fields[6]) & PF_EXITING:
            return False
    return True


def process_cpu_ms(pid: int) -> float:
    """CPU time of a process not reaped yet: its live threads' (schedstat, in nanoseconds), which
    is what wait4 would report less threads that already ended; without schedstat, the process's
    user and system time from its stat, in clock ticks (coarse, but every thread's)."""
    total = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
        for tid in threads:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e6
    except (OSError, ValueError, IndexError):
        try:
            fields = stat_fields(pid)
            return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0


class Streams:
    """Reads a job's stdout, stderr and result pipes until it exits, overflows or times out."""

    def __init__(self, out_fd: int, err_fd: int, res_fd: int, max_output: int) -> None:
        self.fds = {out_fd: 1, err_fd: 2, res_fd: 3}
        self.data = {1: bytearray(), 2: bytearray(), 3: bytearray()}
        self.truncated = {1: False, 2: False}
        self.limits = {1: max_output, 2: max_output, 3: MAX_RESULT_BYTES}
        self.wait_status = 0
        self.cpu_ms = 0.0  # the job process's own CPU time (its children not included)
        self.handed: dict | None = None  # the result a plot handed over, decoded once

    def follow(self, pid: int | None, deadline: float, meter: "JobMemory", stop=None, handover: bool = False) -> str:
        """Read the job's pipes until its process `pid` ends ("reaped"; None: until `stop`), a
        limit is hit, the deadline passes, or `stop()` says we are done with it ("probed"). With
        `handover` (a plot), also until the job has given a whole result and every copy of every pipe
        is closed ("handed"): all it will ever say is said, so the worker need not wait for the exit.
        (A process killed while writing its result leaves a cut one, and is reaped as before.)"""
        pidfd = os.pidfd_open(pid) if pid is not None else None
        watched = [] if pidfd is None else [pidfd]
        next_poll = 0.0
        try:
            while True:
                if stop is not None and stop():
                    return "probed"
                now = time.monotonic()
                if now >= next_poll:
                    if meter.kib() > meter.limit_kib:
                        return "memory"
                    # A job's own processes can crowd the worker's CPU (a fork bomb under a
                    # container's CPU quota): polling never takes more than a tenth of the time.
                    cost = time.monotonic() - now
                    now += cost
                    next_poll = now + max(MEMORY_POLL_S, 10 * cost)
                remaining = deadline - now
                if remaining <= 0:
                    return "timeout"
                ready, _, _ = select.select([*self.fds, *watched], [], [], min(remaining, next_poll - now))
                for fd in ready:
                    if fd == pidfd:
                        continue
                    overflow = self.read(fd)
                    if overflow:
                        return overflow
                if handover and pid is not None and not self.fds:
                    self.handed = json_object(self.data[3][PRE_JOB.size:])
                    if self.handed is not None:
                        self.cpu_ms = process_cpu_ms(pid)
                        return "handed"
                if pidfd is not None and pidfd in ready:
                    _, self.wait_status, usage = os.wait4(pid, 0)
                    self.cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000
                    return "reaped"
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def read(self, fd: int) -> str:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            os.close(fd)
            del self.fds[fd]
            return ""
        kind = self.fds[fd]
        buf = self.data[kind]
        room = self.limits[kind] - len(buf)
        buf += chunk[:max(room, 0)]
        if len(chunk) > room:
            if kind == 3:
                return f"overflow:figures and metadata ({MAX_RESULT_BYTES} bytes)"
            self.truncated[kind] = True
            return f"overflow:{'stdout' if kind == 1 else 'stderr'} ({self.limits[kind]} bytes)"
        return ""

    def drain(self) -> None:
        """After every writer is dead: read what is left up to each limit, then close."""
        for fd in list(self.fds):
            os.set_blocking(fd, False)
            try:
                while fd in self.fds and not self.read(fd):
                    pass
            except BlockingIOError:
                pass
            if fd in self.fds:
                os.close(fd)
                del self.fds[fd]

    def text(self, kind: int) -> str:
        return self.data[kind].decode("utf-8", "replace")

    @property
    def result(self) -> bytes:
        return bytes(self.data[3])


class JobMemory:
    """What a job's processes hold in memory of their own, in KiB: private resident pages (what
    the kernel would charge a cgroup for them), so pages shared with the warm worker and file
    mappings never touched do not count. The job's processes are those of its uid (a job cannot
    leave it) or, without a uid switch, of its session."""

    def __init__(self, pid: int, uid: int | None, limit_kib: int) -> None:
        self.pid, self.uid, self.limit_kib = pid, uid, limit_kib
        self.me = os.getpid()

    def kib(self) -> int:
        """Resident pages bound what is private: only when they exceed the limit are the
        (costlier) private counts read."""
        ours = list(self._statuses())
        resident = sum(_kib(status, "VmRSS") for _, status in ours)
        if resident <= self.limit_kib:
            return resident
        return sum(self._private_kib(pid, status) for pid, status in ours)

    def alive(self) -> bool:
        """Whether any process of the job is still running (zombies left waiting do not count)."""
        return any(not status.get("State", "").strip().startswith("Z") for _, status in self._statuses())

    def _statuses(self):
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == self.me:
                continue
            try:
                with open(f"/proc/{pid}/status") as f:
                    status = dict(row.split(":", 1) for row in f.read().splitlines() if ":" in row)
                if self.uid is not None:
                    if int(status["Uid"].split()[0]) != self.uid:
                        continue
                elif int(stat_fields(pid)[3]) != self.pid:
                    continue
            except (OSError, ValueError, IndexError, KeyError):
                continue
            yield pid, status

    @staticmethod
    def _private_kib(pid: str, status: dict) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                rows = f.read().splitlines()
            return sum(int(row.split()[1]) for row in rows if row.startswith(("Private_Clean:", "Private_Dirty:")))
        except (OSError, ValueError, IndexError):  # no right to read smaps: resident anonymous + shared memory
            return _kib(status, "RssAnon") + _kib(status, "RssShmem")


def _kib(status: dict, key: str) -> int:
    try:
        return int(status.get(key, "0 kB").split()[0])
    except (ValueError, IndexError):
        return 0


def imported_modules(code: str) -> list[str]:
    """Top-level modules imported by the script's import statements."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module.split(".")[0])
    return sorted(set(names))


def collect_files(workspace: str) -> tuple[dict[str, str], dict[str, str]]:
    """Regular files left in the workspace, base64 within a total size budget, and what was not
    copied back (links, FIFOs, sockets, devices, files past the budget) with the reason."""
    files: dict[str, str] = {}
    skipped: dict[str, str] = {}
    budget = MAX_FILES_OUT_BYTES
    for root, dirs, names in os.walk(workspace):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, workspace)
            try:
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode):
                    skipped[relative] = "a symbolic link"
                    continue
                if not stat.S_ISREG(info.st_mode):
                    skipped[relative] = "not a regular file (a FIFO, socket or device)"
                    continue
                if info.st_size > budget:
                    skipped[relative] = f"over the {MAX_FILES_OUT_BYTES >> 20} MiB copied back per run"
                    continue
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                with os.fdopen(fd, "rb") as f:
                    data = f.read(budget)
            except OSError as exc:
                skipped[relative] = f"unreadable ({exc.strerror})"
                continue
            budget -= len(data)
            files[relative] = base64.b64encode(data).decode()
    return files, skipped


def main() -> None:
    parser = argparse.ArgumentParser(description="aesenv sandbox worker")
    parser.add_argument("--scratch", required=True, help="workspace root (wiped after each job)")
    parser.add_argument("--wipe", action="append", default=[], help="more directories wiped after each job")
    parser.add_argument("--uid", type=int, default=None, help="uid (and gid) jobs run as, when we are root")
    parser.add_argument("--private-ipc", action="store_true",
                        help="we have an IPC namespace of our own: remove jobs' SysV objects after each job")
    parser.add_argument("--keep", action="append", default=[],
                        help="a read-only mount inside the scratch root (a venv under /tmp): never wiped")
    args = parser.parse_args()
    protocol_in = os.fdopen(os.dup(0), "rb")
    protocol_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(2, 1)  # stray prints from libraries go to our stderr, never into the protocol
    os.makedirs(args.scratch, exist_ok=True)
    os.chmod(args.scratch, 0o711)  # jobs write only in their own workspace (Docker makes a tmpfs /tmp 1777)
    worker = Worker(args)
    write_frame(protocol_out, {"hello": {
        "pid1": os.getpid() == 1, "uid": worker.uid, "network_isolated": network_isolated(),
        "python": sys.version.split()[0]}})
    worker.prefork()
    worker.idle(protocol_in)
    while (message := read_frame(protocol_in)) is not None:
        try:
            result = worker.run_job(message["job"])
        except Exception as exc:  # noqa: BLE001 - a worker bug is an infra error, not a crash
            result = {"status": "infra_error", "reason": f"worker: {exc!r}"[:500]}
        if worker.unclean:
            result = {**result, "status": "error", "replace_worker": True,
                      "reason": f"the job left what the sandbox could not remove ({worker.unclean})"[:500]}
        write_frame(protocol_out, {"result": result})
        if worker.unclean:
            return  # never reused: the host starts a fresh worker
        del message, result  # the next job's process must not find this one's answer in our memory
        # The next job's process is forked while the last job's release their memory, and those
        # are reaped before the next job is read.
        worker.prefork()
        worker.kill_all(keep=worker.spare.pid if worker.spare is not None else None)
        worker.idle(protocol_in)


if __name__ == "__main__":
    main()
