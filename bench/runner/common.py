"""What every part of the runner shares: the paths, the libraries, the log and the set-up error."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
BENCH = REPO / "bench"

CLIENT_JARS = ["curator-recipes", "curator-framework", "curator-client", "zookeeper", "zookeeper-jute",
               "guava", "slf4j-api", "slf4j-nop"]
# "zkrecipes-standard": zkr_bench with --lock-driver standard (StandardLockDriver: Curator's request pattern,
# no pre-watch), run only where a case names it (the queues where the pre-watch changes the hand-off).
# "zkrecipes-mt": a zkr_bench built on the multi-threaded ZooKeeper C client (--zkr-bench-mt), beside
# "zkrecipes" on the single-threaded one (docs/architecture.md, "Two C clients").
LIBRARIES = ["zkrecipes", "zkrecipes-mt", "zkrecipes-standard", "curator", "kazoo"]
# "zkrecipes-native": the --zkr-bench driver on the native transport (ZKR_ZOOKEEPER_TRANSPORT=native, the same
# binary: a C-client build carries it, docs/native-transport.md). Only when --libraries names it; it then runs in
# every lock case that runs "zkrecipes".
NATIVE_LIBRARY = "zkrecipes-native"
# "zkrecipes-tls" / "curator-tls": "zkrecipes" / "curator" connecting over TLS to the server's secureClientPort
# (--tls only). Each runs in the lock cases that run its plain counterpart.
TLS_LIBRARIES = {"zkrecipes-tls": "zkrecipes", "curator-tls": "curator"}
# "zkrecipes-sasl" / "zkrecipes-native-sasl": "zkrecipes" / "zkrecipes-native" authenticating with SASL
# (--sasl digest-md5|gssapi: the server offers that mechanism without requiring it, so the plain libraries share
# it). Each runs in the cases that run its plain counterpart.
SASL_LIBRARIES = {"zkrecipes-sasl": "zkrecipes", "zkrecipes-native-sasl": "zkrecipes-native"}
# The order of the libraries in a case (the reps rotate from it) and in the table: each TLS library beside its
# plain counterpart. Without --tls it is LIBRARIES'.
ORDER = ["zkrecipes", "zkrecipes-tls", "zkrecipes-sasl", "zkrecipes-mt", "zkrecipes-native", "zkrecipes-native-sasl",
         "zkrecipes-standard", "curator", "curator-tls", "kazoo"]
DEFAULT_LIBRARIES = ["zkrecipes", "zkrecipes-mt", "curator", "kazoo"]  # the libraries of a case that names none
WITH_STANDARD = ["zkrecipes", "zkrecipes-mt", "zkrecipes-standard", "curator", "kazoo"]
WATCH_KEYS = ("zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count",
              "zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count")


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


class SetupError(Exception):
    pass
