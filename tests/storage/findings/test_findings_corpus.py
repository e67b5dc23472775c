"""The findings rules against a labelled corpus of attacks and look-alikes (corpus.jsonl, described
in tests/helpers/findings_corpus.py): precision and recall overall and per category, printed, held
to 0.95 overall and 0.9 per category; every family of attack and of look-alike is scored too, and
the items held out of tuning are held to the same bar on their own."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from helpers.findings_corpus import SCORED, Item, Score, load, score
from helpers.findings_planted import PLANTED
from mnemoscope.storage.findings import default_rules

OVERALL = 0.95
PER_CATEGORY = 0.9
PER_KIND = 0.85  # a family of attacks (or of look-alikes) of its own, 8 to 30 items each


@pytest.fixture(scope="module")
def items() -> list[Item]:
    return load()


@pytest.fixture(scope="module")
def result(items: list[Item]) -> Score:
    return score(items)


def _failures(result: Score) -> str:
    lines = [f"missed ({i.kind}, {i.category}; found {sorted(found) or 'nothing'}): {i.text!r}"
             for i, found in result.misses]
    lines += [f"false alarm ({i.kind}; {', '.join(rules)}): {i.text!r}" for i, _found, rules in result.false_alarms]
    return "\n".join(lines)


def test_the_corpus_is_labelled_and_large_enough(items: list[Item]) -> None:
    assert len(items) >= 200
    assert {i.category for i in items} == {*SCORED, None}
    kinds = Counter(i.kind for i in items)
    attacks = {i.kind for i in items if i.category}
    assert len(attacks) >= 8 and len(kinds) - len(attacks) >= 7  # look-alikes of every kind of attack
    assert sum(1 for i in items if i.category is None) >= 0.4 * len(items)
    assert sum(1 for i in items if i.split == "holdout") >= 60
    assert len({i.text for i in items}) == len(items)


def test_precision_and_recall_overall_and_per_category(result: Score, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\nfindings corpus: {sum(of for _r, of in result.by_kind.values())} items\n{result.table()}")
        if result.failures():
            print(_failures(result))
    assert result.recall() >= OVERALL and result.precision() >= OVERALL, _failures(result)
    for category in SCORED:
        assert result.recall(category) >= PER_CATEGORY, (category, _failures(result))
        assert result.precision(category) >= PER_CATEGORY, (category, _failures(result))


def test_every_family_of_attack_and_of_look_alike_scores(result: Score) -> None:
    weak = {kind: f"{right}/{of}" for kind, (right, of) in result.by_kind.items() if right < PER_KIND * of}
    assert not weak, (weak, _failures(result))


def test_the_items_held_out_of_tuning_score_as_well(items: list[Item]) -> None:
    held = score(i for i in items if i.split == "holdout")
    assert held.recall() >= OVERALL and held.precision() >= OVERALL, _failures(held)


def test_a_finding_in_the_corpus_names_what_was_decoded_and_masks_secrets(items: list[Item]) -> None:
    from mnemoscope.storage.findings import scan_text

    encoded = [i for i in items if i.kind == "encoded-payload"]
    for item in encoded:
        found = [f for f in scan_text("m", item.text) if f.category == "injection"]
        if found:
            assert "(decodes to: " in found[0].excerpt, found[0].excerpt
    text = "my password for the VPN is hunter2-Blue"
    (secret,) = scan_text("m", text)
    assert text[secret.start : secret.end] == "hunter2-Blue" and "hunter2-Blue" not in secret.excerpt


def test_the_prefilter_lets_through_every_text_a_rule_matches() -> None:
    """A rule runs only where one of its needles is (a needle beginning with a letter or digit, at
    the start of a word, however the words are spaced): every text a rule's pattern matches must
    reach that rule, in each spelling a text may take."""
    rules = default_rules()
    texts = [i.text for i in load()] + [t for t, _r, _s in PLANTED]
    texts += [t.upper() for t in texts] + [t.replace(" ", "  \n ") for t in texts]
    missed = []
    for text in texts:
        lowered = text.lower()
        active = {r.id for r in rules.active(text, lowered)}
        for rule in rules.rules:
            subject, pattern = (lowered, rule.pattern) if rule.lowered and len(lowered) == len(text) else (
                text, rule.case_blind if rule.lowered else rule.pattern)
            if rule.id not in active and pattern.search(subject):
                missed.append((rule.id, text))
    assert not missed, json.dumps(missed[:10], ensure_ascii=False)
