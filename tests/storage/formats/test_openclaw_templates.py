"""The template keys shipped in openclaw_templates.py are those of the templates the pinned
openclaw package writes into a new workspace."""

from __future__ import annotations

import re

from helpers.openclaw_cli import OPENCLAW_VERSION, openclaw_home, template_text
from mnemoscope.storage.formats.openclaw_templates import OPENCLAW_VERSION as SHIPPED_FROM
from mnemoscope.storage.formats.openclaw_templates import TEMPLATE_KEYS
from mnemoscope.storage.native.markdown.files import ROOT_FILES
from mnemoscope.storage.native.markdown.scan import scan


def keys_of(name: str, text: str) -> frozenset[str]:
    return frozenset(block.key.split("~")[0] for block in scan(text.encode("utf-8"), name).blocks())


def test_the_keys_are_the_blocks_of_the_packages_templates() -> None:
    assert SHIPPED_FROM == OPENCLAW_VERSION
    # Regenerate with keys_of(name, template_text(name)) when the pinned version moves.
    assert {name: keys_of(name, template_text(name)) for name in TEMPLATE_KEYS} == TEMPLATE_KEYS


def test_the_files_openclaw_wrote_are_the_templates_whole() -> None:
    workspace = openclaw_home() / ".openclaw" / "workspace"
    written = {p.name for p in workspace.glob("*.md")} - {"MEMORY.md", "BOOTSTRAP.md"}
    assert written == {"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"}
    for name in written:
        text = (workspace / name).read_text(encoding="utf-8")
        assert text == template_text(name)
        assert keys_of(name, text) == TEMPLATE_KEYS[name]


def test_keys_are_content_keys_of_listed_workspace_files() -> None:
    assert set(TEMPLATE_KEYS) <= set(ROOT_FILES)
    assert all(re.fullmatch(r"[0-9a-f]{12}", key) for keys in TEMPLATE_KEYS.values() for key in keys)
