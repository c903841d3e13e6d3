"""A record quotes what an answer produced (a traceback, a page's text); that can hold lone
surrogates (a Python string literal "\\udcff" in a script's exception), and the record must still
be written whole: the runner's records.jsonl, `aesenv score --json`, trajectories."""

from __future__ import annotations

import json

import pytest
from pydantic_core import PydanticSerializationError

from aesenv.jsonl import dumps
from aesenv.tasks import load_tasks

LINE = next(t for t in load_tasks("builtin:plot") if t.id == "plot-line-city-temperatures")
SCRIPT = "```python\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nraise ValueError('bad \\udcff byte')\n```"


async def test_a_record_with_lone_surrogates_is_written_and_read_back(plot_pipeline):
    record = (await plot_pipeline.score(LINE, SCRIPT)).record
    assert record.reward is not None and "ValueError" in record.failure
    with pytest.raises(PydanticSerializationError):
        record.model_dump_json()  # what the runner used to write: the batch would stop here
    text = dumps(record)
    text.encode("utf-8")
    back = json.loads(text)
    assert back["task_id"] == LINE.id and "\udcff" in back["failure"]
