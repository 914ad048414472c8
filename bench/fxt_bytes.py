#!/usr/bin/env python3
"""Where the bytes of an FXT trace go: records by kind, and for events the
header and timestamp, the extra word (end time, flow id, counter id) and
each argument by name. Prints a markdown table (--json: one JSON object).

    bench/fxt_bytes.py FILE.fxt [--json] [--requests N]

--requests N adds a bytes-per-request column. It reads the file in one
piece and walks it in Python: about 1 s per million records."""
import collections, json, struct, sys

RECORD = {0: "metadata", 1: "initialization", 2: "string", 3: "thread", 4: "event",
          7: "kernel object"}
EVENT = {0: "instant", 1: "counter", 2: "begin", 3: "end", 4: "slice", 5: "async begin",
         6: "async instant", 7: "async end", 8: "flow begin", 9: "flow step", 10: "flow end"}
ARG = {0: "null", 1: "int32", 2: "uint32", 3: "int64", 4: "uint64", 5: "double", 6: "string",
       7: "pointer", 8: "koid", 9: "bool"}


def walk(data):
    """Yields (offset, header word, words) for every record; raises on damage."""
    if len(data) < 8 or struct.unpack_from("<Q", data, 0)[0] != 0x0016547846040010:
        raise ValueError("not an FXT file (no magic word)")
    off, n = 8, len(data)
    while off < n:
        if off + 8 > n:
            raise ValueError(f"truncated record header at offset {off}")
        h = struct.unpack_from("<Q", data, off)[0]
        words = (h >> 4) & 0xFFF
        if words == 0 or off + words * 8 > n:
            raise ValueError(f"bad record size {words} at offset {off}")
        yield off, h, words
        off += words * 8


def analyse(data):
    strings = {}
    kinds = collections.Counter()       # record kind -> (count)
    kind_bytes = collections.Counter()
    # Per drawn event (name, event type): count, bytes; per part: bytes.
    ev_count = collections.Counter()
    ev_bytes = collections.Counter()
    parts = collections.defaultdict(collections.Counter)  # (name, type) -> part -> bytes
    for off, h, words in walk(data):
        rtype = h & 0xF
        size = words * 8
        if rtype == 2:
            idx, length = (h >> 16) & 0x7FFF, (h >> 32) & 0x7FFF
            strings[idx] = bytes(data[off + 8:off + 8 + length]).decode(errors="replace")
        if rtype != 4:
            kinds[RECORD.get(rtype, f"type {rtype}")] += 1
            kind_bytes[RECORD.get(rtype, f"type {rtype}")] += size
            continue
        etype = (h >> 16) & 0xF
        nargs = (h >> 20) & 0xF
        name = strings.get(h >> 48, f"#{h >> 48}")
        if etype in (8, 9, 10):
            name = "(flow)"
        label = EVENT.get(etype, f"event {etype}")
        kinds["event: " + label] += 1
        kind_bytes["event: " + label] += size
        key = (name, label)
        ev_count[key] += 1
        ev_bytes[key] += size
        p = parts[key]
        p["header + time"] += 16
        a = off + 16
        for _ in range(nargs):
            ah = struct.unpack_from("<Q", data, a)[0]
            asize = ((ah >> 4) & 0xFFF) * 8
            aname = strings.get((ah >> 16) & 0xFFFF, "?")
            p[f"{aname} ({ARG.get(ah & 0xF, '?')})"] += asize
            a += asize
        rest = off + size - a
        if rest:
            p[{4: "end time", 1: "counter id"}.get(etype, "flow id")] += rest
    return kinds, kind_bytes, ev_count, ev_bytes, parts


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    requests = None
    if "--requests" in args:
        requests = int(args[args.index("--requests") + 1])
    path = [a for a in args if not a.startswith("--") and a != str(requests)][0]
    with open(path, "rb") as f:
        data = memoryview(f.read())
    kinds, kind_bytes, ev_count, ev_bytes, parts = analyse(data)
    total = len(data)
    records = sum(kinds.values())
    if as_json:
        print(json.dumps({
            "bytes": total, "records": records,
            "kinds": {k: {"count": kinds[k], "bytes": kind_bytes[k]} for k in kinds},
            "events": [{"name": n, "type": t, "count": ev_count[(n, t)], "bytes": ev_bytes[(n, t)],
                        "parts": dict(parts[(n, t)])} for n, t in ev_count],
        }))
        return
    per_req = lambda b: f" | {b / requests:.1f}" if requests else ""
    req_head = " | bytes per request" if requests else ""
    req_rule = "|---:" if requests else ""
    print(f"{total:,} bytes, {records:,} records ({total / max(records, 1):.1f} bytes per record)\n")
    print(f"| record | count | bytes | bytes each{req_head} |")
    print(f"|---|---:|---:|---:{req_rule}|")
    for k, c in kinds.most_common():
        print(f"| {k} | {c:,} | {kind_bytes[k]:,} | {kind_bytes[k] / c:.1f}{per_req(kind_bytes[k])} |")
    print()
    print(f"| event | count | bytes each | parts (bytes each){req_head} |")
    print(f"|---|---:|---:|---{req_rule}|")
    for key, c in sorted(ev_count.items(), key=lambda kv: -ev_bytes[kv[0]]):
        name, label = key
        shares = ", ".join(f"{part} {b / c:.0f}" for part, b in parts[key].most_common())
        print(f"| {name} ({label}) | {c:,} | {ev_bytes[key] / c:.1f} | {shares}{per_req(ev_bytes[key])} |")


if __name__ == "__main__":
    main()
