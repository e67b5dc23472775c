"""Memory content is shown, never executed: HTML is text and nothing remote loads."""

from __future__ import annotations

from datetime import datetime, timezone

from mnemoscope.storage import Kind, Layer, Memory
from mnemoscope.storage.model import SourceRef
from mnemoscope.ui.widgets.detail_panel import DetailPanel, render_memory

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
PROMOTION = {"met": {}, "values": {}, "thresholds": {}}


def _memory(content: str) -> Memory:
    return Memory(id="m-1", source=SourceRef(Kind.SQLITE, "memory.db:memories/m-1"), layer=Layer.SEMANTIC,
                  channel="_global", content=content, created_at=T, updated_at=T, last_accessed=T)


def test_html_in_a_memory_is_escaped_and_markdown_is_rendered() -> None:
    html = render_memory(_memory("**bold** <script>alert(1)</script> <img src='http://example.com/x.png'>"), [], PROMOTION)
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<img" not in html


def test_the_panel_loads_no_remote_image(qtbot) -> None:
    panel = DetailPanel()
    qtbot.addWidget(panel)
    memory = _memory("![tracker](http://example.com/pixel.png)")
    assert 'src="http://example.com/pixel.png"' in render_memory(memory, [], PROMOTION)  # markdown images stay
    panel.show_memory(memory, [], PROMOTION)
    assert panel.loadResource(2, "http://example.com/pixel.png") is None  # ...but are never fetched
