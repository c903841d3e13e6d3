import json
from pathlib import Path

import pytest

from aesenv.tasks import Category, Task, TaskLoadError, load_tasks

# OpenDesign's all_prompt.jsonl format ({id, prompt, category}), in a slice the repository ships
OPENDESIGN_SLICE = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "opendesign_slice.jsonl"


def write(tmp_path: Path, rows: list, name: str = "tasks.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_opendesign_rows_load_with_case_insensitive_categories(tmp_path):
    path = write(tmp_path, [{"id": 7, "prompt": "A snake game", "category": "Game dev"},
                            {"id": "8", "prompt": "A globe", "category": "3d design"}])
    tasks = load_tasks(f"opendesign:{path}")
    assert [t.id for t in tasks] == ["7", "8"]
    assert tasks[0].category is Category.GAME_DEV and tasks[1].category is Category.DESIGN_3D
    assert all(t.source == "opendesign" for t in tasks)
    assert load_tasks(str(path)) == tasks  # a bare path is sniffed as OpenDesign


def test_aesenv_jsonl_with_requirements_and_canvas(tmp_path):
    row = {"id": "poster", "kind": "web", "category": "Website", "prompt": "A poster",
           "canvas": {"width": 1080, "height": 1350},
           "requirements": [{"type": "text_exact", "text": "Open 7-15"},
                            {"type": "chart_data", "chart": "bar", "labels": ["a"], "series": {"s": [1]}},
                            {"type": "table_data", "header": ["h"], "rows": [["c"]]}]}
    (task,) = load_tasks(f"jsonl:{write(tmp_path, [row])}")
    assert task.canvas.width == 1080 and [r.type for r in task.requirements] == ["text_exact", "chart_data", "table_data"]
    assert Task.model_validate_json(task.model_dump_json()) == task


@pytest.mark.parametrize("rows, message", [
    (["{not json"], "invalid JSON"),
    ([{"id": "a", "prompt": "x", "category": "Spaceship"}], "unknown category"),
    ([{"id": "a", "prompt": "", "category": "Website"}], "prompt"),
    ([{"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"}], "duplicate task ids"),
    ([{"id": "a", "prompt": "x", "colour": "red"}], "colour"),
])
def test_bad_task_files_name_file_and_problem(tmp_path, rows, message):
    path = write(tmp_path, rows)
    with pytest.raises(TaskLoadError, match=message):
        load_tasks(f"jsonl:{path}")


def test_missing_file_and_unknown_suite_are_clear():
    with pytest.raises(TaskLoadError, match="not found"):
        load_tasks("jsonl:/nonexistent.jsonl")
    with pytest.raises(TaskLoadError, match="available"):
        load_tasks("builtin:nope")


def test_builtin_suite_covers_every_category():
    tasks = load_tasks("builtin:web")
    assert len(tasks) >= 25
    assert {t.category for t in tasks} == set(Category)


def test_the_shipped_opendesign_slice_loads():
    """The slice `aesenv bench opendesign` runs by default, read as OpenDesign's prompt file: integer
    ids become strings, each of the five categories has four prompts, and the order is the file's."""
    tasks = load_tasks(f"opendesign:{OPENDESIGN_SLICE}")
    assert [t.id for t in tasks] == [str(i) for i in range(1, 21)]
    counts = {c: sum(t.category is c for t in tasks) for c in Category}
    assert counts == {c: 4 for c in Category}
    assert tasks[0].category is Category.WEBSITE and tasks[0].prompt.startswith(
        "Create a landing page for a neighbourhood bicycle repair shop")
    assert all(t.source == "opendesign" and t.kind == "web" for t in tasks)
    assert load_tasks(str(OPENDESIGN_SLICE)) == tasks  # the bare path is sniffed as OpenDesign
