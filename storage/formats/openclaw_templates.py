"""The text OpenClaw writes into a new workspace (its bootstrap templates), as the content keys
of their blocks: a block of one of these files whose key is listed is OpenClaw's template text,
not something the agent or its person wrote.

Generated from docs/reference/templates/ of the openclaw npm package (front matter stripped, as
OpenClaw's loadTemplate does), each file scanned into blocks as workspace markdown is; the keys
are blocks.content_key() (12 hex digits of the SHA-1 of the block's text, white space folded).
tests/storage/formats/test_openclaw_templates.py checks them against the installed package.
"""

from __future__ import annotations

OPENCLAW_VERSION = "2026.9.6"

TEMPLATE_KEYS: dict[str, frozenset[str]] = {
    "AGENTS.md": frozenset({
        "0043ea1556fd", "0878d07ec69a", "1b8b3f2e3d65", "1bc7634b14c5", "1f65b19f7ffb", "285eef6b0176",
        "2ab999ba662b", "2b455c731b9f", "30622f0be1e5", "326da9073f61", "37256c036986", "3b3d7ba7b742",
        "4062248d0404", "4c5e3076ea43", "4c94fe36a3b9", "4cc1ff044a7c", "5101585f742a", "59bc4c86eb48",
        "5f8db50eb516", "6515eee4496b", "65e8c63bf053", "65e90a818981", "77ed7796028d", "8eca9a659539",
        "91b3f6991e53", "931b6338291d", "962198c9a051", "97c0dae3b4a1", "9a72ff47c088", "9b22ad1064c2",
        "9b7e1b5d9eb4", "9eb76efbe7f0", "a016c9db2686", "a4d288625395", "aa2fa449ed6d", "ab9c50082c26",
        "af9abfdc44c3", "b84f9fed5461", "bba1d6c7fc2e", "c39918b9e8ef", "c40250548f66", "c4274ce43dd3",
        "c6e87ef1fed6", "d022f51b55cc", "d420cd51999b", "d7f6eb9eaa4c", "dbd9ca99e831", "e6e1c97bdb51",
        "e7ca9e8ed984", "e83c2cc7758c", "e9afc2a5dacc", "f3d4590a1996", "f7c6d4f3fe01",
    }),
    "HEARTBEAT.md": frozenset({
        "0d87f6966070", "139b0163e27b", "5ede29039402", "875bf2524ef7", "87d1efcbcf34", "91b3f6991e53",
        "de5c8c34bf1b",
    }),
    "IDENTITY.md": frozenset({
        "0099ee17f05c", "02eded48dffd", "0c4fc6938127", "24af260313fa", "3d2d129c9e07", "4f4b88a9272e",
        "65308f7c2529", "718ec3c850fc", "8303f0d85701", "9524bf76f148", "9c3befe7e22c", "a9d51fd20dac",
        "da98c8f9c0a1", "dd127cd4df4b",
    }),
    "SOUL.md": frozenset({
        "03ad10468e68", "049ad5de3894", "1cf89c1b0cd8", "2c9a9b5117b8", "3ae82997410d", "3d32cf95d7c7",
        "3e49d32193a0", "5bc26eeb1a60", "5e3488afa9ec", "5f4849a4e48f", "7e700f446bf5", "a9ca4dc2b95e",
        "d6b11c8f3498", "e439b73c07e0", "e5b63aaeb4f3", "e988a6db1fa1", "feb7a3f39374",
    }),
    "USER.md": frozenset({
        "0047f411fa9c", "2b4e76c2dd60", "551195138b20", "6f018991fe88", "808685d9abf4", "a922cf2e5253",
        "b14ce5d07846", "bebba84e663f", "c37861560fdc", "dd127cd4df4b",
    }),
}
