"""The rules: versioned data shipped in the package, every category present, ids unique."""

from __future__ import annotations

import json

import pytest
from mnemoscope.storage.findings import default_rules, rules_from_json, severity_rank


def test_rules_are_versioned_data() -> None:
    rules = default_rules()
    assert rules.version >= 1
    categories = {r.category for r in rules.rules}
    assert {"secret", "injection", "hidden", "link", "pii"} <= categories
    assert len({r.id for r in rules.rules}) == len(rules.rules)



def test_a_rule_with_an_unknown_severity_is_refused() -> None:
    text = json.dumps({"version": 2, "rules": [{"id": "x.y", "category": "x", "severity": "dire", "title": "X",
                                               "pattern": "y"}]})
    with pytest.raises(ValueError, match="severity must be one of"):
        rules_from_json(text)


def test_severities_rank_high_before_low() -> None:
    assert severity_rank("high") < severity_rank("medium") < severity_rank("low")
