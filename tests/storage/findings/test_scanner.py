"""Scanning text: each planted item is found by its rule with the right span, links to allowed hosts
are left alone, fingerprints hold across offsets, and excerpts mask secrets and spell out hidden
characters."""

from __future__ import annotations

import pytest
from helpers.findings_planted import PLANTED
from mnemoscope.storage.findings import fingerprint, mask, scan_text
from mnemoscope.storage.findings.scanner import excerpt, host_allowed, shannon_entropy


@pytest.mark.parametrize("index", range(len(PLANTED)), ids=[rule for _t, rule, _s in PLANTED])
def test_scan_text_finds_each_planted_item_with_its_rule_and_span(index: int) -> None:
    text, rule, span = PLANTED[index]
    matching = [f for f in scan_text("m-1", text) if f.rule == rule]
    assert matching, f"{rule} not found in {text!r}"
    assert text[matching[0].start : matching[0].end] == span
    assert matching[0].memory_id == "m-1"


def test_plain_prose_has_no_finding() -> None:
    assert scan_text("m", "Dana prefers short answers and tea over coffee; the build runs on Fridays.") == []


def test_allowed_hosts_silence_links_to_them() -> None:
    text = "Docs: https://docs.example.com/a and https://evil.example.net/b"
    flagged = [text[f.start : f.end] for f in scan_text("m", text, allowed_hosts=["example.com"])]
    assert flagged == ["https://evil.example.net/b"]



def test_a_host_is_allowed_with_its_subdomains_only() -> None:
    assert host_allowed("docs.Example.com.", ["example.com"])
    assert host_allowed("example.com", [".EXAMPLE.com"])
    assert not host_allowed("badexample.com", ["example.com"])
    assert not host_allowed("example.com", ["", "."])


def test_a_fingerprint_names_what_matched_where_not_its_offset() -> None:
    secret = "AKIAZ7QX4R2M9TLW3KPD"
    first = scan_text("m", f"key {secret}")
    moved = scan_text("m", f"The deploy user's access key is {secret}, rotated in May.")
    assert {f.fingerprint for f in first} == {f.fingerprint for f in moved}
    assert fingerprint("secret.aws-access-key", "m", secret) in {f.fingerprint for f in first}
    assert fingerprint("secret.aws-access-key", "other", secret) not in {f.fingerprint for f in first}


def test_excerpts_mask_secrets_and_spell_out_hidden_characters() -> None:
    secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
    (found,) = [f for f in scan_text("m", f"Stripe prod key: {secret}") if f.rule == "secret.stripe-live-key"]
    assert secret not in found.excerpt and mask(secret) in found.excerpt == f"Stripe prod key: {mask(secret)}"
    hidden = "pass\u200bword reset"
    assert excerpt(hidden, 4, 5) == "pass<U+200B>word reset"
    long = "a" * 60 + " NEEDLE " + "b" * 60
    shown = excerpt(long, 61, 67)
    assert shown.startswith("…") and shown.endswith("…") and "NEEDLE" in shown and len(shown) < len(long)


def test_entropy_tells_random_tokens_from_repeated_letters() -> None:
    assert shannon_entropy("aaaaaaaa") == 0
    assert shannon_entropy("abcd") == 2
    assert shannon_entropy("9fQ2xL7vK4mT8nR1sW6yB3cD5eH0jA") > 4
