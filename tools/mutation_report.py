"""Survival per module after `make mutation` (mutmut's verdicts in mutants/*.meta): how many mutants
each module got, how many the tests killed, which survived. `--json PATH` writes the table too.

    python tools/mutation_report.py [--json runs/mutation.json] [--survivors]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

# mutmut's exit codes (mutmut/stats.py): 1 and 3 a test failed, 0 every test passed, 36/24/-24/152/255 timeout
KILLED, SURVIVED = {1, 3}, {0}
TIMEOUT = {36, 24, -24, 152, 255}
NO_TESTS = {5, 33}


def verdict(code: int | None) -> str:
    if code in KILLED:
        return "killed"
    if code in SURVIVED:
        return "survived"
    if code in TIMEOUT:
        return "timeout"  # a mutant that hangs the tests is caught by the hang guards: counted as killed
    if code in NO_TESTS:
        return "no tests"
    return "not checked" if code is None else f"other ({code})"


def table(root: Path = Path("mutants")) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for meta in sorted(root.rglob("*.py.meta")):
        module = str(meta.relative_to(root))[: -len(".meta")]
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        counts = Counter(verdict(c) for c in codes.values())
        checked = counts["killed"] + counts["timeout"] + counts["survived"] + counts["no tests"]
        out[module] = {"mutants": len(codes), **dict(counts),
                       "survival_rate": round((counts["survived"] + counts["no tests"]) / checked, 3) if checked else None,
                       "survivors": sorted(k for k, c in codes.items() if verdict(c) in ("survived", "no tests"))}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the table here")
    ap.add_argument("--survivors", action="store_true", help="list each surviving mutant")
    args = ap.parse_args(argv)
    rows = table()
    if not rows:
        print("no mutmut results under mutants/: run `make mutation` first")
        return 1
    for module, row in rows.items():
        rate = "n/a" if row["survival_rate"] is None else f"{100 * row['survival_rate']:.1f}%"
        print(f"{module:36s} {row['mutants']:4d} mutants  killed {row.get('killed', 0) + row.get('timeout', 0):4d}  "
              f"survived {row.get('survived', 0):3d}  no tests {row.get('no tests', 0):3d}  survival {rate}")
        if args.survivors:
            for name in row["survivors"]:
                print(f"    {name}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
