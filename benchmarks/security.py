"""Security probes: what a hostile answer can do to an RL cluster running aesenv.

Each probe plays an attacker (a plot script or a page) against a sandbox backend or the browser
and checks the outcome from the host: did anything leave (host files, environment, network),
did state pass between jobs, did a limit fail, did the answer's own fault come back as a masked
`infra_error` or forged evidence earn a score, did anything hang or crash. It prints

    probe  backend  status  verdict  detail

and exits non-zero on any verdict but `ok`. Traffic goes only to listeners this process opens on
127.0.0.1.

    aesenv bench security --out runs/security [--backends local,docker] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from aesenv.sandbox import RunStatus, SandboxLimits, make_sandbox

SECRET = "aesenv-security-probe-secret-51c2"
REPO = Path(__file__).resolve().parents[1]
QUICK = SandboxLimits(timeout_s=8)
PROBE_BUDGET_S = 90.0  # past this a probe is a hang


@dataclass
class Outcome:
    probe: str
    backend: str
    status: str
    verdict: str  # ok | leak | poisoned | limit | fake | hang | crash
    detail: str = ""
    seconds: float = 0.0


class Host:
    """What the probes look for from outside: listeners, a canary beside the checkout, a secret."""

    def __init__(self) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen()
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        for s in (self.tcp, self.udp):
            s.setblocking(False)
        self.canary = REPO.parent / f"aesenv-security-canary-{os.getpid()}"
        self.canary.mkdir(exist_ok=True)
        (self.canary / "secret.txt").write_text(SECRET)
        os.environ["AESENV_SECURITY_SECRET"] = SECRET

    @property
    def ports(self) -> tuple[int, int]:
        return self.tcp.getsockname()[1], self.udp.getsockname()[1]

    def received(self) -> list[str]:
        got = []
        try:
            conn, peer = self.tcp.accept()
            got.append(f"tcp from {peer}")
            conn.close()
        except BlockingIOError:
            pass
        try:
            got.append(f"udp {self.udp.recvfrom(2048)[0][:16]!r}")
        except BlockingIOError:
            pass
        return got

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()
        (self.canary / "secret.txt").unlink(missing_ok=True)
        self.canary.rmdir()


Probe = Callable[..., Awaitable[tuple[str, str, str]]]  # → (status, verdict, detail)
SANDBOX_PROBES: dict[str, Probe] = {}
BROWSER_PROBES: dict[str, Probe] = {}


def probe(table: dict[str, Probe], name: str):
    def wrap(fn: Probe) -> Probe:
        if name in table:
            raise ValueError(f"probe {name!r} registered twice")
        table[name] = fn
        return fn
    return wrap


def _leak_if(found: bool, status: str, detail: str) -> tuple[str, str, str]:
    return status, "leak" if found else "ok", detail


# ------------------------------------------------------------------------- sandbox probes


@probe(SANDBOX_PROBES, "host-files")
async def _host_files(sb, host: Host):
    targets = [REPO / "README.md", REPO / ".git" / "HEAD", host.canary / "secret.txt", "/etc/shadow",
               "/root/.bash_history", "/proc/1/root/etc/hostname"]
    code = (f"for p in {[str(t) for t in targets]!r}:\n    try:\n        print('READ', p, open(p, 'rb').read(64))\n"
            "    except OSError:\n        pass\n")
    run = await sb.run_plot(code, {}, QUICK)
    read = [line.split()[1] for line in run.stdout.splitlines() if line.startswith("READ")]
    return _leak_if(bool(read), run.status.value, f"read {read}" if read else "nothing of the host readable")


@probe(SANDBOX_PROBES, "host-environment")
async def _host_env(sb, host: Host):
    code = ("import os, glob\nhits = [p for p in glob.glob('/proc/*/environ') if os.access(p, os.R_OK)"
            f" and b'{SECRET}' in open(p, 'rb').read()]\nprint(os.environ.get('AESENV_SECURITY_SECRET'), hits)\n")
    run = await sb.run_plot(code, {}, QUICK)
    return _leak_if(SECRET in run.stdout or not run.stdout.startswith("None []"), run.status.value, run.stdout.strip())


@probe(SANDBOX_PROBES, "network")
async def _network(sb, host: Host):
    tcp, udp = host.ports
    code = ("import socket\nout = []\n"
            f"for h in ('127.0.0.1', socket.gethostname()):\n    s = socket.socket(); s.settimeout(1)\n"
            f"    try:\n        s.connect((h, {tcp})); out.append('tcp ' + h)\n    except OSError:\n        pass\n"
            f"try:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {udp}))\n"
            "except OSError:\n    pass\n"
            "try:\n    socket.getaddrinfo('example.org', 80); out.append('dns')\nexcept OSError:\n    pass\nprint(out)\n")
    run = await sb.run_plot(code, {}, QUICK)
    await asyncio.sleep(0.2)
    got = host.received()
    # A datagram to the job's own loopback leaves nothing; only what the host receives, a TCP
    # connection made or a name resolved is a way out.
    return _leak_if(bool(got) or run.stdout.strip() != "[]", run.status.value, f"job {run.stdout.strip()}, host {got}")


@probe(SANDBOX_PROBES, "write-outside")
async def _write_outside(sb, host: Host):
    places = ["/tmp/escape", "/opt/aesenv/worker.py", "/usr/lib/escape", "/etc/escape", str(REPO / "escape"),
              str(host.canary / "escape")]
    code = (f"for p in {places!r}:\n    try:\n        open(p, 'a').write('x'); print('WROTE', p)\n"
            "    except OSError:\n        pass\n")
    run = await sb.run_plot(code, {}, QUICK)
    on_host = [p for p in (REPO / "escape", host.canary / "escape") if p.exists()]
    for p in on_host:
        p.unlink()
    return _leak_if("WROTE" in run.stdout or bool(on_host), run.status.value, run.stdout.strip() or "no write outside")


@probe(SANDBOX_PROBES, "privilege")
async def _privilege(sb, host: Host):
    code = ("import os, ctypes, subprocess\nout = []\n"
            "try:\n    os.setuid(0); out.append('setuid')\nexcept OSError:\n    pass\n"
            "cap = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1]\n"
            "if int(cap, 16): out.append('caps ' + cap)\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "if libc.ptrace(16, 1, 0, 0) == 0: out.append('ptrace worker')\n"
            "if subprocess.run(['mount', '-t', 'tmpfs', 'x', '.'], capture_output=True).returncode == 0: out.append('mount')\n"
            "print(out)\n")
    run = await sb.run_plot(code, {}, QUICK)
    return _leak_if(run.stdout.strip() != "[]", run.status.value, run.stdout.strip())


IPC_MAKE = """
import ctypes, os
libc = ctypes.CDLL(None); rt = ctypes.CDLL('librt.so.1')
libc.msgget(7001, 0o1666); libc.shmget(7002, 4096, 0o1666); libc.semget(7003, 1, 0o1666)
rt.mq_open(b'/aesenv-sec', os.O_CREAT | os.O_RDWR, 0o666, None)
open('left-behind.txt', 'w').write('x')
import subprocess; subprocess.Popen(['sleep', '313'], start_new_session=True)
"""
IPC_LOOK = """
import ctypes, os, glob
libc = ctypes.CDLL(None); rt = ctypes.CDLL('librt.so.1')
seen = [n for n, r in (('msg', libc.msgget(7001, 0o666)), ('shm', libc.shmget(7002, 0, 0o666)),
        ('sem', libc.semget(7003, 0, 0o666)), ('mq', rt.mq_open(b'/aesenv-sec', os.O_RDWR))) if r >= 0]
seen += glob.glob('/tmp/*/left-behind.txt') + [f for f in os.listdir('.') if f != 'main.py']
seen += [p for p in os.listdir('/proc') if p.isdigit() and open(f'/proc/{p}/cmdline', 'rb').read() == b'sleep\\x00313\\x00']
print(seen)
"""


@probe(SANDBOX_PROBES, "state-between-jobs")
async def _between_jobs(sb, host: Host):
    first = await sb.run_plot(IPC_MAKE, {}, QUICK)
    second = await sb.run_plot(IPC_LOOK, {}, QUICK)
    return _leak_if(second.stdout.strip() != "[]", f"{first.status.value}/{second.status.value}",
                    f"the next job saw {second.stdout.strip()}")


async def _then_healthy(sb, first, expect: set[RunStatus], what: str):
    after = await sb.run_plot("print('next')\n", {}, QUICK)
    if after.status is not RunStatus.OK:
        return f"{first.status.value}/{after.status.value}", "poisoned", f"the next job: {after.reason}"
    if first.status not in expect:
        verdict = "fake" if first.status is RunStatus.INFRA_ERROR else "limit"
        return first.status.value, verdict, f"{what}: {first.reason}"
    return first.status.value, "ok", f"{what}: {first.reason or 'ran'}"


# Attacks that must end with one of the expected statuses and leave the worker healthy:
# probe -> (script, limits, expected statuses, what it does).
CONTAINED: dict[str, tuple[str, SandboxLimits, set[RunStatus], str]] = {
    "deep-tree": ("import os\nfor _ in range(3000):\n    os.mkdir('d'); os.chdir('d')\n", SandboxLimits(timeout_s=30),
                  {RunStatus.OK}, "3000 nested folders"),
    "odd-names-and-modes": ("import os\nos.mkdir(b'\\xff\\xfe'); os.makedirs('l/i'); os.chmod('l/i', 0); "
                            "os.chmod('l', 0)\nos.mkfifo('p'); os.symlink('/', 'r'); open('-rf', 'w').close()\n",
                            QUICK, {RunStatus.OK}, "non-UTF-8 names, mode 000, fifo, links"),
    "fork-bomb": ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
                  SandboxLimits(timeout_s=3, max_procs=32), {RunStatus.TIMEOUT, RunStatus.KILLED}, "fork bomb"),
    "memory-bomb": ("b = []\nwhile True:\n    b.append(bytearray(64 * 2**20))\n",
                    SandboxLimits(timeout_s=20, memory_mb=1024), {RunStatus.KILLED}, "unbounded allocation"),
    "untouched-mapping": ("import mmap\nm = mmap.mmap(-1, 2 * 2**30)\n", SandboxLimits(timeout_s=20, memory_mb=1024),
                          {RunStatus.OK}, "2 GB mapping never touched (not memory in use)"),
    "forge-infra-error": ("import os\nf = b'{\"status\": \"infra_error\", \"reason\": \"x\", \"figures\": []}'\n"
                          "for fd in range(3, 64):\n    try:\n        os.write(fd, f)\n    except OSError:\n"
                          "        pass\nos._exit(0)\n", QUICK, {RunStatus.ERROR}, "writes a forged result on every fd"),
    "kill-the-worker": ("import os, signal\nfor pid in (os.getppid(), 1, -1):\n    try:\n        os.kill(pid, "
                        "signal.SIGKILL)\n    except OSError:\n        pass\n", QUICK,
                        {RunStatus.OK, RunStatus.ERROR, RunStatus.KILLED}, "kills its parent, pid 1, -1"),
}


def _contained(name: str) -> Probe:
    code, limits, expect, what = CONTAINED[name]

    async def run(sb, host: Host):
        return await _then_healthy(sb, await sb.run_plot(code, {}, limits), expect, what)
    return run


for _name in CONTAINED:
    probe(SANDBOX_PROBES, _name)(_contained(_name))


@probe(SANDBOX_PROBES, "cpu-spin")
async def _spin(sb, host: Host):
    started = time.monotonic()
    run = await sb.run_plot("while True:\n    pass\n", {}, SandboxLimits(timeout_s=3))
    if time.monotonic() - started > 3 + 10:
        return run.status.value, "hang", f"a 3 s deadline took {time.monotonic() - started:.1f} s"
    return await _then_healthy(sb, run, {RunStatus.TIMEOUT, RunStatus.KILLED}, "endless loop")


@probe(SANDBOX_PROBES, "output-flood")
async def _flood(sb, host: Host):
    run = await sb.run_plot("while True:\n    print('x' * 4096)\n", {}, SandboxLimits(timeout_s=10, max_output_bytes=100_000))
    if len(run.stdout) > 100_000:
        return run.status.value, "limit", f"{len(run.stdout)} bytes of stdout came back"
    return await _then_healthy(sb, run, {RunStatus.KILLED}, "stdout flood")


GOOD_PLOT = ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(8, 5))\n"
             "ax.plot([1, 2, 3, 4], [2, 4, 3, 5], marker='o', label='a'); ax.plot([1, 2, 3, 4], [1, 2, 2, 3], label='b')\n"
             "ax.set_title('Sales by month'); ax.set_xlabel('month'); ax.set_ylabel('sales'); ax.legend()\n")


async def _drawn_plot(sb, code: str):
    """A plot run with its figures drawn and described on the host, as the pipeline does."""
    from aesenv.kinds.plot.figures import draw_figures
    from aesenv.render import RenderConfig, Renderer

    run = await sb.run_plot(code, {}, QUICK)
    async with Renderer(RenderConfig()) as renderer:
        return await draw_figures(run, renderer)


# The old forgery: replace whatever describes figures in the script's process.
_DESCRIBE_HOOK = ("import sys\nfor _m in list(sys.modules.values()):\n"
                  "    if callable(getattr(_m, 'describe', None)) and 'figure' in getattr(_m, '__name__', ''):\n"
                  "        _m.describe = {hook}\n")


@probe(SANDBOX_PROBES, "forged-figure-description")
async def _forged_description(sb, host: Host):
    from aesenv.kinds.plot.judge import OfflinePlotJudge
    from aesenv.tasks import Task

    good = await _drawn_plot(sb, GOOD_PLOT)
    meta = good.figures[0].meta if good.ok and good.figures else {}
    forged = await _drawn_plot(sb, _DESCRIBE_HOOK.format(hook=f"lambda fig, **k: {meta!r}")
                               + "import matplotlib.pyplot as plt\nplt.figure(figsize=(8, 5))\n")
    task = Task(id="probe", kind="plot", prompt="A line chart of sales by month")
    judge = OfflinePlotJudge()
    score = (await judge.judge(task, forged.figures)).total if forged.figures else 0.0
    honest = await _drawn_plot(sb, "import matplotlib.pyplot as plt\nplt.figure(figsize=(8, 5))\n")
    floor = (await judge.judge(task, honest.figures)).total
    if forged.status is RunStatus.INFRA_ERROR:
        return forged.status.value, "fake", forged.reason
    return forged.status.value, "fake" if score > floor + 1e-6 else "ok", f"forged {score} vs honest empty {floor}"


@probe(SANDBOX_PROBES, "png-bomb")
async def _png_bomb(sb, host: Host):
    code = ("import base64, io, matplotlib.figure\nfrom PIL import Image\n"
            "b = io.BytesIO(); Image.new('1', (12000, 12000)).save(b, 'PNG'); d = base64.b64encode(b.getvalue()).decode()\n"
            "matplotlib.figure.Figure.savefig = lambda self, buf, **k: buf.write("
            "'<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"300\">'"
            " f'<image href=\"data:image/png;base64,{d}\" width=\"400\" height=\"300\"/></svg>')\n" + GOOD_PLOT)
    run = await _drawn_plot(sb, code)
    kept = [f for f in run.figures if f.png]
    return run.status.value, "limit" if kept else "ok", "refused before decoding" if not kept else "decoded in the host"


@probe(SANDBOX_PROBES, "describe-hook-raises")
async def _describe_raises(sb, host: Host):
    run = await _drawn_plot(sb, _DESCRIBE_HOOK.format(hook="lambda fig, **k: 1 / 0") + GOOD_PLOT)
    bad = run.status is RunStatus.INFRA_ERROR
    return run.status.value, "fake" if bad else "ok", run.reason or "its figure is judged without a description"


# ------------------------------------------------------------------------- browser probes


@probe(BROWSER_PROBES, "page-network")
async def _page_network(renderer, host: Host):
    tcp, udp = host.ports
    page = (f"<html><head><link rel=preconnect href='http://127.0.0.1:{tcp}'><link rel=dns-prefetch href='//x.example'>"
            f"</head><body><h1>x</h1><script>const pc = new RTCPeerConnection({{iceServers: [{{urls: 'stun:127.0.0.1:{udp}'}},"
            f"{{urls: 'turn:127.0.0.1:{tcp}?transport=tcp', username: 'u', credential: 'p'}}]}});"
            "pc.createDataChannel('c'); pc.createOffer().then(o => pc.setLocalDescription(o));"
            f"fetch('http://127.0.0.1:{tcp}/').catch(() => 0); new WebSocket('ws://127.0.0.1:{tcp}/');"
            f"navigator.sendBeacon('http://127.0.0.1:{tcp}/b', 'x');</script></body></html>")
    rendering = await renderer.render(page)
    await asyncio.sleep(1.5)
    got = host.received()
    return _leak_if(bool(got), rendering.status.value, f"host received {got}" if got else "no packet left the browser")


@probe(BROWSER_PROBES, "page-reads-files")
async def _page_files(renderer, host: Host):
    page = (f"<html><body><iframe src='file:///etc/passwd'></iframe><iframe src='file://{host.canary}/secret.txt'></iframe>"
            f"<pre id=o></pre><script>fetch('file://{host.canary}/secret.txt').then(r => r.text())"
            ".then(t => document.getElementById('o').textContent = t).catch(() => 0)</script></body></html>")
    rendering = await renderer.render(page)
    text = rendering.metrics.visible_text + " ".join(e.text for e in rendering.elements)
    return _leak_if(SECRET in text or "root:x:0:0" in text, rendering.status.value, "file:// never reachable")


@probe(BROWSER_PROBES, "browser-privilege")
async def _browser_privilege(renderer, host: Host):
    await renderer.render("<html><body>who</body></html>")
    isolation = renderer.provenance.get("browser_isolation", "")
    return _leak_if(not isolation.startswith("network namespace"), "ok", isolation)


# ------------------------------------------------------------------------- running


async def _timed(name: str, backend: str, fn, *args) -> Outcome:
    started = time.monotonic()
    try:
        status, verdict, detail = await asyncio.wait_for(fn(*args), PROBE_BUDGET_S)
    except asyncio.TimeoutError:
        status, verdict, detail = "-", "hang", f"no answer within {PROBE_BUDGET_S:.0f} s"
    except Exception as exc:  # noqa: BLE001 - a probe that makes our code raise is a crash
        status, verdict, detail = "-", "crash", f"{type(exc).__name__}: {exc}"[:300]
    return Outcome(name, backend, status, verdict, detail[:300], round(time.monotonic() - started, 2))


async def run(backends: list[str], only: set[str]) -> list[Outcome]:
    from aesenv.render import Renderer

    host = Host()
    outcomes: list[Outcome] = []
    try:
        for backend in backends:
            sb = make_sandbox(backend, workers=1)
            try:
                await sb.start()
            except Exception as exc:  # noqa: BLE001 - an unavailable backend is reported, not skipped
                outcomes.append(Outcome("start", backend, "-", "crash", f"{type(exc).__name__}: {exc}"[:300]))
                continue
            try:
                for name, fn in SANDBOX_PROBES.items():
                    if not only or name in only:
                        outcomes.append(await _timed(name, backend, fn, sb, host))
                        _print(outcomes[-1])
            finally:
                await sb.close()
        async with Renderer() as renderer:
            for name, fn in BROWSER_PROBES.items():
                if not only or name in only:
                    outcomes.append(await _timed(name, "browser", fn, renderer, host))
                    _print(outcomes[-1])
    finally:
        host.close()
    return outcomes


def _print(o: Outcome) -> None:
    print(f"{o.probe:28s} {o.backend:8s} {o.status:12s} {o.verdict:9s} {o.detail[:110]}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="aesenv bench security", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/security", help="folder for security.json")
    ap.add_argument("--backends", default="local,docker", help="sandbox backends to probe (comma-separated)")
    ap.add_argument("--only", default="", help="run only these probes (comma-separated names)")
    args = ap.parse_args(argv)
    unknown = {n for n in args.only.split(",") if n} - set(SANDBOX_PROBES) - set(BROWSER_PROBES)
    if unknown:
        ap.error(f"unknown probe(s) {sorted(unknown)}; known: {sorted(SANDBOX_PROBES) + sorted(BROWSER_PROBES)}")
    print(f"{'probe':28s} {'backend':8s} {'status':12s} {'verdict':9s} detail")
    outcomes = asyncio.run(run([b for b in args.backends.split(",") if b], {n for n in args.only.split(",") if n}))
    bad = [o for o in outcomes if o.verdict != "ok"]
    Path(args.out).mkdir(parents=True, exist_ok=True)
    report = {"probes": len(outcomes), "not_ok": len(bad), "outcomes": [asdict(o) for o in outcomes]}
    (Path(args.out) / "security.json").write_text(json.dumps(report, indent=2))
    print(f"{len(outcomes)} probes, {len(bad)} not ok; wrote {Path(args.out) / 'security.json'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
