"""Plot degradation-pair benchmark: does the plot judge rank a tidy plot above a damaged copy?

The plot-template policy's script for each matplotlib task of `builtin:plot` is run as is and
with one known defect appended (tiny fonts, labels and titles removed, a legend dropped on the
data, titles pushed off the canvas, marks faded into the background, a crowd of colliding tick
labels). Both go through the real pipeline (sandbox run, figure description, plot judge); the
share of pairs the judge orders correctly (ties count as wrong) is a label-free sanity check.
A defect that has nothing to act on (no legend to move), leaves the picture unchanged or breaks
the script is not a pair.
Plotly tasks are left out: their geometry is laid out at display time and not measured.

    python -m benchmarks.plot_degradation --out runs/plot-degradation
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path

from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.tasks import load_tasks
from policies.plot_template import write_script

# Each defect is code appended to the script: it damages one measurable quality of every axes.
DEFECTS: dict[str, str] = {
    "tiny_fonts": """
for text in plt.gcf().findobj(lambda a: hasattr(a, "set_fontsize")):
    text.set_fontsize(4)
""",
    "no_labels": """
plt.gcf().suptitle("")
for a in plt.gcf().axes:
    a.set_title(""); a.set_xlabel(""); a.set_ylabel("")
""",
    "legend_on_data": """
for a in plt.gcf().axes:
    if a.get_legend() is not None:
        a.legend(loc="center", fontsize=16, framealpha=1)
""",
    "clipped_titles": """
plt.gcf().set_layout_engine("none")
for a in plt.gcf().axes:
    a.set_title(a.get_title(), y=1.3)
if plt.gcf()._suptitle is not None:
    plt.gcf().suptitle(plt.gcf()._suptitle.get_text(), y=1.1)
""",
    "faded_marks": """
for a in plt.gcf().axes:
    for artist in a.lines + a.patches + a.collections:
        artist.set_color("#f4f4f4")
""",
    "crowded_ticks": """
for a in plt.gcf().axes:
    lo, hi = a.get_xlim()
    ticks = [lo + (hi - lo) * i / 19 for i in range(20)]
    a.set_xticks(ticks, [f"{t:.4f}" for t in ticks], rotation=0, ha="center")
""",
}

# Defects that need something in the clean figure to act on.
APPLIES = {"legend_on_data": lambda meta: any(a.get("legend") for a in meta.get("axes", []))}


async def run(out: str) -> dict:
    tasks = [t for t in load_tasks("builtin:plot") if "plotly" not in t.prompt.lower()]
    pairs, failing, clean_totals = [], [], []
    async with RewardPipeline(PipelineConfig(channels=["execution", "static"])) as pipeline:
        for task in tasks:
            script = write_script(task)
            scored = await pipeline.score(task, f"```python\n{script}```")
            clean, clean_png = scored.record.channels["static"], scored.picture
            clean_meta = scored.plot.figures[0].meta
            clean_totals.append(clean.raw)
            for name, code in DEFECTS.items():
                if not APPLIES.get(name, lambda _: True)(clean_meta):
                    continue
                scored = await pipeline.score(task, f"```python\n{script}{code}```")
                damaged = scored.record.channels["static"]
                if scored.record.channels["execution"].raw != 1.0 or damaged.raw is None or scored.picture == clean_png:
                    continue  # the defect broke the script, or changed nothing on this chart
                correct = clean.raw > damaged.raw
                pairs.append({"task": task.id, "defect": name, "clean": clean.raw, "damaged": damaged.raw,
                              "correct": correct})
                if not correct:
                    failing.append(pairs[-1])
    per_defect = {}
    for name in DEFECTS:
        rows = [p for p in pairs if p["defect"] == name]
        if rows:
            per_defect[name] = {"n": len(rows), "correct": sum(p["correct"] for p in rows),
                                "accuracy": round(sum(p["correct"] for p in rows) / len(rows), 3),
                                "median_drop": round(statistics.median(p["clean"] - p["damaged"] for p in rows), 2)}
    report = {"n_tasks": len(tasks), "n_pairs": len(pairs),
              "accuracy": round(sum(p["correct"] for p in pairs) / len(pairs), 3) if pairs else None,
              "clean_total_mean": round(statistics.fmean(clean_totals), 2), "per_defect": per_defect,
              "failing": failing, "pairs": pairs}
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "plot_degradation.json").write_text(json.dumps(report, indent=2))
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.plot_degradation", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/plot-degradation", help="output folder for plot_degradation.json")
    args = ap.parse_args(argv)
    report = asyncio.run(run(args.out))
    print(f"accuracy {report['accuracy']} over {report['n_pairs']} pairs ({report['n_tasks']} tasks); "
          f"clean mean {report['clean_total_mean']}")
    for name, d in report["per_defect"].items():
        print(f"  {name:16s} {d['accuracy']:.3f} ({d['correct']}/{d['n']}), median drop {d['median_drop']}")
    for f in report["failing"][:20]:
        print(f"  FAIL {f['task']} {f['defect']}: {f['clean']} <= {f['damaged']}")
    print(f"wrote {Path(args.out) / 'plot_degradation.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
