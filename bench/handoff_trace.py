#!/usr/bin/env python3
"""Where the time of a lock handoff goes, read from a packet capture of the ZooKeeper port.

The benchmark drivers report handoffs per second; this splits one handoff into what the server and the clients
each spend, from the packets alone, so it applies to every library alike (zkrecipes, Curator, kazoo):

    delete -> event      the holder's delete request until the watch event reaches the next holder (server:
                         the write, its fsync and the notification)
    event -> request     the next holder's reaction: its next request after the event (client)
    read round trip      that request until its reply, when it is a read (server)
    reply -> delete      from that reply to the next holder's own delete (client: grant, the caller's critical
                         section, release)
    event -> delete      the same span when no request comes between the event and the delete (a grant
                         without a re-listing)

It also counts the segments the clients send per request: the ZooKeeper C client writes a frame's length and
body with two send() calls, so without corking every request takes two segments.

Capture one library's run at a time, on a fixed port (run_bench.py --port):

    tcpdump -i lo -s 0 -w /tmp/k8.pcap tcp port 22100 &
    python3 bench/run_bench.py --port 22100 --only contended-8 --reps 1 --libraries zkrecipes \\
        --zkr-bench build/bench/zkr_bench --out /tmp/k8
    kill %1
    python3 bench/handoff_trace.py /tmp/k8.pcap --port 22100

Reads classic pcap files (tcpdump -w), Ethernet or Linux cooked link types. Standard library only.
"""

import argparse
import collections
import statistics
import struct
import sys

OPCODES = {1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData", 8: "getChildren",
           11: "ping", 12: "getChildren2", 13: "check", 14: "multi", 15: "create2", 17: "setWatches",
           18: "removeWatches", 19: "createContainer", 21: "createTTL", 101: "setWatches", -11: "closeSession"}
READS = {3, 4, 8, 12}
PATH_FIRST = {1, 2, 3, 4, 5, 8, 12, 15, 19, 21}


def read_pcap(path, port):
    """Yields (time, client_port, to_server, payload, tcp_seq) for every TCP segment with data."""
    data = open(path, "rb").read()
    if len(data) < 24:
        raise SystemExit("%s: not a pcap file" % path)
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
    else:
        raise SystemExit("%s: not a classic pcap file (pcapng is not read; use tcpdump -w)" % path)
    nanos = magic in (0xA1B23C4D, 0x4D3CB2A1)
    link = struct.unpack_from(endian + "I", data, 20)[0]
    skip = {1: 14, 113: 16, 276: 20}.get(link)
    if skip is None:
        raise SystemExit("%s: link type %d is not read (capture on lo or an Ethernet device)" % (path, link))
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack_from(endian + "IIII", data, off)
        off += 16
        pkt = data[off:off + incl]
        off += incl
        ip = pkt[skip:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue  # IPv4 TCP only: the servers here listen on 127.0.0.1
        ihl = (ip[0] & 15) * 4
        total = struct.unpack_from(">H", ip, 2)[0]
        tcp = ip[ihl:total]
        if len(tcp) < 20:
            continue
        sport, dport, seq = struct.unpack_from(">HHI", tcp, 0)
        payload = tcp[(tcp[12] >> 4) * 4:]
        if not payload:
            continue
        t = sec + frac / (1e9 if nanos else 1e6)
        if dport == port:
            yield t, sport, True, payload, seq
        elif sport == port:
            yield t, dport, False, payload, seq


def decode(path, port):
    """Returns the time-ordered events (t, conn, kind, opcode_or_event_type, xid, path) and segment counts."""
    streams = collections.defaultdict(list)
    seen = set()
    for t, conn, up, payload, seq in read_pcap(path, port):
        if (conn, up, seq) in seen:
            continue  # a retransmission
        seen.add((conn, up, seq))
        streams[(conn, up)].append((t, payload))
    events = []
    opcode_of = {}
    segments = collections.Counter()
    for (conn, up), segs in streams.items():
        buf = b""
        first = True
        for t, payload in segs:
            if up:
                segments["segments"] += 1
            buf += payload
            while len(buf) >= 4:
                n = struct.unpack_from(">i", buf, 0)[0]
                if n < 0 or len(buf) < 4 + n:
                    break
                frame, buf = buf[4:4 + n], buf[4 + n:]
                if first:  # ConnectRequest / ConnectResponse: no header
                    first = False
                    continue
                if up:
                    if len(frame) < 8:
                        continue
                    xid, op = struct.unpack_from(">ii", frame, 0)
                    p = read_string(frame, 8) if op in PATH_FIRST else ""
                    opcode_of[(conn, xid)] = op
                    segments["requests"] += 1
                    events.append((t, conn, "req", op, xid, p))
                elif len(frame) >= 16:
                    xid = struct.unpack_from(">i", frame, 0)[0]
                    if xid == -1 and len(frame) >= 24:  # a watch event: type, state, path
                        etype = struct.unpack_from(">i", frame, 16)[0]
                        events.append((t, conn, "event", etype, xid, read_string(frame, 24)))
                    else:
                        events.append((t, conn, "reply", opcode_of.get((conn, xid), 0), xid, ""))
    events.sort(key=lambda e: e[0])
    return events, segments


def read_string(frame, at):
    if len(frame) < at + 4:
        return ""
    n = struct.unpack_from(">i", frame, at)[0]
    return frame[at + 4:at + 4 + n].decode("utf-8", "replace") if n > 0 else ""


def handoffs(events):
    """Each delete followed by the next delete of another session: the spans of that handoff."""
    deletes = [i for i, e in enumerate(events) if e[2] == "req" and e[3] == 2]
    spans = collections.defaultdict(list)
    for a, b in zip(deletes, deletes[1:]):
        t0, holder, _, _, _, node = events[a]
        t5, nxt = events[b][0], events[b][1]
        if nxt == holder:
            continue
        # The event that woke the next holder: a deletion event for the deleted node on its connection.
        ev = next((j for j in range(a + 1, b) if events[j][1] == nxt and events[j][2] == "event"
                   and events[j][5] == node), None)
        if ev is None:
            continue
        t2 = events[ev][0]
        spans["handoff (delete to next delete)"].append(t5 - t0)
        spans["  delete -> event"].append(t2 - t0)
        between = [j for j in range(ev + 1, b) if events[j][1] == nxt and events[j][2] == "req"]
        if not between:
            spans["  event -> delete (no request between)"].append(t5 - t2)
            continue
        first = between[0]
        spans["  event -> request"].append(events[first][0] - t2)
        reply = next((j for j in range(first + 1, len(events)) if events[j][1] == nxt
                      and events[j][2] == "reply" and events[j][4] == events[first][4]), None)
        if reply is None or reply > b:
            continue
        op = events[first][3]
        label = "read round trip" if op in READS else "round trip"
        spans["  %s (%s)" % (label, OPCODES.get(op, op))].append(events[reply][0] - events[first][0])
        spans["  reply -> delete (%d more request(s))" % (len(between) - 1)].append(t5 - events[reply][0])
    return spans


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcap", help="capture of the ZooKeeper port (tcpdump -w)")
    ap.add_argument("--port", type=int, required=True, help="the ZooKeeper server's client port")
    args = ap.parse_args()
    events, segments = decode(args.pcap, args.port)
    requests = collections.Counter(OPCODES.get(e[3], str(e[3])) for e in events if e[2] == "req")
    n_events = sum(1 for e in events if e[2] == "event")
    print("requests: %s; watch events: %d" % (", ".join("%s %d" % kv for kv in requests.most_common()), n_events))
    if segments["requests"]:
        print("client segments per request: %.2f (%d segments, %d requests)" % (
            segments["segments"] / segments["requests"], segments["segments"], segments["requests"]))
    spans = handoffs(events)
    if not spans:
        print("no handoffs found (a delete followed by another session's delete, woken by its event)")
        return 1
    print("%-44s %7s %9s %9s" % ("span", "n", "p50 µs", "mean µs"))
    for name, v in spans.items():
        print("%-44s %7d %9.0f %9.0f" % (name, len(v), 1e6 * statistics.median(v), 1e6 * statistics.mean(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
