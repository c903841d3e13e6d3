"""What `import aesenv` costs: wall time in fresh interpreters, and what it loads.

Each round starts a new interpreter for `import aesenv` (kinds registered by name only), then one
that also loads a kind and scores nothing (`KINDS["web"]`: the page kind with its channels and
judges), as the first use pays; both with `-X importtime`, so the total is Python's own count of
the import, not the interpreter's start. The report gives the median seconds of each and which
heavy packages each loaded (Playwright, torch, the OpenAI SDK, Ray).

    aesenv bench import --out runs/import [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

STATEMENTS = {"import aesenv": "import aesenv",
              "first kind": "import aesenv\nfrom aesenv.kinds import KINDS\nKINDS['web']"}
HEAVY = ("playwright", "torch", "openai", "ray", "vllm")
_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)")


def measure(statement: str) -> tuple[float, list[str]]:
    """(seconds the top-level imports took, heavy packages loaded) in a fresh interpreter."""
    probe = statement + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", probe], capture_output=True, text=True, check=True)
    total_us = sum(int(m.group(1)) for m in map(_LINE.match, done.stderr.splitlines()) if m and not m.group(2))
    loaded = done.stdout.split()
    return total_us / 1e6, sorted({m.split(".")[0] for m in loaded if m.split(".")[0] in HEAVY})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="aesenv bench import", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/import"))
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {name: [] for name in STATEMENTS}
    heavy: dict[str, list[str]] = {}
    for _ in range(args.rounds):  # interleaved: load on the machine hits both alike
        for name, statement in STATEMENTS.items():
            seconds, loaded = measure(statement)
            times[name].append(seconds)
            heavy[name] = loaded
    report = {name: {"median_s": round(statistics.median(t), 4), "max_s": round(max(t), 4), "heavy_loaded": heavy[name]}
              for name, t in times.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "import.json").write_text(json.dumps({"rounds": args.rounds, "report": report}, indent=2) + "\n")
    for name, row in report.items():
        print(f"{name:>14}: median {row['median_s']:.3f} s (max {row['max_s']:.3f} s); heavy: {row['heavy_loaded'] or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
