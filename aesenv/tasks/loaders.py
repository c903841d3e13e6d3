"""Task loaders, one per source format, found by name in `LOADERS`.

`load_tasks(spec)` takes `builtin:web`, `builtin:plot`, `opendesign:PATH`, `pandasplotbench:PATH`,
`jsonl:PATH` or a bare path (`.jsonl` files are sniffed: rows with only id/prompt/category are
OpenDesign rows, rows with `task__plot_description` are PandasPlotBench rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import resources

from pydantic import ValidationError

from aesenv.jsonl import JsonlError, read_jsonl
from aesenv.registry import Registry
from aesenv.specs import parse_spec
from aesenv.tasks.model import Task

Loader = Callable[[str], list[Task]]
LOADERS: Registry[Loader] = Registry("task loader")
register_loader = LOADERS.register


class TaskLoadError(ValueError):
    """A task file could not be read; the message names the file and line."""


def _rows(path: str) -> Iterator[tuple[str, dict]]:
    try:
        yield from read_jsonl(path)
    except JsonlError as exc:
        raise TaskLoadError(f"task {exc}") from exc


def _build(where: str, row: dict) -> Task:
    try:
        return Task(**row)
    except (ValidationError, ValueError) as exc:
        raise TaskLoadError(f"{where}: {exc}") from exc


@register_loader("jsonl")
def load_jsonl(path: str) -> list[Task]:
    """aesenv's own task format: one `Task` JSON object per line."""
    return [_build(where, row) for where, row in _rows(path)]


@register_loader("opendesign")
def load_opendesign(path: str) -> list[Task]:
    """OpenDesign's `all_prompt.jsonl`: `{"id", "prompt", "category"}` per line."""
    tasks = []
    for where, row in _rows(path):
        missing = {"id", "prompt", "category"} - row.keys()
        if missing:
            raise TaskLoadError(f"{where}: OpenDesign row lacks {sorted(missing)}")
        tasks.append(
            _build(where, {"id": str(row["id"]), "prompt": row["prompt"],
                             "category": row["category"], "source": "opendesign"})
        )
    return tasks


@register_loader("pandasplotbench")
def load_pandasplotbench(path: str) -> list[Task]:
    """PandasPlotBench rows (JSONL export of the HF dataset): `id`, `data_csv`,
    `task__plot_description`, optional `task__plot_style`, `code_data`, `plots_gt` (base64 PNGs).
    The script runs alone next to `data.csv`, so the dataset's loading code goes into the prompt."""
    tasks = []
    for where, row in _rows(path):
        missing = {"id", "data_csv", "task__plot_description"} - row.keys()
        if missing:
            raise TaskLoadError(f"{where}: PandasPlotBench row lacks {sorted(missing)}")
        parts = [row["task__plot_description"].strip()]
        if (row.get("task__plot_style") or "").strip():
            parts.append("Style: " + row["task__plot_style"].strip())
        if (row.get("code_data") or "").strip():
            parts.append("The data is in data.csv in the working directory and loads with:\n```python\n"
                         + row["code_data"].strip() + "\n```")
        references = row.get("plots_gt") or []
        if isinstance(references, str):
            references = [references]
        tasks.append(_build(where, {
            "id": f"ppb-{row['id']}", "kind": "plot", "category": "Data Visualization", "prompt": "\n\n".join(parts),
            "data_files": {"data.csv": row["data_csv"]}, "reference_image": references[0] if references else None,
            "source": "pandasplotbench"}))
    return tasks


@register_loader("builtin")
def load_builtin(name: str) -> list[Task]:
    """A suite shipped inside the package (`builtin:web`, `builtin:plot`, `builtin:aescode`: the
    requirement-bearing artboard tasks the AesCode verifiers check)."""
    name = name or "web"
    ref = resources.files("aesenv.tasks") / "builtin" / f"{name}.jsonl"
    if not ref.is_file():
        available = sorted(p.name.removesuffix(".jsonl") for p in
                           (resources.files("aesenv.tasks") / "builtin").iterdir()
                           if p.name.endswith(".jsonl"))
        raise TaskLoadError(f"no built-in suite {name!r}; available: {available}")
    with resources.as_file(ref) as path:
        return load_jsonl(str(path))


def load_tasks(spec: str) -> list[Task]:
    """Load tasks from `loader:argument` or a bare path."""
    loader, arg = parse_spec(spec)
    if ":" in spec and loader in LOADERS:
        tasks = LOADERS[loader](arg)
    else:
        tasks = _sniff(spec)
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise TaskLoadError(f"{spec}: duplicate task ids {dupes}")
    return tasks


def _sniff(path: str) -> list[Task]:
    for _, row in _rows(path):
        if set(row) <= {"id", "prompt", "category"}:
            return load_opendesign(path)
        if "task__plot_description" in row:
            return load_pandasplotbench(path)
        return load_jsonl(path)
    raise TaskLoadError(f"{path}: no tasks")
