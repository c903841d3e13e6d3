"""The offline explorer on the whole labeled interaction set (benchmarks/interactions)."""

import pytest

from benchmarks.interaction_accuracy import load_set, run, summarize


@pytest.mark.slow
async def test_offline_explorer_accuracy_on_the_labeled_set():
    pages = load_set()
    assert len(pages) >= 30
    summary = summarize(await run(pages, budget=3), budget=3)
    assert summary["interaction_accuracy"] >= 0.9, summary
    assert summary["page_accuracy"] >= 0.9, summary
    assert summary["twin_pairs_ordered"] >= 0.85, summary
