"""What the format tests share: AgentX's seed database on the test PostgreSQL (a module that takes
it imports postgres_server, the server fixture, as it does for its own tests)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import agentx_db


@pytest.fixture
def agentx(postgres_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A database of its own holding the seed's AgentX tables and rows."""
    if not postgres_server.has_pgvector:
        pytest.skip("the test PostgreSQL has no pgvector, which the seed's schema needs")
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    name = "agentx_" + uuid.uuid4().hex[:10]
    db = agentx_db.build(postgres_server, name)
    yield db
    postgres_server.drop_database(name)
