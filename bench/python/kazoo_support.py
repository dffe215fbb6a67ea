"""kazoo_bench's support: the issue-649 fix of kazoo's ReadLock, the process's CPU time, ZooKeeper's `mntr`
counters and the nearest-rank percentile every driver computes the same way."""

import math
import re
import socket
import time

from kazoo.recipe.lock import ReadLock
from kazoo.retry import ForceRetryError


class FixedReadLock(ReadLock):
    """kazoo's ReadLock with issue 649 fixed (the bug is in 2.8.0, as shipped by Debian 12).

    2.8.0's ReadLock matches only writer nodes as contenders, so it never finds its own node among
    them and ends up waiting for the last writer in the queue, even one queued *after* it; that
    writer waits for the reader: deadlock. Here a reader waits for the nearest writer queued before
    it (by sequence number), which is the read-lock rule of kazoo's WriteLock and of Curator.
    """

    _QUEUE_RE = re.compile(r"(__lock__|__rlock__)(-?\d{10})$")

    def _get_predecessor(self, node):
        entries = []
        found_self = False
        for child in self.client.get_children(self.path):
            m = self._QUEUE_RE.search(child)
            if m is None:
                continue
            entries.append((int(m.group(2)), m.group(1), child))
            if child == node:
                found_self = True
        if not found_self:
            raise ForceRetryError()
        predecessor = None
        for _, kind, child in sorted(entries):
            if child == node:
                break
            if kind == "__lock__":
                predecessor = child
        return predecessor


def cpu_seconds():
    """User + system CPU time of this process (os.times() has only 10 ms ticks; this is the same
    sum from CLOCK_PROCESS_CPUTIME_ID)."""
    return time.process_time()


def read_mntr(address):
    """ZooKeeper's `mntr` four-letter word as a dict of the numeric values."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"mntr")
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    out = {}
    for line in data.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition("\t")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            pass
    return out


WATCH_KEYS = ("zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count",
              "zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count")


def percentile_us(sorted_ns, p):
    """Nearest-rank percentile in microseconds, or None with no sample."""
    if not sorted_ns:
        return None
    rank = int(math.ceil(p * len(sorted_ns)))
    idx = min(len(sorted_ns) - 1, max(0, rank - 1))
    return round(sorted_ns[idx] / 1000.0, 1)
