"""Human-readable renderings of the CLI's JSON documents."""

from __future__ import annotations

import json
from typing import Any

from mnemoscope.storage import shown as field


def _clip(text: str, width: int) -> str:
    """text on one line, at most width terminal columns (a CJK character or an emoji takes two)."""
    from rich.cells import cell_len, set_cell_size

    text = " ".join(str(text).split())
    return text if cell_len(text) <= width else set_cell_size(text, width - 1) + "…"


def _table(rows: list[list[str]], headers: list[str]) -> str:
    """Columns aligned by the terminal columns each cell takes (rich's width tables), not by len."""
    from rich.cells import cell_len

    widths = [max(cell_len(h), *(cell_len(r[i]) for r in rows)) if rows else cell_len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c + " " * (w - cell_len(c)) for c, w in zip(cells, widths, strict=False)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def info(data: dict[str, Any]) -> str:
    counts = data["counts"]
    out = [f"{data['path']}", f"  kinds: {', '.join(data['kinds'])}", f"  memories: {data['total']} ({data.get('counted', 'every status')})"]
    out += [f"  {part['line']}" for part in data.get("unread", [])]  # not in the count above: not read at all
    for title, key in (("per kind", "kinds"), ("per channel", "channels"), ("per layer", "layers"), ("per status", "statuses")):
        parts = ", ".join(f"{k} {v}" for k, v in sorted(counts[key].items()))
        out.append(f"  {title}: {parts}")
    if "schema_version" in data:
        out.append(f"  memory.db schema version: {data['schema_version']}")
        out.append("  tables: " + ", ".join(f"{k} {v}" for k, v in data["tables"].items()))
    for col in data.get("collections", []):
        embedder = col["embedder"] or "none that runs offline here"
        out.append(
            f"  chroma collection {col['name']}: {col['count']} records (vector copies of memory.db memories "
            f"included; each memory is counted once above); embedder: {embedder}"
        )
    if data.get("markdown_files"):
        out.append(f"  markdown files: {len(data['markdown_files'])}")
    out += [f"  problem: {problem}" for problem in data.get("problems", [])]
    for fmt in data.get("formats", []):
        out.append(f"  {fmt['label']}: {', '.join(fmt['files'])}")
        if not fmt["read_only"]:
            editable = f"{', '.join(fmt['editable_fields'])} editable" if fmt["editable_fields"] else "nothing editable"
            out.append(f"    curation: {editable}; delete removes the record (undoable)")
        for problem in fmt["problems"]:
            out.append(f"    problem: {problem}")
        out += [f"    {line}" for line in fmt.get("owner_view", [])]  # the owner's own view (SynthOrg's)
    if data.get("sessions"):
        out.append(f"  sessions: {data['sessions']}")
    for kind, caps in data["capabilities"].items():
        if caps["read_only"]:
            out.append(f"  {kind} is read-only: {caps['read_only_reason']}")
    out.append(f"  journal: {data['journal']['entries']} entries in {data['journal']['location']}")
    return "\n".join(out)


def memory_table(data: dict[str, Any]) -> str:
    rows = [
        [
            m["id"],
            m["layer"],
            m["channel"],
            m["source"].get("format") or m["source"]["kind"],
            field(m["salience"], ".2f"),
            m["updated_at"][:10],
            m["status"] if m["status"] != "active" else "",
            _clip(m["content"], 60),
        ]
        for m in data["memories"]
    ]
    shown = f"{data['offset'] + 1}-{data['offset'] + len(rows)}" if rows else "none"
    table = _table(rows, ["ID", "LAYER", "CHANNEL", "KIND", "SAL(STORED)", "UPDATED", "STATUS", "CONTENT"])
    return f"{table}\n({shown} of {data['total']})"


def promotion_candidates(data: dict[str, Any]) -> str:
    t = data["thresholds"]
    rows = [
        [m["id"], m["channel"], field(m["confidence"], ".2f"), field(m["access_count"]), field(m["conversations"]),
         _clip(m["content"], 60)]
        for m in data["candidates"]
    ]
    head = (f"Project facts meeting every promotion threshold (confidence >= {t['confidence']:g}, "
            f"access_count >= {t['access_count']}, conversations >= {t['conversations']}):")
    if not rows:
        return head + "\n(none)"
    return f"{head}\n{_table(rows, ['ID', 'CHANNEL', 'CONF', 'ACCESSES', 'CONVS', 'CONTENT'])}\n({len(rows)})"


def _salience(m: dict[str, Any]) -> str:
    """show's salience: stored and effective now (Mnemoscope's decay), or as its owner keeps it."""
    if m.get("salience_decay", "mnemoscope") == "mnemoscope":
        return f"{field(m['salience'], '.2f')} (effective now {field(m['salience_now'], '.3f')})"
    return f"{field(m['salience'], '.2f')} ({m['salience_formula']})"


def memory_detail(m: dict[str, Any]) -> str:
    out = [
        f"{m['id']}  [{m['status']}]",
        f"  {m['content']}",
        f"  layer {m['layer']}, channel {m['channel']}, tags {', '.join(m['tags']) or '-'}",
        f"  source: {m['source'].get('format') or m['source']['kind']} {m['source']['location']}",
        f"  created {m['created_at']}, updated {m['updated_at']}, last accessed {m['last_accessed']}",
        f"  salience {_salience(m)}, "
        f"confidence {field(m['confidence'], '.2f')}, accesses {field(m['access_count'])}, "
        f"conversations {field(m['conversations'])}",
        f"  revision {m['revision']}",
    ]
    prov = m["provenance"]
    for key in ("promoted_from", "imported_from"):
        if prov.get(key):
            out.append(f"  {key.replace('_', ' ')}: {prov[key]}")
    if prov.get("derived_from"):
        out.append(f"  derived from: {', '.join(prov['derived_from'])}")
    for copy in m.get("copies", []):
        out.append(f"  copy: {copy['kind']} {copy.get('record') or copy.get('file')} {copy.get('state') or ''}".rstrip())
    promo = m["promotion"]
    out.append(
        "  promotion thresholds: "
        + ", ".join(f"{k} {field(None)} (not kept)" if promo["values"][k] is None
                    else f"{k} {promo['values'][k]} {'>=' if ok else '<'} {promo['thresholds'][k]}"
                    for k, ok in promo["met"].items())
    )
    for r in m.get("relations", []):
        out.append(f"  relation: {r['source']} -{r['type']}-> {r['target']}")
    for key, value in sorted(m.get("metadata", {}).items()):
        out.append(f"  {key}: {_clip(str(value), 100)}")
    if m.get("owner_history"):
        out.append(f"  {m['source'].get('format')} history:")
        for e in m["owner_history"]:
            change = (f" {_clip(repr(e.get('old_memory') or '') + ' -> ' + repr(e.get('new_memory') or ''), 90)}"
                      if e.get("old_memory") or e.get("new_memory") else "")
            out.append(f"    {e.get('updated_at') or e.get('created_at')} {e.get('event')}{change}")
    if m["history"]:
        out.append("  history:")
        for e in m["history"]:
            out.append(f"    #{e['seq']} {e['at']} {e['operation']} ({e['state']}) by {e['actor']}")
    return "\n".join(out)


def search_results(data: dict[str, Any]) -> str:
    rows = [
        [str(i), h["id"], h["channel"], f"{h['score']:.2f}", h.get("strength", ""), _clip(h["content"], 70)]
        for i, h in enumerate(data["hits"], 1)
    ]
    head = f"mode: {data['mode']}\n"
    if data.get("score"):
        head += f"score: {data['score']}\n"
    if data.get("embedder"):
        head += f"ranked by: {data['embedder']}\n"
    if data.get("floor") and data["floor"].startswith("not fitted"):
        head += f"vector floor: {data['floor']}\n"
    weak = len(data["hits"]) - data.get("matched", len(data["hits"]))
    head += f"matches: {data.get('matched', len(data['hits']))}" + (f"; weak matches shown: {weak}" if weak else "") + "\n"
    return head + _table(rows, ["#", "ID", "CHANNEL", "SCORE", "MATCH", "CONTENT"]) if rows else head.rstrip("\n")


def embedder(data: dict[str, Any]) -> str:
    """The store's embedder, and what each vector collection records about its own."""
    chosen = data["embedder"]
    if chosen is None:
        lines = [f"{data['path']}: no embedder set (text queries use one a collection records, if it runs here)"]
    else:
        where = f" at {chosen['url']}" if chosen["url"] else ""
        dims = f", {chosen['dimensions']} dimensions" if chosen["dimensions"] else ""
        lines = [f"{data['path']}: embedder {chosen['model']}{dims}{where}"]
        lines.append(f"  {data['label']}" if data["runs_here"] else "  (it does not run here)")
    rows = [
        [c["collection"], c["model"] or "-", str(c["dimensions"] or "-"), c["recorded"] or "-"]
        for c in data["collections"]
    ]
    if rows:
        lines += ["", _table(rows, ["COLLECTION", "MODEL", "DIMENSIONS", "RECORDED AS"])]
    return "\n".join(lines)


def timeline(data: dict[str, Any]) -> str:
    peak = max((b["memories"] for b in data["bins"]), default=0) or 1
    rows = [
        [
            b["bin"],
            str(b["memories"]),
            str(b["turns"]),
            "#" * max(1, round(30 * b["memories"] / peak)) if b["memories"] else "",
            ", ".join(f"{k} {v}" for k, v in b["counts"].items()),
        ]
        for b in data["bins"]
    ]
    text = _table(rows, [data["bin"].upper(), "MEMORIES", "TURNS", "", f"BY {data['group_by'].upper()}"])
    if "events" in data:
        text += f"\n\nmemories in {data['events']['bin']}:"
        for m in data["events"]["memories"]:
            text += f"\n  {m['created_at'][:16]}  {m['source']['kind']:8}  {m['id']}  {_clip(m['content'], 60)}"
    return text


def graph(data: dict[str, Any]) -> str:
    names = {n["id"]: n.get("name", n["id"]) for n in data["nodes"]}
    out = [f"{len(data['nodes'])} entities, {len(data['edges'])} relations"]
    if data.get("center"):
        out[0] += f" within depth {data['depth']} of {names.get(data['center'], data['center'])}"
    if data.get("hidden_nodes"):
        out.append(f"({data['hidden_nodes']} more not shown)")
    for e in data["edges"]:
        out.append(f"  {names.get(e['source'])} -{e['type']}-> {names.get(e['target'])}")
    if data.get("graphml"):
        out.append(f"GraphML written to {data['graphml']}")
    return "\n".join(out)


def sessions(data: dict[str, Any]) -> str:
    if "turns" in data:
        out = [f"{data['session']['id']}  {data['session']['title']}  ({data['session']['turn_count']} turns)"]
        if data["session"].get("compaction"):
            out.append(f"  compaction: {data['session']['compaction']['text']}")
        for t in data["turns"]:
            kind = f" [{t['kind']}]" if t.get("kind", "message") != "message" else ""
            out.append(f"  #{t['index']} {t['timestamp'][:19]} {t['role']}{kind}: {_clip(t['content'], 100)}")
        return "\n".join(out)
    rows = [
        [s["id"], s["channel"] or "-", str(s["turn_count"]), (s["started_at"] or "")[:19], _clip(s["title"] or "", 50)]
        for s in data["sessions"]
    ]
    headers = ["SESSION", "CHANNEL", "TURNS", "STARTED", "TITLE"]
    if any(s.get("compaction") for s in data["sessions"]):  # the owner compacts sessions (AgenticX)
        headers.append("UNTIL COMPACTION")
        for row, s in zip(rows, data["sessions"], strict=True):
            row.append(s["compaction"]["brief"] if s.get("compaction") else "—")
    return _table(rows, headers) if rows else "no sessions"


def scratchpad(data: dict[str, Any]) -> str:
    out = []
    for s in data["sessions"]:
        out.append(f"{s['id']}  {s.get('title') or ''}  [{s.get('channel') or '-'}]")
        for e in s["entries"]:
            label = f"  ({e['label']})" if e["pattern"] else ""
            expiry = f"  [TTL {e['ttl_seconds']}s, expires {e['expires_at'][:19]}]" if e.get("expires_at") else ""
            out.append(f"  {e['key']}{label}{expiry}")
            out.append(f"    {_clip(e['value'], 100)}")
    return "\n".join(out) if out else "no scratchpad entries"


def scratch_outcome(data: dict[str, Any]) -> str:
    d = data["details"]
    done = "deleted" if d["to"] is None else "added" if d["from"] is None else "set"
    lines = [f"{done} {d['key']} of session {d['session_id']} (journal #{data['seq']}; undo: mnemoscope undo)"]
    if d["from"] is not None:
        lines.append(f"  was: {_clip(d['from'], 100)}")
    if d["to"] is not None:
        lines.append(f"  now: {_clip(d['to'], 100)}")
    return "\n".join(lines)


def salience_one(r: dict[str, Any]) -> str:
    if r.get("kind") == "entity":
        flag = "; cleanup candidate" if r["cleanup_candidate"] else ""
        return "\n".join([
            f"{r['id']} ({r['name']}): entity salience {r['effective']:.3f} at {r['at'][:10]} "
            f"(stored {r['stored_salience']:.2f}, last accessed {(r['last_accessed'] or 'never')[:10]}){flag}",
            f"  {r['formula']}",
        ])
    if r["effective"] is None:  # its owner keeps no salience
        return f"{r['id']}: {r['formula']}"
    if r.get("decay", "mnemoscope") != "mnemoscope":  # the owner's own, decayed by the owner
        return "\n".join([
            f"{r['id']}: salience {r['effective']:.3f} at {r['at'][:10]} "
            f"({field(r['access_count'])} accesses, last {r['last_accessed'][:10]})",
            f"  {r['formula']}; no crossing date or cleanup call of Mnemoscope's",
        ])
    lines = [
        f"{r['id']}: effective {r['effective']:.3f} at {r['at'][:10]} (stored {r['stored_salience']:.2f}, "
        f"{field(r['access_count'])} accesses, last {r['last_accessed'][:10]})",
        f"  falls below {r['model']['cleanup_threshold']} on {(r['crosses_threshold_at'] or 'never')[:10]}; "
        f"cleanup candidate from {(r['cleanup_candidate_from'] or 'never')[:10]}",
        f"  {r['formula']} (half-life {r['model']['half_life_days']} days)",
    ]
    if "confidence" in r:
        c = r["confidence"]
        lines.append(f"  inferred fact: confidence {field(c['effective'], '.3f')} (stored {field(c['stored'], '.2f')}); "
                     f"{c['formula']}")
    return "\n".join(lines)


def salience_overview(data: dict[str, Any]) -> str:
    peak = max((b["count"] for b in data["histogram"]), default=0) or 1
    out = [f"effective salience at {data['at'][:10]}:"]
    for b in data["histogram"]:
        out.append(f"  {b['from']:.1f}-{b['to']:.1f}  {b['count']:6d}  {'#' * round(30 * b['count'] / peak)}")
    if data.get("without_salience"):
        out.append(f"  ({data['without_salience']} active memories keep no salience: their stores do not score them)")
    out.append("most at risk:")
    for r in data["at_risk"]:
        flag = " cleanup candidate" if r["cleanup_candidate"] else ""
        whose = " (the owner's, as it keeps it)" if r.get("decay", "mnemoscope") != "mnemoscope" else ""
        out.append(f"  {r['effective']:.3f}  {r['id']}  {_clip(r['content'], 50)}{flag}{whose}")
    if data["entities_at_risk"]:
        out.append("entities most at risk:")
        for r in data["entities_at_risk"]:
            flag = " cleanup candidate" if r["cleanup_candidate"] else ""
            out.append(f"  {r['effective']:.3f}  {r['id']}  {_clip(r['name'], 50)}{flag}")
    out.append("decay:")
    out += [f"  {name}: {formula}" for name, formula in data["formulas"].items()]
    return "\n".join(out)


def outcome(data: dict[str, Any]) -> str:
    text = f"{data['operation']} done (journal #{data['seq']})"
    if data["ids"]:
        text += ": " + ", ".join(data["ids"])
    return text


def history(data: dict[str, Any]) -> str:
    rows = [
        [str(e["seq"]), e["at"][:19], e["operation"], e["state"], e["actor"], ", ".join(e["targets"])]
        for e in data["entries"]
    ]
    out = _table(rows, ["#", "AT", "OPERATION", "STATE", "ACTOR", "TARGETS"]) if rows else "no curation steps yet"
    return out + owner_audit(data.get("owner_audit") or [])


def owner_audit(entries: list[dict[str, Any]]) -> str:
    """The owner's own audit trail, apart from Mnemoscope's journal: each row as the owner wrote it,
    with the configuration it snapshotted."""
    if not entries:
        return ""
    out = [f"\n\n{entries[0].get('owner') or 'The owner'}'s own audit log (newest first):"]
    for e in entries:
        channels = ", ".join(e.get("target_channels") or [])
        out.append(f"  {str(e.get('created_at') or '')[:19]}  {e.get('event') or ''} {e.get('memory_type') or ''}"
                   f"{f' [{channels}]' if channels else ''}  {_clip(e.get('new_memory') or '', 120)}")
        if e.get("config_snapshot"):
            out.append(f"      config snapshot: {json.dumps(e['config_snapshot'], sort_keys=True)}")
    return "\n".join(out)


def discovered(data: dict[str, Any]) -> str:
    from mnemoscope.storage.detect.discover import human_size, memories_shown

    rows = [
        [
            f["tool"],
            f["path"],
            memories_shown(f["memories"], f.get("unread", [])),
            human_size(f["size"]),
            (f["last_write"] or "")[:16].replace("T", " "),
        ]
        for f in data["stores"]
    ]
    if not rows:
        return "no memory stores found"
    problems = [f"  {f['path']}: {f['problem']}" for f in data["stores"] if f["problem"]]
    unread = [f"  {f['path']}: {line}" for f in data["stores"] for line in f.get("unread", [])]
    table = _table(rows, ["TOOL", "PATH", "MEMORIES", "SIZE", "LAST WRITE"])
    return "\n".join([table, f"({len(rows)} stores)", *(["could not be counted:", *problems] if problems else []),
                      *(["not read here:", *unread] if unread else [])])


def exported(data: dict[str, Any]) -> str:
    return f"exported {data['exported']} memories ({', '.join(data['statuses'])}) as {data['format']} to {data['out']}"


def imported(data: dict[str, Any]) -> str:
    out = [f"imported {data['imported']} memories; {data['already_present']} were already there"]
    for reason, n in data["skipped"].items():
        out.append(f"skipped {n}: {reason}")
    if data["sessions"] or data["entities"] or data["relations"]:
        out.append(f"also {data['sessions']} sessions, {data['entities']} entities, {data['relations']} relations")
    return "\n".join(out)


def table_mapping(data: dict[str, Any]) -> str:
    """mnemoscope map: the columns each memory field is read from, and a preview."""
    fields = list(data["mapping"])
    rows = [[_clip(str(row.get(f, "")), 40) for f in fields] for row in data["preview"]]
    out = [f"{data['path']}: table {data['table']}",
           *(f"  {f:<13} <- {column}" for f, column in data["mapping"].items()),
           "  " + _mapping_access(data),
           "", _table(rows, [f.upper() for f in fields]) if rows else "(the table is empty)", ""]
    if data["saved_to"]:
        out.append(f"Remembered (in {data['saved_to']}): every command now opens {data['path']} with this mapping.")
    else:
        out.append(f"Correct it with --table and --map FIELD=COLUMN,...; remember it with: mnemoscope map {data['path']} --save")
    return "\n".join(out)


def _mapping_access(data: dict[str, Any]) -> str:
    if data["writable"]:
        return "editable and deletable by its id column"
    id_column = data["mapping"].get("id")
    if id_column:
        return (f"read-only: the id column {id_column} is neither the table's primary key nor UNIQUE, so one id "
                "may name several rows (map a unique column to edit and delete: --map id=COLUMN)")
    return "read-only (map an id column to edit and delete: --map id=COLUMN)"


def credentials_status(data: dict[str, Any]) -> str:
    out = [f"keyring: {data['backend']}"]
    if data["usable"]:
        out.append(f"  usable: {data['why']}")
    else:
        out.append(f"  not usable: {data['why']}; secrets are asked for each time they are needed")
    names = data["names"]
    out.append(f"  names stored through Mnemoscope ({data['names_file']}): {', '.join(names) if names else 'none'}")
    return "\n".join(out)


def credential_stored(data: dict[str, Any]) -> str:
    return f"Stored the secret for {data['name']} in the keyring: {data['stored_in']}."


def credential_forgotten(data: dict[str, Any]) -> str:
    return f"Deleted the secret for {data['name']} from the keyring."


def findings(data: dict[str, Any]) -> str:
    """scan: findings grouped by severity, worst first."""
    out = []
    for severity in ("high", "medium", "low"):
        rows = [
            [f["fingerprint"], f["rule"], f["memory_id"], f"{f['start']}:{f['end']}",
             _clip(f["excerpt"], 70) + ("  (accepted)" if f["accepted"] else "")]
            for f in data["findings"] if f["severity"] == severity
        ]
        if rows:
            out += [f"{severity.upper()} ({len(rows)})", _table(rows, ["FINGERPRINT", "RULE", "MEMORY", "SPAN", "EXCERPT"]), ""]
    counts = ", ".join(f"{n} {s}" for s, n in data["counts"].items() if n)
    summary = f"{data['scanned']} memories scanned (rules v{data['rules_version']}): "
    summary += f"new findings: {counts}" if counts else "no new finding"
    if data["accepted_hidden"]:
        summary += f"; {data['accepted_hidden']} accepted in the baseline hidden (--all shows them)"
    return "\n".join([*out, summary])


def finding_rules(data: dict[str, Any]) -> str:
    rows = [[r["id"], r["category"], r["severity"], r["title"]] for r in data["rules"]]
    return f"rules version {data['version']}\n" + _table(rows, ["RULE", "CATEGORY", "SEVERITY", "WHAT"])


def consistency(data: dict[str, Any]) -> str:
    """check: findings grouped by kind, with counts; what a repair did; advice for the rest."""
    out = []
    if data.get("repair"):
        repaired = ", ".join(f"{kind} {n}" for kind, n in data["repair"]["details"]["kinds"].items())
        out += [f"repaired ({repaired}) as journal step #{data['repair']['seq']}; `mnemoscope undo` reverts it", ""]
    for kind in data["kinds"]:
        out.append(f"{kind['kind']} ({kind['count']}): {kind['title']} [{kind['severity']}]")
        rows = [[item["record"], _clip(item["detail"], 90)] for item in kind["items"]]
        out += ["  " + line for line in _table(rows, ["RECORD", "DETAIL"]).splitlines()]
        if kind["advice"]:
            out.append(f"  advice: {kind['advice']}")
        if kind["repairable"]:
            asked = "" if kind.get("by_default", True) else f" (only by name, not --repair-all: it will {kind['repair']})"
            out.append(f"  repair: mnemoscope check --repair {kind['kind']}{asked}")
        out.append("")
    checked = ", ".join(f"{n:,} {what}" for what, n in data["checked"].items())
    out += [f"note: {note}" for note in data["skipped"]]
    out.append(f"checked {checked}: " + ("consistent" if data["clean"] else f"{data['total']} inconsistencies"))
    return "\n".join(out)


def recall_results(data: dict[str, Any]) -> str:
    """mnemoscope recall: the ranked list with each hit's formula, then near misses and what was dropped."""
    scope = ", ".join(f"{k} {v}" for k, v in data["scope"].items())
    head = [f"system: {data['system']}" + (f" ({scope})" if scope else ""),
            f"rules: {data['rules']}", f"from: {data['documented_by']}"]
    if data.get("embedder"):
        head.append(f"ranked by: {data['signal']} ({data['embedder']})")
    out = ["\n".join(head), ""]
    rows = [[str(i), h["id"], h["channel"], f"{h['score']:.3f}", _clip(h["content"], 60)]
            for i, h in enumerate(data["hits"], 1)]
    out.append(_table(rows, ["#", "ID", "CHANNEL", "SCORE", "CONTENT"]) if rows else "The agent would be given nothing.")
    if rows:
        out += ["", "why:"] + [f"  {i}. {h['explanation']}" for i, h in enumerate(data["hits"], 1)]
    if data["near_misses"]:
        out += ["", "near misses (just under the cut):"]
        out += [f"  {h['id']}  {h['score']:.3f}  {_clip(h['content'], 50)}  ({h['explanation']})" for h in data["near_misses"]]
    if data["dropped"]:
        out += ["", f"dropped ({len(data['dropped'])}):"]
        out += [f"  {d['id']}  {_clip(d['content'], 40)}: {d['reason']}" for d in data["dropped"]]
    for title, hits in data.get("extra", {}).items():
        if hits:
            out += ["", f"{title}:"] + [f"  {h['id']}  {_clip(h['content'], 50)}  ({h['explanation']})" for h in hits]
    return "\n".join(out)


def recall_explained(data: dict[str, Any]) -> str:
    """mnemoscope recall --explain ID: where one memory stands, and its score's terms."""
    lines = [f"{data['id']} ({data['system']}): {data['status']}"]
    if data.get("explanation"):
        lines.append(f"  score: {data['explanation']}")
    if data.get("found_by"):
        lines.append(f"  found by: {data['found_by']}")
    return "\n".join(lines)
