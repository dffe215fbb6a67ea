"""kazoo_bench's cache scenarios (issue 39): kazoo's TreeCache over the same tree and measures as zkr_bench's
scenarios/cache_*.cpp and CuratorBench's CacheScenarios. kazoo has no CuratorCache: --recipe tree only.

The tree: under P, groups P/g%05d of at most 100 leaves P/g%05d/n%03d with 32 bytes of data each, N leaves in
all; a cache of P holds 1 + groups + N nodes.
"""

import gc
import threading
import time

from kazoo.exceptions import NodeExistsError
from kazoo.recipe.cache import TreeCache, TreeEvent

LEAVES_PER_GROUP = 100


def groups(leaves):
    return (leaves + LEAVES_PER_GROUP - 1) // LEAVES_PER_GROUP


def tree_nodes(leaves):
    return 1 + groups(leaves) + leaves


def group_path(root, g):
    return "%s/g%05d" % (root, g)


def leaf_path(root, i):
    return "%s/n%03d" % (group_path(root, i // LEAVES_PER_GROUP), i % LEAVES_PER_GROUP)


def create_all(client, paths, data):
    """Creates `paths` in order, at most 256 in flight; NodeExists counts as done."""
    window = threading.Semaphore(256)
    failures = []

    def done(result):
        try:
            result.get()
        except NodeExistsError:
            pass
        except Exception as e:  # reported after the loop
            failures.append(e)
        window.release()

    for p in paths:
        window.acquire()
        if failures:
            break
        client.create_async(p, data).rawlink(done)
    for _ in range(256):
        window.acquire()
    if failures:
        raise RuntimeError("creating the tree: %r" % failures[0])


def populate(client, root, leaves):
    client.ensure_path(root)
    create_all(client, [group_path(root, g) for g in range(groups(leaves))], b"")
    create_all(client, [leaf_path(root, i) for i in range(leaves)], b"x" * 32)


def ensure_tree(client, root, leaves):
    st = client.exists(root)
    if st is None or st.numChildren < groups(leaves):
        populate(client, root, leaves)


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return -1


def cached_nodes(cache, path):
    """The nodes `cache` holds at and below `path`."""
    return 1 + sum(cached_nodes(cache, path + "/" + c) for c in (cache.get_children(path) or ()))


def start_cache(client, root, on_update):
    initialized = threading.Event()

    def listener(e):
        if e.event_type == TreeEvent.INITIALIZED:
            initialized.set()
        elif e.event_type == TreeEvent.NODE_UPDATED and e.event_data is not None:
            on_update(e.event_data.path, e.event_data.data)

    cache = TreeCache(client, root)
    cache.listen(listener)
    cache.start()
    return cache, initialized


def check_recipe(bench):
    if bench.a.recipe not in (None, "tree"):
        raise ValueError("kazoo has TreeCache only (--recipe tree), not %s" % bench.a.recipe)


def populate_scenario(bench):
    leaves = bench.opt("nodes", 10000)
    c = bench.new_session()
    t0, cpu0 = time.monotonic(), time.process_time()
    bench.mark_start()
    populate(c, bench.a.path, leaves)
    bench.mark_end()
    return {"ops": tree_nodes(leaves) - 1, "seconds": time.monotonic() - t0, "lat": [],
            "cpu": time.process_time() - cpu0, "fifo_ok": None, "extra": {"sessions": 1, "leaves": leaves}}


def init_scenario(bench):
    check_recipe(bench)
    leaves = bench.opt("nodes", 10000)
    c = bench.new_session()
    ensure_tree(c, bench.a.path, leaves)
    watches0 = bench.mntr_value("zk_watch_count")
    gc.collect()
    rss0 = rss_bytes()
    cpu0 = time.process_time()
    bench.mark_start()
    t0 = time.monotonic()
    cache, initialized = start_cache(c, bench.a.path, lambda p, d: None)
    if not initialized.wait(max(1.0, bench.deadline() - time.monotonic())):
        raise RuntimeError("the cache was not initialized in time")
    t1 = time.monotonic()
    bench.mark_end()
    cpu = time.process_time() - cpu0
    gc.collect()
    rss1 = rss_bytes()
    watches1 = bench.mntr_value("zk_watch_count")
    nodes = cached_nodes(cache, bench.a.path)
    if nodes != tree_nodes(leaves):
        raise RuntimeError("the cache holds %d nodes, the tree %d" % (nodes, tree_nodes(leaves)))
    extra = {"sessions": 1, "recipe": "tree", "nodes": nodes, "init_ms": (t1 - t0) * 1e3}
    if rss0 >= 0 and rss1 >= 0:
        extra["rss_bytes_per_node"] = (rss1 - rss0) / nodes
    if watches0 >= 0 and watches1 >= 0:
        extra["server_watches"] = watches1 - watches0
        extra["server_watches_per_node"] = (watches1 - watches0) / nodes
    cache.close()
    return {"ops": nodes, "seconds": t1 - t0, "lat": [int((t1 - t0) * 1e9)], "cpu": cpu, "fifo_ok": None,
            "extra": extra}


def events_scenario(bench):
    check_recipe(bench)
    leaves = bench.opt("nodes", 1000)
    changes = bench.opt("ops", 2000)
    warm = bench.opt("warmup", 100)
    reader, writer = bench.new_session(), bench.new_session()
    ensure_tree(writer, bench.a.path, leaves)
    cv = threading.Condition()
    awaited = {"path": None, "data": None, "seen": False}

    def on_update(p, d):
        with cv:
            if p == awaited["path"] and d == awaited["data"]:
                awaited["seen"] = True
                cv.notify_all()

    cache, initialized = start_cache(reader, bench.a.path, on_update)
    if not initialized.wait(max(1.0, bench.deadline() - time.monotonic())):
        raise RuntimeError("the cache was not initialized in time")
    deadline = bench.deadline()

    def one_change(k):
        p = leaf_path(bench.a.path, k % leaves)
        data = ("change-%d" % k).encode().ljust(32, b".")
        with cv:
            awaited.update(path=p, data=data, seen=False)
        t0 = time.perf_counter_ns()
        writer.set(p, data)
        with cv:
            if not cv.wait_for(lambda: awaited["seen"], max(0.0, deadline - time.monotonic())):
                raise RuntimeError("the cache's listener never saw %s change" % p)
        return time.perf_counter_ns() - t0

    for k in range(warm):
        one_change(k)
    lat = []
    cpu0 = time.process_time()
    bench.mark_start()
    t0 = time.monotonic()
    for k in range(warm, warm + changes):
        lat.append(one_change(k))
    seconds = time.monotonic() - t0
    bench.mark_end()
    cpu = time.process_time() - cpu0
    cache.close()
    return {"ops": changes, "seconds": seconds, "lat": sorted(lat), "cpu": cpu, "fifo_ok": None,
            "extra": {"sessions": 2, "total_ops": changes + warm, "recipe": "tree", "leaves": leaves}}
