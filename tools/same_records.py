"""Do two checkouts score the same pages the same? For a change meant to make scoring faster and
nothing else: score the bench_reward answers (builtin:web, the template policy) and the
interaction benchmark's pages with the offline judge, keep each record's `deterministic_view`
(no timings), then compare two such files.

    PYTHONPATH=<checkout> python tools/same_records.py score <checkout> runs/records-a.json
    python tools/same_records.py compare runs/records-a.json[,runs/records-a2.json] runs/records-b.json

`compare` lists every record that differs from the first file, field by field, and exits non-zero
when one does; score the old checkout twice and pass both: a field (list positions aside) that
differs between two runs of the same code is the page's noise, not the change's.

    python tools/same_records.py folders runs/before[,runs/before2] runs/after

`folders` compares what a command wrote (`aesenv demo --out`, `aesenv bench forgery --out`, ...):
every `.json` and `.jsonl` file under the first folder(s) against the same path under the last,
field by field, with wall-clock fields (`TIMING_KEYS`) and the folders' own paths left out. A
field that differs between two runs of the old code is noise and is not counted.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any


async def score(root: Path, out: Path) -> None:
    from aesenv.envs.base import deterministic_view
    from aesenv.rewards import RewardPipeline
    from aesenv.tasks import Task, load_tasks
    from policies.template import TemplatePolicy
    from train.reward import pipeline_config

    pipeline = RewardPipeline(pipeline_config(judge="offline", allow_offline_judge=True))
    records: dict[str, Any] = {}
    try:
        policy = TemplatePolicy()
        for task in load_tasks("builtin:web"):
            scored = await pipeline.score(task, await policy.generate(task))
            records[f"bench:{task.id}"] = deterministic_view(scored.record)
        pages = root / "benchmarks" / "interactions"
        for entry in json.loads((pages / "labels.json").read_text())["pages"]:
            task = Task(id=Path(entry["page"]).stem, category=entry["category"], prompt=entry["prompt"])
            scored = await pipeline.score(task, (pages / entry["page"]).read_text())
            records[f"interactions:{entry['page']}"] = deterministic_view(scored.record)
    finally:
        await pipeline.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(records, indent=1, sort_keys=True))
    print(f"{len(records)} records written to {out}")


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Where two JSON values differ, as paths."""
    if type(old) is not type(new):
        return [f"{path}: {str(old)[:100]!r} -> {str(new)[:100]!r}"]
    if isinstance(old, dict):
        return [d for key in sorted(set(old) | set(new)) for d in differences(old.get(key), new.get(key), f"{path}.{key}")]
    if isinstance(old, list):
        found = [f"{path}: {len(old)} items -> {len(new)}"] if len(old) != len(new) else []
        return found + [d for i, (a, b) in enumerate(zip(old, new)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if old == new else [f"{path}: {str(old)[:100]!r} -> {str(new)[:100]!r}"]


# Fields a run writes that are clocks, not results: left out wherever they appear.
TIMING_KEYS = frozenset({"timings_ms", "median_score_ms", "wall_s", "elapsed_s", "elapsed_ms", "started_at",
                         "finished_at", "duration_s", "seconds", "ms", "date"})


def _untimed(value: Any, roots: tuple[str, ...]) -> Any:
    """`value` without `TIMING_KEYS` (at any depth), with each of `roots` (the folders compared)
    replaced by `<out>` wherever a string names it."""
    if isinstance(value, dict):
        return {k: _untimed(v, roots) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_untimed(v, roots) for v in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "<out>")
    return value


def _documents(folder: Path) -> dict[str, Any]:
    """Every JSON document under `folder`, by relative path (a JSONL file's lines as `path#n`)."""
    found: dict[str, Any] = {}
    roots = (str(folder.resolve()), str(folder))
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.suffix == ".json":
            found[relative] = _untimed(json.loads(path.read_text()), roots)
        elif path.suffix == ".jsonl":
            for number, line in enumerate(path.read_text().splitlines()):
                if line.strip():
                    found[f"{relative}#{number}"] = _untimed(json.loads(line), roots)
    return found


def compare_folders(olds: list[Path], new_path: Path) -> int:
    """Every document of the old folder(s) against the new one; non-zero exit when one differs
    beyond what differs between the old runs themselves, or when a document is missing."""
    before = [_documents(p) for p in olds]
    after = _documents(new_path)
    changed = 0
    for key in sorted(set(before[0]) | set(after)):
        if key not in after or key not in before[0]:
            changed += 1
            print(f"{key}: only in {'the old' if key in before[0] else 'the new'} folder")
            continue
        found = differences(before[0][key], after[key])
        noise = {_field(d) for run in before[1:] if key in run for d in differences(before[0][key], run[key])}
        real = [d for d in found if _field(d) not in noise]
        if real:
            changed += 1
            print(f"{key}: {len(real)} differences", *(f"    {d}" for d in real[:8]), sep="\n")
    print(f"{len(after) - changed}/{len(after)} documents the same ({', '.join(map(str, olds))} -> {new_path})")
    return 1 if changed else 0


def _field(difference: str) -> str:
    """The field a difference is in, list positions left out (`.steps[2].x` -> `.steps[].x`):
    a run that differs from its twin in one step's pixels may differ in another step's next time."""
    return re.sub(r"\[\d+\]", "[]", difference.split(":")[0])


def compare(olds: list[Path], new_path: Path) -> int:
    """Each record of the new file against the old file(s), field by field; a field that differs
    between the old runs of the same record is that record's noise and is not counted."""
    before = [json.loads(p.read_text()) for p in olds]
    after = json.loads(new_path.read_text())
    changed = noisy = 0
    for key in sorted(set(before[0]) | set(after)):
        if key not in after or key not in before[0]:
            changed += 1
            print(f"{key}: only in {'the old' if key in before[0] else 'the new'} records")
            continue
        noise = {_field(d) for run in before[1:] if key in run for d in differences(before[0][key], run[key])}
        found = differences(before[0][key], after[key])
        real = [d for d in found if _field(d) not in noise]
        noisy += bool(found) and not real
        if real:
            changed += 1
            print(f"{key}: {len(real)} differences", *(f"    {d}" for d in real[:8]), sep="\n")
    print(f"{len(after) - changed}/{len(after)} records the same ({noisy} of them only in fields that differ "
          f"between the old runs too)")
    return 1 if changed else 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "score":
        asyncio.run(score(Path(argv[1]), Path(argv[2])))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare([Path(p) for p in argv[1].split(",")], Path(argv[2]))
    if len(argv) == 3 and argv[0] == "folders":
        return compare_folders([Path(p) for p in argv[1].split(",")], Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
