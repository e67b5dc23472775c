"""memory.db's memory rows, read in pages (keyset on id): a check never holds them all."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..db import schema

PAGE = 500


def row_pages(db: Any, *, md_file: str | None = None, page: int = PAGE) -> Iterator[list[dict[str, Any]]]:
    """Every memory row as read_record reads it (md_file: only that file's copies), page by
    page, in id order."""
    from sqlalchemy import select

    m = schema.memories
    last = ""
    while True:
        stmt = select(m).where(m.c.id > last).order_by(m.c.id).limit(page)
        if md_file is not None:
            stmt = stmt.where(m.c.md_file == md_file)
        with db.errors(), db.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(stmt)]
        if not rows:
            return
        yield rows
        last = rows[-1]["id"]


def existing_ids(db: Any, ids: Sequence[str]) -> set[str]:
    """Which of ids are memory rows."""
    from sqlalchemy import select

    m = schema.memories.c
    with db.errors(), db.engine.connect() as conn:
        return {str(r[0]) for r in conn.execute(select(m.id).where(m.id.in_(list(ids))))}


def row_count(db: Any) -> int:
    with db.errors(), db.engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM memories").scalar_one())


def markdown_files(db: Any) -> list[str]:
    """The files memory rows keep markdown copies in."""
    from sqlalchemy import select

    m = schema.memories.c
    stmt = select(m.md_file).where(m.md_file.is_not(None)).distinct().order_by(m.md_file)
    with db.errors(), db.engine.connect() as conn:
        return [str(r[0]) for r in conn.execute(stmt)]
