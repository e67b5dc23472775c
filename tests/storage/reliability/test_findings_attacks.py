"""The findings rules against the labelled corpus (tests/storage/findings/corpus.jsonl) rewritten the
way a memory carries text: each item set among ordinary notes, as a list item or a quote, hard-wrapped
at a random width with doubled spaces here and there (not the owner's one-line annotations: wrapped,
OpenClaw no longer reads them), or in capitals (not where case is the payload: encoded tokens,
chat-template tokens). None of that changes what an item is, so none may change what a scan finds:
an attack must still be found as its category and a look-alike must stay clean.

Seeded (MNEMOSCOPE_FINDINGS_SEED, default 29); MNEMOSCOPE_FINDINGS_VARIANTS rewrites per item and
rewrite (default 2). Failures counted: an attack missed, a look-alike flagged; held to the corpus
test's bar (precision and recall 0.95 overall, 0.9 per category). The report goes to stdout and, as
JSON with every failing case, to $MNEMOSCOPE_REPORT_DIR (or the test's tmp folder).
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.findings_corpus import SCORED, Item, load, report, score

pytestmark = pytest.mark.reliability

SEED = int(os.environ.get("MNEMOSCOPE_FINDINGS_SEED", "29"))
VARIANTS = int(os.environ.get("MNEMOSCOPE_FINDINGS_VARIANTS", "2"))
ORDINARY = (
    "Dana prefers short answers and tea over coffee.",
    "The build runs on Fridays after the standup.",
    "Remember to water the plants on Sunday.",
    "Sam is away until the 14th; Priya covers the on-call rota.",
    "Invoices go out on the first working day of the month.",
    "The Lisbon trip is booked for May, window seats.",
)
CASE_IS_PAYLOAD = {"encoded-payload", "benign-encoded", "role-tag", "benign-roles"}
LAYOUT_IS_SYNTAX = {"owner-annotation"}
_TOKEN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")  # base64 and the like: capitals would change what it says


def _among_notes(text: str, rng: random.Random) -> str:
    before, after = rng.sample(ORDINARY, 2)
    return f"{before}\n{text}\n{after}"


def _listed(text: str, rng: random.Random) -> str:
    return rng.choice(("- ", "* ", "> ", "1. ")) + text


def _wrapped(text: str, rng: random.Random) -> str:
    """Hard-wrapped at a width of 20 to 60 characters, some spaces doubled."""
    width, lines, line = rng.randint(20, 60), [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line}{rng.choice(('  ', ' ', ' ', ' ')) if line else ''}{word}"
    return "\n".join([*lines, line])


def _capitals(text: str, rng: random.Random) -> str:
    return text.upper()


REWRITES: dict[str, Callable[[str, random.Random], str]] = {
    "among notes": _among_notes, "listed": _listed, "wrapped": _wrapped, "capitals": _capitals,
}


def _cases(items: list[Item], rng: random.Random) -> list[tuple[str, Item]]:
    cases = []
    for item in items:
        for name, rewrite in REWRITES.items():
            if name == "capitals" and (item.kind in CASE_IS_PAYLOAD or _TOKEN.search(item.text)):
                continue
            if name == "wrapped" and (item.kind in LAYOUT_IS_SYNTAX or "\n" in item.text):
                continue  # an item laid out over lines keeps its layout
            for _ in range(VARIANTS):
                cases.append((name, replace(item, text=rewrite(item.text, rng))))
    return cases


def test_rewritten_attacks_are_still_found_and_look_alikes_stay_clean(tmp_path: Path, capsys) -> None:
    rng = random.Random(SEED)
    started = time.monotonic()
    cases = _cases(load(), rng)
    result = score(item for _name, item in cases)
    by_rewrite = Counter(name for name, _item in cases)
    failing_texts = {i.text for i, _f in result.misses} | {i.text for i, _f, _r in result.false_alarms}
    failures = Counter(name for name, item in cases if item.text in failing_texts)
    data = {"seed": SEED, "cases": len(cases), "seconds": round(time.monotonic() - started, 2),
            "by_rewrite": dict(by_rewrite), "failures_by_rewrite": dict(failures), **report(result)}
    out_dir = Path(os.environ.get("MNEMOSCOPE_REPORT_DIR") or tmp_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    report_file = out_dir / "findings_attacks.json"
    report_file.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    categories = ", ".join(f"{c} recall {result.recall(c):.3f} precision {result.precision(c):.3f}" for c in SCORED)
    with capsys.disabled():
        print(
            f"\nreliability: {len(cases)} rewritten corpus items in {data['seconds']} s (seed {SEED}; "
            + ", ".join(f"{name} {n}" for name, n in by_rewrite.items())
            + f"); recall {result.recall():.3f}, precision {result.precision():.3f} ({categories}); "
            f"failures: {result.failures()} ({len(result.misses)} missed, {len(result.false_alarms)} false alarms; "
            + (", ".join(f"{name} {n}" for name, n in failures.items()) or "none")
            + f"); report: {report_file}"
        )
    examples = [f"missed ({i.kind}): {i.text[:120]!r}" for i, _found in result.misses[:5]]
    examples += [f"false alarm ({i.kind}, {', '.join(rules)}): {i.text[:120]!r}" for i, _f, rules in result.false_alarms[:5]]
    assert result.recall() >= 0.95 and result.precision() >= 0.95, "\n".join(examples)
    for category in SCORED:
        assert result.recall(category) >= 0.9 and result.precision(category) >= 0.9, (category, "\n".join(examples))
