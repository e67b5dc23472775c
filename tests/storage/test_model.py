"""The model (storage/model.py): the scratchpad's reserved key patterns."""

from __future__ import annotations

import pytest
from mnemoscope.storage.model import classify_scratch_key


@pytest.mark.parametrize(
    "key, pattern, captured",
    [
        ("subagent_result::sa-1", "subagent_result", "sa-1"),
        ("delegation_result::x", "delegation_result", "x"),
        ("session_facts", "session_facts", None),
        ("__pending_subagent_summaries__", "pending_subagent_summaries", None),
        ("__taskspace_hint__", "taskspace_hint", None),
        ("__taskspace_label_hint__", "taskspace_label_hint", None),
        ("todo", None, None),
    ],
)
def test_reserved_scratchpad_keys(key: str, pattern: str | None, captured: str | None) -> None:
    assert classify_scratch_key(key)[:2] == (pattern, captured)
