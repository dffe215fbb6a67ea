#!/usr/bin/env python3
"""run_bench.py: runs zkrecipes' lock benchmarks against Curator and kazoo and writes the report.

    python3 bench/run_bench.py [--quick] [--zkr-bench PATH] [--out docs/benchmarks] [--reps 3]
                               [--only CASE[,CASE...]] [--libraries zkrecipes,curator,kazoo]
                               [--port N] [--jar-dir /usr/share/java] [--note TEXT] [--tls]

What it does:
1. Starts its own standalone ZooKeeper (java -cp <Debian jars> QuorumPeerMain) on 127.0.0.1 with a
   free port (22000-22999 unless --port), forceSync=yes, a temporary data dir, and waits for
   `ruok` -> `imok`. The server is always stopped (by its pid) at the end, also on errors and
   SIGTERM/SIGINT.
2. Builds bench/java/CuratorBench.java with javac into a cache dir under the system temp dir when its
   class file is missing or older than the source.
3. Warms the server up with one unmeasured short run of every driver. Then for every case and every
   library (zkrecipes through --zkr-bench when given and present; Curator; kazoo) runs the driver
   --reps times (the zkrecipes-only zkr_async10k case once, with a longer timeout; its Curator
   counterpart, curator-threads, once per waiter count from the largest down until one survives), the reps of the
   libraries interleaved (zkrecipes, Curator, kazoo, then Curator, kazoo, zkrecipes, ...: the order
   rotates from rep to rep) so that a drift of the shared machine affects them alike and none always runs
   first, each on a fresh lock path, and reads ZooKeeper's `mntr` counters before
   and after each run. Drivers that accept --mntr (CuratorBench, kazoo_bench.py and
   any zkr_bench whose --help mentions it) also report the counters around their measured part only;
   those exact numbers are preferred. Otherwise the whole-run numbers are used, less 2 writes per
   session (createSession + closeSession), divided by measured + warmup operations (marked "~").
4. Takes medians over the reps, prints one Markdown table with ratios against Curator, and writes
   <out>.md (table + date, versions, machine, and a "Targets" section checking the targets of issue 5
   on this run), <out>.csv, and <out>.png (operations per second, and p50 / p99 latency, per case and
   library) when gnuplot is installed.

All drivers share one contract (see bench/java/CuratorBench.java):
    <driver> --connect HOSTS --scenario S --path P [--clients K] [--ops N] [--waiters W] [--warmup N]
             [--timeout-s S] [--mntr HOST:PORT]
printing one JSON line {"library","scenario","params","ops","seconds","ops_per_sec","p50_us",
"p99_us","cpu_seconds","fifo_ok","extra"} and exiting 0.

Leader failover (issue 28; `--only failover`, not part of the default lock cases): for LeaderLatch and
LeaderSelector, zkrecipes and Curator, in two modes (the leader closes; the leader's process gets SIGKILL and
its node goes at session expiry, with a 4 s session timeout, the least a server with tickTime=2000 grants),
the drivers run N failovers each, spawning every leader as a process of their own (see the failover scenario
in bench/zkr_bench.cpp). The reps rotate as above; the samples of all reps are pooled: p50 / p99 over all
failovers, ZooKeeper requests per failover summed over the measured windows. Its own table ("Leader
failover") in <out>.md and rows in <out>.csv; no plot. kazoo is not run there. A driver run that lists
fewer failovers than asked for counts as failed.

TLS (issue 27; --tls): the server also opens a secureClientPort (NettyServerCnxnFactory, which then serves
the plain port too; mntr / ruok stay on the plain port) with a PKI made at run time in its work dir (openssl +
keytool, as test/testing's TestCertificates: a test CA, the server certificate with SAN DNS:localhost,
IP:127.0.0.1, one client certificate with an encrypted PEM key and a PKCS12 store), and the server counts as
ready once it also answers `ruok` over TLS. The libraries "zkrecipes-tls" (the same zkr_bench with its --tls-*
options) and "curator-tls" (CuratorBench with the ZooKeeper client's TLS system properties and the two netty
jars) connect to the secure port and run in every lock case that runs their plain counterpart (not in the
failover cases nor in curator-threads). Without --tls they are skipped.

--quick: tiny sizes (a few seconds per case), one rep unless --reps is given; asserts nothing about
speed. Exit status: 0 when every driver run succeeded and every drain kept FIFO order; 1 when a
driver crashed, timed out, printed no result, or reported fifo_ok false; 2 on a setup error.
"""

import argparse
import csv
import datetime
import hashlib
import json
import math
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"

SERVER_JARS = ["zookeeper", "zookeeper-jute", "slf4j-api", "slf4j-nop", "netty-handler", "netty-common",
               "netty-buffer", "netty-transport", "netty-codec", "netty-resolver",
               "netty-transport-native-epoll", "netty-transport-native-unix-common", "metrics-core",
               "commons-io", "commons-cli", "snappy-java"]
CLIENT_JARS = ["curator-recipes", "curator-framework", "curator-client", "zookeeper", "zookeeper-jute",
               "guava", "slf4j-api", "slf4j-nop"]
# "zkrecipes-standard": zkr_bench with --lock-driver standard (StandardLockDriver: Curator's request pattern,
# no pre-watch), run only where a case names it (the queues where the pre-watch changes the hand-off).
# "zkrecipes-mt": a zkr_bench built on the multi-threaded ZooKeeper C client (--zkr-bench-mt), beside
# "zkrecipes" on the single-threaded one (docs/architecture.md, "Two C clients").
LIBRARIES = ["zkrecipes", "zkrecipes-mt", "zkrecipes-standard", "curator", "kazoo"]
# "zkrecipes-tls" / "curator-tls": "zkrecipes" / "curator" connecting over TLS to the server's secureClientPort
# (--tls only). Each runs in the lock cases that run its plain counterpart.
TLS_LIBRARIES = {"zkrecipes-tls": "zkrecipes", "curator-tls": "curator"}
# The order of the libraries in a case (the reps rotate from it) and in the table: each TLS library beside its
# plain counterpart. Without --tls it is LIBRARIES'.
ORDER = ["zkrecipes", "zkrecipes-tls", "zkrecipes-mt", "zkrecipes-standard", "curator", "curator-tls", "kazoo"]
DEFAULT_LIBRARIES = ["zkrecipes", "zkrecipes-mt", "curator", "kazoo"]  # the libraries of a case that names none
WITH_STANDARD = ["zkrecipes", "zkrecipes-mt", "zkrecipes-standard", "curator", "kazoo"]
WATCH_KEYS = ("zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count",
              "zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count")


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


class SetupError(Exception):
    pass


# ----------------------------------------------------------------------------------------------
# Cases


FAILOVER_LIBRARIES = ["zkrecipes", "curator"]
# The leader's session timeout in kill mode: the least a server with tickTime=2000 (ours) grants.
FAILOVER_SESSION_TIMEOUT_MS = 4000


def failover_cases(quick):
    """The leader failover cases (run only with --only failover; --quick: one failover per run)."""
    out = []
    for recipe, name in (("latch", "LeaderLatch"), ("selector", "LeaderSelector")):
        # failovers per driver run: 10 closes, 5 kills (each waits for a session expiry); --quick: 1
        for mode, how, n in (("close", "the leader closes", 10), ("kill", "kill -9 of the leader", 5)):
            out.append(("failover-%s-%s" % (recipe, mode), "failover", "%s failover, %s" % (name, how),
                        {"recipe": recipe, "mode": mode, "ops": 1 if quick else n,
                         "session-timeout-ms": FAILOVER_SESSION_TIMEOUT_MS, "_timeout_s": 300},
                        FAILOVER_LIBRARIES))
    return out


def cases(quick):
    """(case id, scenario, row label, driver arguments, libraries or None for DEFAULT_LIBRARIES)."""
    if quick:
        pairs, warm, handoffs, waiters, sem, rw_ms, rw_warm = 200, 20, 200, 50, 100, 1000, 200
        multi_k, multi_ops, multi_warm, async_ops = (1, 2, 4), 50, 10, 1000
    else:
        pairs, warm, handoffs, waiters, sem, rw_ms, rw_warm = 2000, 100, 2000, 1000, 1000, 5000, 500
        multi_k, multi_ops, multi_warm, async_ops = (1, 2, 4, 8), 500, 50, 10000
    out = [("uncontended", "uncontended", "uncontended mutex acquire+release",
            {"ops": pairs, "warmup": warm}, None)]
    for k in (2, 8, 32):  # K=2: the one waiter is always next in line, so the pre-watch never applies
        out.append(("contended-%d" % k, "contended", "contended, K=%d sessions" % k,
                    {"clients": k, "ops": handoffs, "warmup": warm}, None if k == 2 else WITH_STANDARD))
    out.append(("drain-%d" % waiters, "drain", "drain, W=%d waiters (per handoff)" % waiters,
                {"waiters": waiters, "clients": 8}, WITH_STANDARD))
    # One waiter behind the holder: its watched node is the only one ahead, so the wake-up needs no read
    # (ZK reads/op 0; Curator re-lists: 1). Its rate is one handoff's and means little.
    out.append(("drain-1", "drain", "drain, W=1 waiter (reads after the wake-up)",
                {"waiters": 1, "clients": 1}, None))
    out.append(("semaphore-mutex", "semaphore-mutex", "semaphore mutex acquire+release",
                {"ops": sem, "warmup": warm}, None))
    out.append(("rwlock", "rwlock", "read-write, 4 readers + 1 writer",
                {"ops": rw_ms, "warmup": rw_warm}, None))
    for k in multi_k:
        out.append(("multilock-%d" % k, "multilock", "multi-lock over %d mutexes" % k,
                    {"clients": k, "ops": multi_ops, "warmup": multi_warm}, None))
    # One rep (its measures are absolute: FIFO, peak RSS, threads) and a longer timeout: each of its waiters
    # lists the whole lock directory, so the queueing costs grow with the square of the waiters.
    out.append(("zkr_async10k", "zkr_async10k", "zkrecipes async: %d acquires" % async_ops,
                {"ops": async_ops, "clients": 4, "_reps": 1, "_timeout_s": 120 if quick else 2400},
                ["zkrecipes"]))
    # Scenario 4's other half: Curator needs a thread per waiter, so it queues the same drain with one thread
    # each, on as many sessions, at growing W until a run fails; the row is the largest W it survived. One rep
    # per W: what it shows (peak RSS, threads, whether it survives) is absolute.
    out.append(("curator-threads", "drain", "Curator threads",
                {"clients": 4, "_reps": 1, "_ladder": [50, 200] if quick else [1000, 2500, 5000, async_ops],
                 "_timeout_s": 120 if quick else 1200},
                ["curator"]))
    return out


# ----------------------------------------------------------------------------------------------
# ZooKeeper


def four_letter(port, word, timeout=5.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(word.encode("ascii"))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data.decode("utf-8", "replace")


def mntr(port):
    out = {}
    for line in four_letter(port, "mntr").splitlines():
        key, _, value = line.partition("\t")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            out[key.strip()] = value.strip()
    return out


def port_is_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# ----------------------------------------------------------------------------------------------
# TLS (--tls): the PKI, as test/testing/src/test_certificates.cpp makes it (docs/tls.md)

STORE_PASSWORD = "changeit"  # the PKCS12 stores (one password for store and key, as ZooKeeper's X509Util wants)
KEY_PASSWORD = "keypass"     # the client's encrypted PEM key: throwaway test values


class Pki:
    """A test CA, the server's key store and trust store, and one client certificate for every TLS client (the
    C client's PEM files and Java's PKCS12 store)."""

    def __init__(self, directory):
        d = Path(directory)
        self.dir = d
        self.ca = d / "ca.pem"
        self.server_store = d / "server.p12"
        self.trust_store = d / "truststore.p12"
        self.client_cert = d / "client.pem"
        self.client_key = d / "client.key"
        self.client_store = d / "client.p12"

    def zkr_options(self):
        return ["--tls-ca", str(self.ca), "--tls-cert", str(self.client_cert), "--tls-key", str(self.client_key),
                "--tls-key-password", KEY_PASSWORD]

    def java_properties(self):
        return ["-Dzookeeper.client.secure=true",
                "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
                "-Dzookeeper.ssl.keyStore.location=%s" % self.client_store,
                "-Dzookeeper.ssl.keyStore.password=" + STORE_PASSWORD, "-Dzookeeper.ssl.keyStore.type=PKCS12",
                "-Dzookeeper.ssl.trustStore.location=%s" % self.trust_store,
                "-Dzookeeper.ssl.trustStore.password=" + STORE_PASSWORD, "-Dzookeeper.ssl.trustStore.type=PKCS12"]


def find_keytool(java):
    beside = Path(os.path.realpath(java)).parent / "keytool" if java else None
    if beside and os.access(str(beside), os.X_OK):
        return str(beside)
    return shutil.which("keytool")


def make_pki(directory, java):
    """Makes the Pki's files in `directory` with openssl and keytool (about 2 s); SetupError on a failure."""
    openssl, keytool = shutil.which("openssl"), find_keytool(java)
    if not openssl or not keytool:
        raise SetupError("--tls needs openssl and keytool (Debian: openssl, default-jdk-headless)")
    pki = Pki(directory)
    d = pki.dir
    d.mkdir(parents=True, exist_ok=True)

    def run(argv):
        r = subprocess.run(argv, cwd=str(d), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise SetupError("making the test PKI failed: %s\n%s" % (" ".join(argv), (r.stdout + r.stderr)[-1500:]))

    run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-sha256", "-days", "3650", "-noenc", "-keyout", "ca.key",
         "-out", "ca.pem", "-subj", "/O=zkr-bench/CN=zkr bench CA",
         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])

    def issue(name, subject, extensions, password):
        genkey = [openssl, "genpkey", "-quiet", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                  "-out", name + ".key"]
        request = [openssl, "req", "-new", "-key", name + ".key", "-subj", subject, "-out", name + ".csr"]
        export = [openssl, "pkcs12", "-export", "-name", name, "-in", name + ".pem", "-inkey", name + ".key",
                  "-certfile", "ca.pem", "-passout", "pass:" + STORE_PASSWORD, "-out", name + ".p12"]
        if password:
            genkey += ["-aes-256-cbc", "-pass", "pass:" + password]
            request += ["-passin", "pass:" + password]
            export += ["-passin", "pass:" + password]
        run(genkey)
        run(request)
        (d / (name + ".ext")).write_text(extensions + "\n")
        run([openssl, "x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "3650", "-sha256", "-extfile", name + ".ext", "-out", name + ".pem"])
        run(export)
        (d / (name + ".csr")).unlink()
        (d / (name + ".ext")).unlink()

    issue("server", "/O=zkr-bench/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
          "extendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment", "")
    issue("client", "/O=zkr-bench/OU=clients/CN=bench", "extendedKeyUsage=clientAuth\n"
          "keyUsage=critical,digitalSignature,keyEncipherment", KEY_PASSWORD)
    run([keytool, "-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", "truststore.p12",
         "-storetype", "PKCS12", "-storepass", STORE_PASSWORD])
    return pki


def tls_ruok(port, pki, timeout=5.0):
    """`ruok` over TLS with the client certificate (openssl s_client, killed after `timeout` s): True on imok.
    Never a bare TCP connect: the server logs each one as a failed handshake, with a stack trace."""
    try:
        r = subprocess.run(["openssl", "s_client", "-quiet", "-connect", "127.0.0.1:%d" % port,
                            "-CAfile", str(pki.ca), "-cert", str(pki.client_cert), "-key", str(pki.client_key),
                            "-pass", "pass:" + KEY_PASSWORD], input=b"ruok", capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"imok" in r.stdout


def free_port(exclude):
    for port in random.sample(range(22000, 23000), 50):
        if port not in exclude and port_is_free(port):
            return port
    raise SetupError("no free port found for the secureClientPort")


class ZooKeeperServer:
    def __init__(self, java, jar_dir, workdir, port=None, pki=None):
        self.java = java
        self.jar_dir = Path(jar_dir)
        self.workdir = Path(workdir)
        self.port = port
        self.pki = pki  # --tls: a Pki; the server then also opens secure_port
        self.secure_port = None
        self.proc = None
        self.log_path = self.workdir / "zookeeper.log"

    def classpath(self):
        jars = []
        for name in SERVER_JARS:
            p = self.jar_dir / (name + ".jar")
            if p.exists():
                jars.append(str(p))
            elif name in ("zookeeper", "zookeeper-jute"):
                raise SetupError("%s not found (install the Debian package zookeeper)" % p)
        return ":".join(jars)

    def start(self):
        cp = self.classpath()
        tries = [self.port] if self.port else random.sample(range(22000, 23000), 20)
        last = None
        attempts = 0
        for port in tries:
            if attempts == 3:
                break
            if not port_is_free(port):
                continue
            attempts += 1
            data = self.workdir / ("data-%d" % port)
            data.mkdir(parents=True, exist_ok=True)
            cfg = self.workdir / "zoo.cfg"
            lines = ["tickTime=2000", "dataDir=%s" % data, "clientPort=%d" % port,
                     "clientPortAddress=127.0.0.1", "admin.enableServer=false",
                     "4lw.commands.whitelist=*", "forceSync=yes", "maxClientCnxns=0"]
            secure = None
            if self.pki:
                # As test/testing's server_instance.cpp; unknown zoo.cfg keys become zookeeper.* properties.
                secure = free_port({port})
                lines += ["secureClientPort=%d" % secure, "secureClientPortAddress=127.0.0.1",
                          "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
                          "ssl.keyStore.location=%s" % self.pki.server_store,
                          "ssl.keyStore.password=" + STORE_PASSWORD, "ssl.keyStore.type=PKCS12",
                          "ssl.trustStore.location=%s" % self.pki.trust_store,
                          "ssl.trustStore.password=" + STORE_PASSWORD, "ssl.trustStore.type=PKCS12",
                          "ssl.clientAuth=need",
                          "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider"]
            cfg.write_text("\n".join(lines + [""]))
            with open(self.log_path, "ab") as logf:
                self.proc = subprocess.Popen(
                    [self.java, "-Dzookeeper.admin.enableServer=false", "-cp", cp,
                     "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(cfg)],
                    stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                    start_new_session=True)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    # imok comes before the server serves requests; mntr tells when it does.
                    if (four_letter(port, "ruok", timeout=1.0).strip() == "imok"
                            and "zk_server_state" in mntr(port)):
                        # --tls: a fresh JVM's first TLS handshake takes about a second; spend it here.
                        if secure is None or tls_ruok(secure, self.pki):
                            self.port = port
                            self.secure_port = secure
                            return
                except OSError:
                    pass
                time.sleep(0.2)
            last = ("ZooKeeper did not answer ruok on port %d" % port
                    + (" and over TLS on port %d" % secure if secure else ""))
            self.stop()
        tail = self.log_path.read_text(errors="replace")[-2000:] if self.log_path.exists() else ""
        raise SetupError("%s\n%s" % (last or "no free port found", tail))

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def version(self):
        try:
            v = str(mntr(self.port).get("zk_version", ""))
            return v.split("-")[0].split(",")[0].strip() or None
        except OSError:
            return None


# ----------------------------------------------------------------------------------------------
# Drivers


class Driver:
    def __init__(self, name, argv, supports_mntr, tls=None):
        self.name = name
        self.argv = argv
        self.supports_mntr = supports_mntr
        # A TLS driver: a function of the server's Pki giving its command line; it connects to the secure port.
        self.tls = tls

    def command(self, server):
        return self.tls(server.pki) if self.tls else list(self.argv)

    def connect_port(self, server):
        return server.secure_port if self.tls else server.port


def build_curator_bench(java, javac, jar_dir):
    src = BENCH / "java" / "CuratorBench.java"
    jars = []
    for name in CLIENT_JARS:
        p = Path(jar_dir) / (name + ".jar")
        if not p.exists():
            if name == "slf4j-nop":
                continue
            raise SetupError("%s not found (install libcurator-recipes-java)" % p)
        jars.append(str(p))
    cp = ":".join(jars)
    key = hashlib.sha1(str(src).encode()).hexdigest()[:12]
    out = Path(tempfile.gettempdir()) / ("zkrecipes-bench-java-" + key)
    cls = out / "CuratorBench.class"
    if not cls.exists() or cls.stat().st_mtime < src.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        log("compiling %s -> %s" % (src.relative_to(REPO), out))
        r = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-cp", cp, "-d", str(out), str(src)],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise SetupError("javac failed:\n" + r.stdout + r.stderr)
    return [java, "-cp", str(out) + ":" + cp, "CuratorBench"]


def curator_tls_argv(argv, jar_dir):
    """CuratorBench's command line over TLS: a function of the Pki (the ZooKeeper client's TLS system
    properties), with netty-codec and netty-resolver on the class path (zookeeper.jar's manifest leaves them
    out; without them every TLS connect fails with NoClassDefFoundError)."""
    jars = [str(Path(jar_dir) / (n + ".jar")) for n in ("netty-codec", "netty-resolver")]
    missing = [j for j in jars if not Path(j).exists()]
    if missing:
        raise SetupError("%s not found (Debian: libnetty-java)" % ", ".join(missing))
    java, cp_flag, cp, main_class = argv
    return lambda pki: [java] + pki.java_properties() + [cp_flag, cp + ":" + ":".join(jars), main_class]


def find_kazoo_python():
    for py in [sys.executable, "/usr/bin/python3", shutil.which("python3")]:
        if not py:
            continue
        try:
            r = subprocess.run([py, "-c", "import kazoo"], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return py
    return None


def zkr_driver(name, path, notes, flag):
    """A zkr_bench driver, and its --help text (which tells the options it has); (None, "") if unusable."""
    if not path:
        notes.append("%s skipped: no %s given" % (name, flag))
        return None, ""
    if not os.access(path, os.X_OK):
        notes.append("%s skipped: %s is not an executable" % (name, path))
        return None, ""
    try:
        h = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=20)
        help_text = h.stdout + h.stderr
    except (OSError, subprocess.TimeoutExpired):
        help_text = ""
    return Driver(name, [str(Path(path).resolve())], "--mntr" in help_text), help_text


def make_drivers(args, notes):
    drivers = {}
    wanted = args.libraries
    if "zkrecipes" in wanted:
        d, help_text = zkr_driver("zkrecipes", args.zkr_bench, notes, "--zkr-bench")
        if d:
            drivers["zkrecipes"] = d
            if "zkrecipes-standard" in wanted and "--lock-driver" in help_text:
                drivers["zkrecipes-standard"] = Driver("zkrecipes-standard", d.argv + ["--lock-driver", "standard"],
                                                       d.supports_mntr)
    if "zkrecipes-mt" in wanted:
        d, _ = zkr_driver("zkrecipes-mt", args.zkr_bench_mt, notes, "--zkr-bench-mt")
        if d:
            drivers["zkrecipes-mt"] = d
    for lib in TLS_LIBRARIES:
        if lib in wanted and not args.tls:
            notes.append("%s skipped: no --tls given" % lib)
    tls_wanted = [lib for lib in TLS_LIBRARIES if lib in wanted and args.tls]
    if "zkrecipes-tls" in tls_wanted:
        d, help_text = zkr_driver("zkrecipes-tls", args.zkr_bench, notes, "--zkr-bench")
        if d and "--tls-ca" not in help_text:
            notes.append("zkrecipes-tls skipped: %s has no --tls-ca option" % args.zkr_bench)
        elif d:
            drivers["zkrecipes-tls"] = Driver("zkrecipes-tls", d.argv, d.supports_mntr,
                                              tls=lambda pki, argv=d.argv: argv + pki.zkr_options())
    java, javac = shutil.which("java"), shutil.which("javac")
    if "curator" in wanted:
        if not java or not javac:
            notes.append("Curator skipped: java/javac not found")
        else:
            try:
                drivers["curator"] = Driver("curator", build_curator_bench(java, javac, args.jar_dir), True)
            except SetupError as e:
                notes.append("Curator skipped: %s" % e)
    if "curator-tls" in tls_wanted:
        if not java or not javac:
            notes.append("curator-tls skipped: java/javac not found")
        else:
            try:
                argv = build_curator_bench(java, javac, args.jar_dir)
                drivers["curator-tls"] = Driver("curator-tls", argv, True,
                                                tls=curator_tls_argv(argv, args.jar_dir))
            except SetupError as e:
                notes.append("curator-tls skipped: %s" % e)
    if "kazoo" in wanted:
        py = find_kazoo_python()
        if py:
            drivers["kazoo"] = Driver("kazoo", [py, str(BENCH / "python" / "kazoo_bench.py")], True)
        else:
            notes.append("kazoo skipped: no python3 can import kazoo (Debian: python3-kazoo)")
    return drivers


# ----------------------------------------------------------------------------------------------
# Running


def case_libraries(case):
    """The libraries a case runs: those it names (or DEFAULT_LIBRARIES), and the TLS library of each plain one
    among them (only the lock cases: not failover, whose drivers spawn leaders of their own, nor the ladder)."""
    libs = list(case[4] or DEFAULT_LIBRARIES)
    if case[1] != "failover" and "_ladder" not in case[3]:
        libs += [tls for tls, plain in TLS_LIBRARIES.items() if plain in libs]
    return libs


def run_one(driver, server, case, rep, timeout_s):
    """Runs one driver once. Keys of params starting with "_" are the runner's own (not driver options):
    "_timeout_s" overrides the per-run timeout; "_reps" (used by main) the number of reps."""
    case_id, scenario, _, params, _ = case
    timeout_s = params.get("_timeout_s", timeout_s)
    path = "/zkr-bench/%s/%s-r%d-%s" % (case_id, driver.name, rep, uuid.uuid4().hex[:8])
    argv = driver.command(server) + ["--connect", "127.0.0.1:%d" % driver.connect_port(server),
                                     "--scenario", scenario, "--path", path, "--timeout-s", str(timeout_s)]
    for k, v in params.items():
        if not k.startswith("_"):
            argv += ["--" + k, str(v)]
    if driver.supports_mntr:
        argv += ["--mntr", "127.0.0.1:%d" % server.port]
    def sample():
        try:
            return mntr(server.port)
        except OSError:
            return {}

    before = sample()
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout_s + 60)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or "", e.stderr or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
    wall = time.monotonic() - t0
    time.sleep(0.05)
    after = sample()
    result = None
    for line in reversed(out.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                result = json.loads(line)
            except ValueError:
                pass
            break
    failure = None
    if rc != 0:
        failure = "exit status %s" % rc
    elif result is None:
        failure = "no JSON result on stdout"
    if failure:
        return {"failure": failure, "stderr": err[-3000:], "argv": argv}

    def d(key):
        a, b = before.get(key, 0), after.get(key, 0)
        return (b - a) if isinstance(a, float) and isinstance(b, float) else 0

    extra = result.get("extra") or {}
    if scenario == "failover" and len(extra.get("failover_ms") or []) != int(params.get("ops", 0)):
        return {"failure": "%d failover samples, %s asked for" % (len(extra.get("failover_ms") or []),
                                                                  params.get("ops")),
                "stderr": err[-3000:], "argv": argv}
    phase = extra.get("mntr")
    if isinstance(phase, dict) and "error" not in phase and result.get("ops"):
        n = float(result["ops"])
        req = {"reads": phase.get("reads", 0) / n, "writes": phase.get("writes", 0) / n,
               "watches": phase.get("watch_events", 0) / n,
               "packets": phase.get("packets_received", 0) / n, "source": "exact"}
    else:
        n = float(extra.get("total_ops") or result.get("ops") or 0) or float("nan")
        sessions = float(extra.get("sessions") or 0)
        req = {"reads": d("zk_cnt_readlatency") / n,
               "writes": (d("zk_cnt_updatelatency") - 2 * sessions) / n,
               "watches": sum(d(k) for k in WATCH_KEYS) / n,
               "packets": d("zk_packets_received") / n, "source": "approx"}
    return {"result": result, "requests": req, "wall": wall,
            "whole_run": {"reads": d("zk_cnt_readlatency"), "writes": d("zk_cnt_updatelatency"),
                          "watches": sum(d(k) for k in WATCH_KEYS),
                          "packets": d("zk_packets_received")}}


def run_ladder(driver, server, case, timeout_s, done, total, notes):
    """Runs a "_ladder" case: the largest waiter count W of the ladder first, then smaller ones while a run
    fails. Returns (the rows of the largest W that succeeded, a failure message when every W failed, the
    updated run count). A failure at a larger W is what the case measures, not a benchmark failure: it goes
    into the notes and the row's label."""
    case_id, scenario, label, params, _ = case
    ladder = sorted(params["_ladder"], reverse=True)
    failed = []
    for i, w in enumerate(ladder):
        done += 1
        r = run_one(driver, server, (case_id, scenario, label, dict(params, waiters=w), None), 1, timeout_s)
        if "failure" not in r and r["result"].get("fifo_ok") is False:
            r = {"failure": "fifo_ok false", "stderr": "", "argv": r.get("argv", [])}
        if "failure" in r:
            failed.append((w, r["failure"]))
            log("[%d/%d] %s %s W=%d: %s\n    %s" % (done, total, case_id, driver.name, w, r["failure"],
                                                   (r.get("stderr") or "").strip()[-500:]))
            continue
        res = r["result"]
        ex = res.get("extra") or {}
        log("[%d/%d] %s %s W=%d: %.0f handoffs/s, peak RSS %s MB, %s threads"
            % (done, total, case_id, driver.name, w, res.get("ops_per_sec") or 0, fmt(ex.get("peak_rss_mb")),
               ex.get("max_threads")))
        if failed:
            notes.append("%s, one thread per waiter, did not survive %s; its row is W=%d"
                         % (driver.name, "; ".join("W=%d (%s)" % f for f in failed), w))
            row_label = "%s, W=%d (W=%d failed)" % (label, w, failed[-1][0])
        else:
            row_label = "%s, W=%d (largest tried)" % (label, w)
        return rows_of((case_id, scenario, row_label, params, None), driver.name, [r]), None, done + len(ladder) - i - 1
    return [], "%s: %s failed at every W (%s)" % (case_id, driver.name, "; ".join("%d: %s" % f for f in failed)), done


def warm_up(drivers, order, server, timeout_s):
    """Unmeasured runs before the first case: the fresh server's JIT and data tree warm up here, not during
    the first library's first measured run. Failures are only logged (the measured runs report them)."""
    case = ("warmup", "uncontended", "warm-up", {"ops": 300, "warmup": 50}, None)
    for lib in order:
        r = run_one(drivers[lib], server, case, 0, min(timeout_s, 120))
        if "failure" in r:
            log("warm-up %s: %s" % (lib, r["failure"]))
    log("warm-up done")


# ----------------------------------------------------------------------------------------------
# Aggregation and reports


def median(xs):
    xs = [x for x in xs if isinstance(x, (int, float)) and x == x]
    return statistics.median(xs) if xs else None


def percentile(xs, p):
    """Nearest-rank percentile of the numbers in xs (None without any), as the drivers compute theirs."""
    xs = sorted(x for x in xs if isinstance(x, (int, float)))
    if not xs:
        return None
    return xs[min(len(xs) - 1, max(0, math.ceil(p * len(xs)) - 1))]


def failover_row(case, lib, ok, failures):
    """The row of a failover case: every failover of every rep pooled (the drivers list their samples)."""
    case_id, scenario, label, params, _ = case

    def pooled(key):
        out = []
        for r in ok:
            out += (r["result"].get("extra") or {}).get(key) or []
        return [x for x in out if isinstance(x, (int, float))]

    fail, notice, end_notice = pooled("failover_ms"), pooled("notice_ms"), pooled("end_to_notice_ms")
    n = sum(float(r["result"].get("ops") or 0) for r in ok)

    def per_failover(key):  # requests summed over every measured window, per failover
        return sum(r["requests"][key] * float(r["result"].get("ops") or 0) for r in ok) / n if n else None

    cpu = sum(r["result"].get("cpu_seconds") or 0 for r in ok)
    return {
        "case": case_id, "scenario": scenario, "row": label, "library": lib, "reps": len(ok),
        "failures": failures, "failovers": len(fail), "mode": params.get("mode"),
        "session_timeout_ms": params.get("session-timeout-ms"),
        "ops_per_sec": None, "ops_min": None, "ops_max": None,
        "p50_us": percentile(fail, 0.50) * 1e3 if fail else None,
        "p99_us": percentile(fail, 0.99) * 1e3 if fail else None,
        "min_ms": min(fail) if fail else None, "max_ms": max(fail) if fail else None,
        "notice_p50_ms": percentile(notice, 0.50), "notice_p99_ms": percentile(notice, 0.99),
        "end_to_notice_p50_ms": percentile(end_notice, 0.50),
        "end_to_notice_p99_ms": percentile(end_notice, 0.99),
        "cpu_us_per_op": cpu / n * 1e6 if n else None,
        "reads_per_op": per_failover("reads"), "writes_per_op": per_failover("writes"),
        "watches_per_op": per_failover("watches"), "packets_per_op": per_failover("packets"),
        "requests_source": ok[0]["requests"]["source"] if ok else None,
        "fifo_ok": None, "peak_rss_mb": None, "max_threads": None,
    }


def rows_of(case, lib, runs):
    """Report rows (one, or reads + writes for rwlock) for one case and library."""
    case_id, scenario, label, _, _ = case
    ok = [r for r in runs if "result" in r]
    failures = len(runs) - len(ok)
    if scenario == "failover":
        return [failover_row(case, lib, ok, failures)]

    def worst(key):
        xs = [(r["result"].get("extra") or {}).get(key) for r in ok]
        xs = [x for x in xs if isinstance(x, (int, float))]
        return max(xs) if xs else None

    def agg(name, rate, p50, p99):
        rates = [rate(r["result"]) for r in ok]
        rates = [x for x in rates if x is not None]
        cpu = []
        for r in ok:
            res = r["result"]
            if res.get("cpu_seconds") is not None and res.get("ops"):
                cpu.append(res["cpu_seconds"] / res["ops"] * 1e6)
        fifo = [r["result"].get("fifo_ok") for r in ok]
        fifo = None if all(f is None for f in fifo) else all(f is True for f in fifo)
        return {
            "case": case_id, "scenario": scenario, "row": name, "library": lib, "reps": len(ok),
            "failures": failures,
            "ops_per_sec": median(rates), "ops_min": min(rates) if rates else None,
            "ops_max": max(rates) if rates else None,
            "p50_us": median([p50(r["result"]) for r in ok]),
            "p99_us": median([p99(r["result"]) for r in ok]),
            "cpu_us_per_op": median(cpu),
            "reads_per_op": median([r["requests"]["reads"] for r in ok]),
            "writes_per_op": median([r["requests"]["writes"] for r in ok]),
            "watches_per_op": median([r["requests"]["watches"] for r in ok]),
            "packets_per_op": median([r["requests"]["packets"] for r in ok]),
            "requests_source": ok[0]["requests"]["source"] if ok else None,
            "fifo_ok": fifo,
            "peak_rss_mb": worst("peak_rss_mb"),
            "max_threads": worst("max_threads"),
        }

    if scenario == "rwlock":
        def ex(key):
            return lambda res: (res.get("extra") or {}).get(key)
        return [agg(label + ": reads", ex("reads_per_sec"), ex("read_p50_us"), ex("read_p99_us")),
                agg(label + ": writes", ex("writes_per_sec"), ex("write_p50_us"), ex("write_p99_us"))]
    return [agg(label, lambda res: res.get("ops_per_sec"), lambda res: res.get("p50_us"),
                lambda res: res.get("p99_us"))]


def fmt(x, digits=0):
    if x is None:
        return "—"
    if round(x, digits) == 0:
        x = 0.0  # no "-0.0"
    if digits == 0:
        return "%d" % round(x)
    return ("%%.%df" % digits) % x


def add_ratios(rows):
    """ratio_vs_curator: ops/s over Curator's; for a failover row, its p50 failover time over Curator's."""
    key = {r["row"]: ("p50_us" if r["scenario"] == "failover" else "ops_per_sec") for r in rows}
    base = {r["row"]: r[key[r["row"]]] for r in rows if r["library"] == "curator"}
    for r in rows:
        b, v = base.get(r["row"]), r[key[r["row"]]]
        r["ratio_vs_curator"] = (v / b) if (b and v is not None) else None


def lock_rows(rows):
    return [r for r in rows if r["scenario"] != "failover"]


def failover_rows(rows):
    return [r for r in rows if r["scenario"] == "failover"]


def failover_table(rows):
    """The leader failover table (times in ms)."""
    lines = ["| failover | library | failovers | from the leader's end, p50 / p99 ms [min..max] "
             "| p50 × Curator | from the deletion notice, p50 / p99 ms | end → notice, p50 / p99 ms "
             "| ZK reads / writes / watch events per failover |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    last = None
    for r in rows:
        approx = "~" if r["requests_source"] == "approx" else ""
        if r["reps"] == 0:
            times = "failed (%d)" % r["failures"]
        else:
            times = "%s / %s [%s..%s]" % (fmt(ms(r["p50_us"]), 1), fmt(ms(r["p99_us"]), 1),
                                          fmt(r["min_ms"], 1), fmt(r["max_ms"], 1))
            if r["failures"]:
                times += " (%d runs failed)" % r["failures"]
        lines.append("| %s | %s | %d | %s | %s | %s / %s | %s / %s | %s%s / %s%s / %s%s |" % (
            r["row"] if r["row"] != last else "", r["library"], r["failovers"], times,
            fmt(r.get("ratio_vs_curator"), 2), fmt(r["notice_p50_ms"], 1), fmt(r["notice_p99_ms"], 1),
            fmt(r["end_to_notice_p50_ms"], 1), fmt(r["end_to_notice_p99_ms"], 1),
            approx, fmt(r["reads_per_op"], 1), approx, fmt(r["writes_per_op"], 1), approx,
            fmt(r["watches_per_op"], 1)))
        last = r["row"]
    return "\n".join(lines)


def ms(us):
    return None if us is None else us / 1e3


def markdown_table(rows):
    head = ("| scenario | library | ops/s median [min..max] | × Curator | p50 / p99 µs | CPU µs/op "
            "| ZK reads/op | ZK writes/op | watch events/op | FIFO |")
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|"]
    last = None
    for r in rows:
        approx = "~" if r["requests_source"] == "approx" else ""
        if r["reps"] == 0:
            rate = "failed (%d)" % r["failures"]
        else:
            rate = "%s [%s..%s]" % (fmt(r["ops_per_sec"]), fmt(r["ops_min"]), fmt(r["ops_max"]))
            if r["failures"]:
                rate += " (%d failed)" % r["failures"]
        fifo = "" if r["fifo_ok"] is None else ("yes" if r["fifo_ok"] else "**NO**")
        lines.append("| %s | %s | %s | %s | %s / %s | %s | %s%s | %s%s | %s%s | %s |" % (
            r["row"] if r["row"] != last else "", r["library"], rate,
            fmt(r.get("ratio_vs_curator"), 2), fmt(r["p50_us"]), fmt(r["p99_us"]),
            fmt(r["cpu_us_per_op"]), approx, fmt(r["reads_per_op"], 1), approx,
            fmt(r["writes_per_op"], 1), approx, fmt(r["watches_per_op"], 2), fifo))
        last = r["row"]
    return "\n".join(lines)


def machine_info():
    info = {"nproc": os.cpu_count(), "cpu": None, "mem_gib": None, "kernel": platform.release()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["mem_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return info


def fsync_latency_us(directory, n=200):
    """p50 of fdatasync after a 512-byte append in `directory`: the cost the server pays per write batch with
    forceSync=yes. It differs 10x between machines of one kind (disk vs tmpfs), so the report states it."""
    path = Path(directory) / "fsync.probe"
    lat = []
    try:
        fd = os.open(str(path), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for _ in range(n):
                os.write(fd, b"x" * 512)
                t = time.perf_counter()
                os.fdatasync(fd)
                lat.append(time.perf_counter() - t)
        finally:
            os.close(fd)
            path.unlink()
    except OSError:
        return None
    lat.sort()
    return round(lat[len(lat) // 2] * 1e6, 1)


def java_version(java):
    if not java:
        return None
    try:
        r = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
        first = (r.stderr or r.stdout).splitlines()[0]
        return first.replace('"', "").strip()
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return None


def write_csv(path, rows):
    cols = ["case", "scenario", "row", "library", "reps", "failures", "ops_per_sec", "ops_min", "ops_max",
            "ratio_vs_curator", "p50_us", "p99_us", "cpu_us_per_op", "reads_per_op", "writes_per_op",
            "watches_per_op", "packets_per_op", "requests_source", "fifo_ok", "peak_rss_mb", "max_threads",
            # failover rows only (p50_us / p99_us: from the leader's end to the next leader)
            "failovers", "mode", "session_timeout_ms", "min_ms", "max_ms", "notice_p50_ms", "notice_p99_ms",
            "end_to_notice_p50_ms", "end_to_notice_p99_ms"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([("%.3f" % r[c]) if isinstance(r.get(c), float) else r.get(c) for c in cols])


def write_plot(png, rows, libs):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return "plot skipped: gnuplot is not installed (Debian: gnuplot-nox)"
    try:
        terms = subprocess.run([gnuplot, "-e", "set terminal"], capture_output=True, text=True,
                               timeout=30)
        text = terms.stdout + terms.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return "plot skipped: %s" % e
    term = "pngcairo" if "pngcairo" in text else ("png" if " png " in text or "\npng" in text else None)
    if not term:
        return "plot skipped: this gnuplot has no png terminal"
    labels = []
    for r in rows:
        if r["row"] not in labels:
            labels.append(r["row"])
    libs = [lib for lib in libs if any(r["library"] == lib for r in rows)]

    def num(v):
        return ("%.1f" % v) if v else "NaN"

    with tempfile.TemporaryDirectory() as tmp:
        # One line per row: the label, then per library its ops/s, p50 and p99 (µs).
        dat = Path(tmp) / "bench.dat"
        by = {(r["row"], r["library"]): r for r in rows}
        with open(dat, "w") as f:
            for lab in labels:
                cols = []
                for lib in libs:
                    r = by.get((lab, lib)) or {}
                    cols += [num(r.get("ops_per_sec")), num(r.get("p50_us")), num(r.get("p99_us"))]
                f.write('"%s"\t' % lab.replace('"', "'") + "\t".join(cols) + "\n")
        rate = ", ".join("'%s' using %d title '%s'" % (dat, 3 * i + 2, lib) for i, lib in enumerate(libs))
        # Latency: a bar at the p50 with a whisker up to the p99.
        lat = ", ".join("'%s' using %d:%d:%d:xtic(1) title '%s'" % (dat, 3 * i + 3, 3 * i + 3, 3 * i + 4, lib)
                        for i, lib in enumerate(libs))
        common = ["set style data histograms", "set style fill solid 0.85 border -1", "set boxwidth 0.9",
                  "set logscale y", "set format y '%.0f'", "set grid ytics", "set datafile missing 'NaN'",
                  "set lmargin 10", "set rmargin 24",
                  "set xrange [-0.6:%.1f]" % (len(labels) - 0.4)]
        script = "\n".join([
            "set terminal %s size 1400,1300" % term,
            "set output '%s'" % png,
            "set multiplot layout 2,1",
            ] + common + [
            "set style histogram clustered gap 1",
            "set title 'zkrecipes lock benchmarks: operations per second (median, log scale)'",
            "set key outside top center horizontal", "unset xtics",
            "set tmargin 4", "set bmargin 1", "set ylabel 'ops/s'", "set yrange [1:*]",
            "plot " + rate,
            "set title 'latency per operation, µs: bar = p50, whisker = p99 (median over reps, log scale)'",
            "set style histogram errorbars gap 1 lw 1", "unset key",
            "set xtics rotate by -35 scale 0 font ',9'",
            "set tmargin 3", "set bmargin 11", "set ylabel 'µs'", "set yrange [10:*]",
            "plot " + lat,
            "unset multiplot", ""])
        gp = Path(tmp) / "bench.gp"
        gp.write_text(script)
        r = subprocess.run([gnuplot, str(gp)], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            return "plot failed: %s" % (r.stderr.strip()[-500:])
    return None


# ----------------------------------------------------------------------------------------------
# Targets of issues 5 and 25, checked on the medians of this run (ratios against Curator, or between the two C
# client flavours, taken in the same run)


def targets(rows):
    """[(target, measured, verdict)] for the targets of issues 5 and 25; verdict is "met", "missed" or "n/a"."""
    by = {(r["case"], r["library"], r["row"]): r for r in rows}

    def get(case, lib, suffix=None):
        for (c, l, row), r in by.items():
            if c == case and l == lib and (suffix is None or row.endswith(suffix)) and r["reps"]:
                return r
        return None

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "**missed**")

    def ratio(a, b):
        # Rounded as shown (two decimals), so that a verdict never contradicts its figure: 0.899 shows as 0.90×
        # and meets a 0.9 bound.
        return round(a / b, 2) if (a is not None and b) else None

    def curator_threads():  # scenario 4's Curator half, shown beside the target it has no part in
        c = get("curator-threads", "curator")
        if not c:
            return ""
        w = c["row"].split("W=", 1)[1].split(" ", 1)[0] if "W=" in c["row"] else "?"
        return ("; Curator, one thread per waiter, at W=%s: peak RSS %s MB; %s threads; drain %s handoffs/s; FIFO %s"
                % (w, fmt(c["peak_rss_mb"], 1), fmt(c["max_threads"]), fmt(c["ops_per_sec"]),
                   "yes" if c["fifo_ok"] else "NO"))

    def against_curator(lib, tag):
        """The targets against Curator for one zkrecipes flavour (issue 25: both flavours keep them)."""
        out = []
        z, c = get("uncontended", lib), get("uncontended", "curator")
        if z and c:
            reqs = (z["reads_per_op"] or 0) + (z["writes_per_op"] or 0)
            r = ratio(z["p50_us"], c["p50_us"])
            out.append(("uncontended pair p50 ≤ 0.8× Curator's, exactly 3 requests per pair" + tag,
                        "p50 %s µs vs %s µs (%s×); %s requests/pair (%s reads + %s writes)"
                        % (fmt(z["p50_us"]), fmt(c["p50_us"]), fmt(r, 2), fmt(reqs, 2), fmt(z["reads_per_op"], 2),
                           fmt(z["writes_per_op"], 2)),
                        verdict(r is not None and r <= 0.8 and abs(reqs - 3) < 0.05)))
        z, c = get("contended-8", lib), get("contended-8", "curator")
        if z and c:
            r = ratio(z["ops_per_sec"], c["ops_per_sec"])
            p = get("contended-8", "zkrecipes-standard") if lib == "zkrecipes" else None
            opt = ("; with StandardLockDriver (Curator's request pattern, no pre-watch): %s/s (%s×)"
                   % (fmt(p["ops_per_sec"]), fmt(ratio(p["ops_per_sec"], c["ops_per_sec"]), 2)) if p else "")
            out.append(("contended K=8 handoffs/s ≥ 2× Curator" + tag,
                        "%s/s vs %s/s (%s×); %s reads and %s watch events per handoff (Curator %s and %s; one read "
                        "after the wait starts: the re-listing)%s"
                        % (fmt(z["ops_per_sec"]), fmt(c["ops_per_sec"]), fmt(r, 2), fmt(z["reads_per_op"], 1),
                           fmt(z["watches_per_op"], 2), fmt(c["reads_per_op"], 1), fmt(c["watches_per_op"], 2), opt),
                        verdict(r is not None and r >= 2)))
        drains = sorted({r["case"] for r in rows if r["scenario"] == "drain" and r["case"] not in ("drain-1",
                                                                                                 "curator-threads")})
        one, one_c = get("drain-1", lib), get("drain-1", "curator")
        for case in drains:
            z, c = get(case, lib), get(case, "curator")
            if z and c:
                r = ratio(z["ops_per_sec"], c["ops_per_sec"])
                # W=1: the waiter's watched node (the holder's) is the only one ahead: 0 reads after the wake-up.
                no_read = None if one is None else (one["reads_per_op"] is not None and one["reads_per_op"] <= 0.01)
                ok = r is not None and r >= 2 and z["fifo_ok"] is True and no_read is not False
                out.append(("%s handoffs/s ≥ 2× Curator; no read after a wake-up when the watched node was the only "
                            "one ahead" % case + tag,
                            "%s/s vs %s/s (%s×); FIFO %s; %s reads/handoff (Curator %s); W=1: %s reads after the "
                            "wake-up (Curator %s)"
                            % (fmt(z["ops_per_sec"]), fmt(c["ops_per_sec"]), fmt(r, 2),
                               "yes" if z["fifo_ok"] else "NO", fmt(z["reads_per_op"], 2), fmt(c["reads_per_op"], 2),
                               fmt(one["reads_per_op"], 2) if one else "—",
                               fmt(one_c["reads_per_op"], 2) if one_c else "—"),
                            verdict(ok)))
        z = get("zkr_async10k", lib)
        if z:
            ok = (z["fifo_ok"] is True and z["peak_rss_mb"] is not None and z["peak_rss_mb"] <= 200
                  and z["max_threads"] is not None and z["max_threads"] <= 8)
            out.append(("%s: FIFO, peak RSS ≤ 200 MB, ≤ 8 threads" % z["row"] + tag,
                        "FIFO %s; peak RSS %s MB; %s threads; drain %s handoffs/s"
                        % ("yes" if z["fifo_ok"] else "NO", fmt(z["peak_rss_mb"], 1), fmt(z["max_threads"]),
                           fmt(z["ops_per_sec"])) + curator_threads(),
                        verdict(ok)))
        z, c = get("semaphore-mutex", lib), get("semaphore-mutex", "curator")
        if z and c:
            r = ratio(z["p50_us"], c["p50_us"])
            out.append(("semaphore mutex pair p50 ≤ 0.8× Curator's" + tag,
                        "p50 %s µs vs %s µs (%s×); %s requests/pair (Curator %s)"
                        % (fmt(z["p50_us"]), fmt(c["p50_us"]), fmt(r, 2),
                           fmt((z["reads_per_op"] or 0) + (z["writes_per_op"] or 0), 1),
                           fmt((c["reads_per_op"] or 0) + (c["writes_per_op"] or 0), 1)),
                        verdict(r is not None and r <= 0.8)))
        z, c = get("rwlock", lib, ": reads"), get("rwlock", "curator", ": reads")
        if z and c:
            r = ratio(z["ops_per_sec"], c["ops_per_sec"])
            out.append(("read-write lock reads/s ≥ 1.5× Curator" + tag,
                        "%s/s vs %s/s (%s×)" % (fmt(z["ops_per_sec"]), fmt(c["ops_per_sec"]), fmt(r, 2)),
                        verdict(r is not None and r >= 1.5)))
        multi = sorted((int(r["case"].split("-")[1]), r) for r in rows
                       if r["scenario"] == "multilock" and r["library"] == lib and r["reps"])
        if len(multi) >= 2 and multi[0][0] == 1:
            n, big = multi[-1]
            one = multi[0][1]
            r = ratio(big["p50_us"], one["p50_us"])
            out.append(("multi-lock N=%d pair ≤ 1.5× N=1" % n + tag,
                        "p50 %s µs vs %s µs (%s×); %s vs %s pairs/s; %s writes/pair at N=%d"
                        % (fmt(big["p50_us"]), fmt(one["p50_us"]), fmt(r, 2), fmt(big["ops_per_sec"]),
                           fmt(one["ops_per_sec"]), fmt(big["writes_per_op"], 1), n),
                        verdict(r is not None and r <= 1.5 and n >= 8) if n >= 8 else
                        "n/a (N=%d only in this run)" % n))
        z, c = get("contended-8", lib), get("contended-8", "curator")
        if z and c:
            r = ratio(z["cpu_us_per_op"], c["cpu_us_per_op"])
            out.append(("client CPU per contended handoff (K=8) ≤ 0.3× Curator" + tag,
                        "%s µs vs %s µs (%s×)" % (fmt(z["cpu_us_per_op"]), fmt(c["cpu_us_per_op"]), fmt(r, 2)),
                        verdict(r is not None and r <= 0.3)))
        return out

    out = against_curator("zkrecipes", "")
    # Issue 25: the multi-threaded flavour against the single-threaded one: (case, compared key, label, CPU unit,
    # bound, whether the ratio must stay at or under it).
    for case, key, label, unit, bound, at_most in (
            ("uncontended", "p50_us", "uncontended pair p50", "µs/pair", 1.25, True),
            ("contended-8", "ops_per_sec", "contended K=8 handoffs/s", "µs/handoff", 0.9, False)):
        z, m = get(case, "zkrecipes"), get(case, "zkrecipes-mt")
        if not (z and m):
            continue
        r = ratio(m[key], z[key])
        shown = ("p50 %s µs vs %s µs" if key == "p50_us" else "%s/s vs %s/s") % (fmt(m[key]), fmt(z[key]))
        out.append(("multi-threaded C client: %s %s %s× the single-threaded one's"
                    % (label, "≤" if at_most else "≥", fmt(bound, 2).rstrip("0").rstrip(".")),
                    "%s (%s×); CPU %s vs %s %s" % (shown, fmt(r, 2), fmt(m["cpu_us_per_op"]),
                                                   fmt(z["cpu_us_per_op"]), unit),
                    verdict(r is not None and (r <= bound if at_most else r >= bound))))
    out += against_curator("zkrecipes-mt", " [zkrecipes-mt]")
    return out


def tls_markdown(rows):
    """What TLS costs (issue 27): the TLS libraries against their plain counterparts, and against each other, on
    the medians of this run; [] when no TLS library ran."""
    by = {(r["case"], r["library"]): r for r in rows if r["scenario"] != "failover" and r["reps"]}
    if not any(lib in TLS_LIBRARIES for _, lib in by):
        return []

    def val(case, lib, key):
        r = by.get((case, lib))
        return r.get(key) if r else None

    def ratio(a, b):
        return a / b if (a is not None and b) else None

    measures = [("uncontended", "p50_us", "uncontended pair, p50 µs"),
                ("uncontended", "ops_per_sec", "uncontended pairs/s"),
                ("uncontended", "cpu_us_per_op", "uncontended pair, client CPU µs"),
                ("contended-8", "ops_per_sec", "contended K=8, handoffs/s"),
                ("contended-8", "p50_us", "contended K=8, acquire p50 µs"),
                ("contended-8", "cpu_us_per_op", "contended K=8, client CPU µs/handoff")]
    lines = ["## TLS", "",
             "zkrecipes and Curator over TLS (the server's `secureClientPort`) beside plain text, in the same run "
             "against the same server; medians over the reps. TLS ÷ plain: the TLS library's figure divided by "
             "its plain counterpart's; the last column divides zkrecipes-tls's by curator-tls's.", "",
             "| measure | zkrecipes | zkrecipes-tls | TLS ÷ plain | curator | curator-tls | TLS ÷ plain "
             "| zkrecipes-tls ÷ curator-tls |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    summary = []
    for case, key, label in measures:
        if not any((case, lib) in by for lib in TLS_LIBRARIES):
            continue
        z, zt, c, ct = (val(case, lib, key) for lib in ("zkrecipes", "zkrecipes-tls", "curator", "curator-tls"))
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, fmt(z), fmt(zt), fmt(ratio(zt, z), 2), fmt(c), fmt(ct), fmt(ratio(ct, c), 2),
            fmt(ratio(zt, ct), 2)))
        if (case, key) in (("uncontended", "p50_us"), ("contended-8", "ops_per_sec")):
            summary.append("%s: zkrecipes-tls ÷ zkrecipes %s (%s → %s), curator-tls ÷ curator %s (%s → %s), "
                           "zkrecipes-tls ÷ curator-tls %s"
                           % (label, fmt(ratio(zt, z), 2), fmt(z), fmt(zt), fmt(ratio(ct, c), 2), fmt(c), fmt(ct),
                              fmt(ratio(zt, ct), 2)))
    lines += [""] + ["- " + x + "." for x in summary] + [""]
    return lines


def targets_markdown(rows):
    t = targets(rows)
    if not t:
        return []
    lines = ["## Targets", "",
             "The targets of issue 5 (and issue 25's, between the two C client flavours), checked automatically "
             "on this run's medians (ratios against Curator "
             "from the same run). Issue 25 asks both flavours to keep the targets against Curator: the rows "
             "marked [zkrecipes-mt] check them on the multi-threaded C client.", "",
             "| target | measured | verdict |", "|---|---|---|"]
    lines += ["| %s | %s | %s |" % row for row in t]
    return lines + [""]


def source_revision():
    """The source tree's commit, with "+local changes" when the tree differs from it (None without git)."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=20)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=20)
        return head.stdout.strip() + (" + local changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.TimeoutExpired):
        return None


def zkr_description(meta):
    if not meta.get("zkr_bench"):
        return "not run"
    parts = [meta.get("zkrecipes") or "version unknown"]
    if meta.get("revision"):
        parts.append("source %s" % meta["revision"])
    return "%s (%s, driver `%s`)" % (parts[0], ", ".join(parts[1:]) or "—", Path(meta["zkr_bench"]).name)


def failover_markdown(ftable):
    return [
        "## Leader failover",
        "",
        "What the recipes do and how they map to Curator's: [leader-election.md](leader-election.md), "
        "[porting guide](porting-from-curator.md#leader-election). Rerun: `cmake --build build --target "
        "bench-failover` (writes docs/benchmarks-failover.md), or `python3 bench/run_bench.py --only failover "
        "--zkr-bench build/bench/zkr_bench --out docs/benchmarks-failover`.",
        "",
        ftable,
        "",
        "How to read it:",
        "",
        "- One failover: the measuring driver (zkr_bench or CuratorBench) spawns a leader in a process of "
        "its own (the same driver and library, on a session of its own, on a fresh path), waits until it "
        "leads, queues its own participant behind it and, once the server holds that participant's watch on "
        "the leader's node, ends the leader. p50 / p99: nearest rank over every failover of every rep (with "
        "fewer than 100 failovers the p99 is the slowest one); p50 × Curator divides the p50 by Curator's "
        "(below 1: faster).",
        "- From the leader's end: *close*: from the leader process's clock just before its `close()` (the "
        "latch's node is deleted in the background; the selector's term is asked to stop, ends, and its node "
        "is deleted) to the follower's `is_leader` listener call (LeaderLatch) or the start of its "
        "`take_leadership` (LeaderSelector); both processes read CLOCK_MONOTONIC. *kill -9*: from just "
        "before the driver sends SIGKILL to the leader's process. The follower then learns only when the "
        "server expires the dead session: the figure includes the session timeout (%d ms, the least a server "
        "with tickTime=2000 grants). The server expires sessions in tickTime buckets, counting from the "
        "session's last packet (a ping at the latest a third of the timeout before the kill), so the expiry "
        "comes between "
        "about 2/3 of the timeout and the timeout + 2 s after the kill, whichever library (the drivers "
        "start the leaders of the kill cases spread evenly over the tick, so that no run sits at one phase of "
        "it): the kill rows' "
        "totals differ between libraries by that lottery, their library part is the next column."
        % FAILOVER_SESSION_TIMEOUT_MS,
        "- From the deletion notice: from the node-deleted event of an observer session (an `exists` watch "
        "on the leader's node, in the measuring process) to the follower's leadership: the library's own "
        "part (wake-up, re-list, claim, listener dispatch). It can come out slightly negative when the "
        "follower's event is handled before the observer's.",
        "- End → notice: from the leader's end to that event; in kill mode the session expiry as the server "
        "acts on it (plus the delivery of one event).",
        "- ZK requests per failover: the server's `mntr` counters read just before the leader's end and just "
        "after the follower leads, summed over the failovers; the observer's own watch event is taken out. "
        "The server counts pings as reads: the measuring process's two sessions use a 30 s timeout so that "
        "they do not ping during a kill's window (a stray ping can still add ~0.1). A session's expiry is no "
        "client request: in kill mode the dead leader's node goes without any write being counted.",
        "- kazoo is not run here (its `Election` is its `Lock`; left out of this scenario).",
        "",
    ]


def write_markdown(path, table, meta, notes, plot_note, png_name, rows=(), ftable=None):
    m = meta["machine"]
    lines = [
        "# zkrecipes lock benchmarks" if table else "# zkrecipes leader failover benchmark",
        "",
        "Generated by `bench/run_bench.py%s` on %s; %d rep(s) per case%s."
        % (meta.get("command") or (" --quick" if meta["quick"] else ""), meta["date"], meta["reps"],
           ", medians with [min..max] over reps" if table else ", the failovers of all reps pooled"),
        "",
        "## Setup",
        "",
        "- Machine: %s cores, %s, %s GiB memory, Linux %s." % (m["nproc"], m["cpu"] or "unknown CPU",
                                                                m["mem_gib"], m["kernel"]),
        "- ZooKeeper %s, standalone, `forceSync=yes`, on 127.0.0.1 (started by the runner, data dir in "
        "%s; fdatasync p50 there %s µs)." % (meta["zookeeper"] or "?", meta.get("data_dir") or "?",
                                     fmt(meta.get("fsync_us"))),
        "- Curator %s on %s; kazoo %s on Python %s; zkrecipes: %s."
        % (meta.get("curator") or "—", meta.get("java") or "—", meta.get("kazoo") or "—",
           meta.get("python") or "—", zkr_description(meta)),
        "",
    ]
    if meta.get("tls"):
        lines[-1:-1] = [
            "- TLS (`--tls`): the server also listens on a `secureClientPort` (`ssl.clientAuth=need`, PKCS12 "
            "stores), with `NettyServerCnxnFactory`, which then serves the plain port too: in this run the plain "
            "rows also go through Netty (docs/benchmarks.md's server uses the default NIO factory). The test PKI "
            "is made at run time: RSA 2048 keys, one client certificate shared by every TLS client (an "
            "AES-256-encrypted PEM key for zkrecipes-tls, a PKCS12 store for curator-tls). zkrecipes-tls is the "
            "same zkr_bench with `--tls-ca/--tls-cert/--tls-key/--tls-key-password` (`ClientConfig::tls`); "
            "curator-tls is CuratorBench with `-Dzookeeper.client.secure=true`, "
            "`-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty` and the "
            "`zookeeper.ssl.keyStore.*` / `trustStore.*` properties. `mntr` is read on the plain port.",
        ]
    if table:
        lines += [
        "## Results",
        "",
        table,
        "",
        "How to read it:",
        "",
        "- ops/s: acquire+release pairs per second (uncontended, semaphore mutex, multi-lock), lock "
        "handoffs per second (contended, drain), or completed read / write acquire+release pairs per "
        "second (read-write). × Curator divides the median by Curator's.",
        "- p50 / p99: latency of one pair (uncontended, semaphore mutex, multi-lock, read-write), of one "
        "acquire (contended), or the time between consecutive acquisitions (drain).",
        "- CPU µs/op: the client process's user+sys CPU time during the measured part, per operation "
        "(JVM JIT and GC threads included for Curator).",
        "- ZK reads/op, writes/op, watch events/op: from the server's `mntr` counters "
        "(`zk_cnt_readlatency`, `zk_cnt_updatelatency`, the `zk_sum_node_*_watch_count` sums), read by "
        "the driver just before and after its measured part. `~` marks estimates from counters read "
        "around the whole run (session set-up and warmup included, 2 writes per session removed).",
        "- Reps: the libraries take turns within each rep, in an order that rotates from rep to rep (so no "
        "library always has a case's first run); medians over the reps.",
        "- FIFO: in the drain case, whether the waiters acquired in the order of their sequence numbers.",
        "- Curator threads: scenario 4's Curator half. Curator has no asynchronous lock, so the "
        "zkrecipes async case's drain is queued with one blocked thread per waiter on as many sessions (4), "
        "trying the largest W first and smaller ones only while a run fails (one rep each); its peak RSS and "
        "thread count stand beside the zkrecipes case's in the targets below.",
        "- zkrecipes is built on the single-threaded ZooKeeper C client, zkrecipes-mt on the multi-threaded one "
        "(the same source; `--zkr-bench-mt`, docs/architecture.md \"Two C clients\").",
        "- zkrecipes-standard: zkrecipes with `StandardLockDriver` (Curator's request pattern: re-list after each "
        "wake-up) instead of the mutexes' default `PrewatchLockDriver`; run only where the pre-watch changes a "
        "hand-off (K=8, K=32, the long drain).",
        "- The machine is shared and noisy: compare ratios taken in one run, not absolute numbers "
        "across runs.",
        "",
        ]
        if meta.get("tls"):
            lines[-1:-1] = ["- zkrecipes-tls, curator-tls: zkrecipes and Curator connecting over TLS (see Setup); "
                            "their × Curator still divides by plain Curator's figure."]
    if table:
        lines += tls_markdown(rows)
    if ftable and not table and notes:  # a failover report: its notes (the machine's load) before its figures
        lines += ["Notes:", ""] + ["- " + n for n in notes] + [""]
        notes = []
    if ftable:
        lines += failover_markdown(ftable)
    lines += targets_markdown(rows)
    analysis = Path(path).parent / "benchmark-targets.md"
    if analysis.exists() and "## Targets" in lines:
        lines += ["Why a target is missed, with profiles and request counts: "
                  "[benchmark-targets.md](benchmark-targets.md).", ""]
    failover_report = Path(path).parent / "benchmarks-failover.md"
    if table and not ftable and failover_report.exists():
        lines += ["Leader failover times (LeaderLatch, LeaderSelector; close and kill -9) against Curator: "
                  "[benchmarks-failover.md](benchmarks-failover.md) (`bench/run_bench.py --only failover`).", ""]
    if notes:
        lines += ["Notes:", ""] + ["- " + n for n in notes] + [""]
    if not table:
        pass
    elif plot_note:
        lines += [plot_note[0].upper() + plot_note[1:] + ".", ""]
    else:
        lines += ["![operations per second, and latency p50 / p99, per case and library](%s)" % png_name, ""]
    Path(path).write_text("\n".join(lines))


# ----------------------------------------------------------------------------------------------


def main(argv=None):
    p = argparse.ArgumentParser(description="zkrecipes lock benchmarks: zkrecipes vs Curator vs kazoo")
    p.add_argument("--quick", action="store_true", help="tiny sizes, one rep: a smoke test")
    p.add_argument("--zkr-bench", help="path of the C++ zkr_bench driver")
    p.add_argument("--zkr-bench-mt", help="path of a zkr_bench built on the multi-threaded ZooKeeper C client "
                   "(-DZKR_ZOOKEEPER_CLIENT=mt), run as the library zkrecipes-mt")
    p.add_argument("--out", default=str(REPO / "docs" / "benchmarks"),
                   help="output prefix: writes <out>.md, <out>.csv and <out>.png")
    p.add_argument("--reps", type=int, help="runs per case and library (default 3, --quick 1)")
    p.add_argument("--only", help="comma-separated case ids or scenarios to run (default all)")
    p.add_argument("--libraries", help="comma-separated subset of " + ",".join(ORDER)
                   + " (default: %s; with --tls also %s)" % (",".join(LIBRARIES), ",".join(TLS_LIBRARIES)))
    p.add_argument("--tls", action="store_true", help="the server also opens a TLS port (PKI made at run time): "
                   "runs zkrecipes-tls (--zkr-bench with its --tls-* options) and curator-tls beside their "
                   "plain counterparts")
    p.add_argument("--port", type=int, help="ZooKeeper client port (default: a free one in 22000-22999)")
    p.add_argument("--jar-dir", default="/usr/share/java", help="where the Debian jars are")
    p.add_argument("--timeout-s", type=int, help="per driver run (default 600, --quick 120)")
    p.add_argument("--data-dir", help="parent directory of the server's data dir (default: the system temp "
                   "dir); its fsync latency is measured and reported")
    p.add_argument("--note", action="append", default=[],
                   help="a line for the report's notes (repeatable), e.g. what else loaded the machine")
    args = p.parse_args(argv)
    if args.libraries is None:
        args.libraries = ",".join(LIBRARIES + (list(TLS_LIBRARIES) if args.tls else []))
    args.libraries = [x.strip() for x in args.libraries.split(",") if x.strip()]
    reps = args.reps or (1 if args.quick else 3)
    timeout_s = args.timeout_s or (120 if args.quick else 600)

    def on_term(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    notes = list(args.note)
    drivers = make_drivers(args, notes)
    for n in notes:
        log(n)
    if not drivers:
        log("no benchmark driver is available")
        return 2
    java = shutil.which("java")
    if not java:
        log("java not found: cannot start ZooKeeper")
        return 2

    # The failover cases run only when named (--only failover): minutes of waiting on session expiries, and
    # a report of their own (docs/benchmarks-failover.md). The test bench.failover_quick runs them --quick.
    selected = cases(args.quick)
    if args.only:
        want = {x.strip() for x in args.only.split(",")}
        every = cases(args.quick) + failover_cases(args.quick)
        selected = [c for c in every if c[0] in want or c[1] in want]
        if not selected:
            log("--only %s: no such case or scenario (case ids: %s)"
                % (args.only, ", ".join(c[0] for c in every)))
            return 2

    workdir = tempfile.mkdtemp(prefix="zkr-bench-zk-", dir=args.data_dir)
    server = ZooKeeperServer(java, args.jar_dir, workdir, args.port)
    all_rows = []
    bad = []
    meta = {"quick": args.quick, "reps": reps, "machine": machine_info(),
            "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "java": java_version(java), "python": None, "kazoo": None, "curator": None,
            "zkr_bench": args.zkr_bench if "zkrecipes" in drivers else None, "zkrecipes": None,
            "revision": source_revision(), "data_dir": workdir, "fsync_us": fsync_latency_us(workdir),
            "tls": args.tls,
            "command": "".join([" --quick" if args.quick else "", " --tls" if args.tls else "",
                                " --only %s" % args.only if args.only else "",
                                " --reps %d" % args.reps if args.reps else ""])}
    try:
        if args.tls:
            t = time.monotonic()
            server.pki = make_pki(Path(workdir) / "pki", java)
            log("test PKI made in %s (%.1f s)" % (server.pki.dir, time.monotonic() - t))
        server.start()
        meta["zookeeper"] = server.version()
        log("ZooKeeper %s on 127.0.0.1:%d%s (pid %d)" % (meta["zookeeper"], server.port,
                                                         ", TLS on :%d" % server.secure_port if server.pki else "",
                                                         server.proc.pid))
        order = [lib for lib in ORDER if lib in drivers]
        jobs = [(c[0], lib) for c in selected for lib in order if lib in case_libraries(c)]
        by_id = {c[0]: c for c in selected}

        def case_reps(case):  # a case may cap its reps ("_reps": the 10,000-waiter case runs once)
            return min(reps, case[3].get("_reps", reps)) * len(case[3].get("_ladder", [None]))

        total = sum(case_reps(by_id[cid]) for cid, _ in jobs)
        done = 0
        warm_up(drivers, order, server, timeout_s)
        for case in selected:
            if "_ladder" in case[3]:
                lib = (case[4] or DEFAULT_LIBRARIES)[0]
                if lib in drivers:
                    row, failed_first, done = run_ladder(drivers[lib], server, case, timeout_s, done, total, notes)
                    all_rows += row
                    if failed_first:
                        bad.append(failed_first)
                continue
            case_rows = []
            libs = [lib for lib in order if (case[0], lib) in jobs]
            runs = {lib: [] for lib in libs}
            # Reps interleaved across libraries so that a drift of the shared machine or of the server (JIT,
            # data tree, log) does not favour whoever runs last, and the order rotated from rep to rep
            # (zkrecipes, Curator, kazoo; Curator, kazoo, zkrecipes; ...) so that no library always takes the
            # case's first, coldest run.
            for rep in range(1, case_reps(case) + 1):
                shift = (rep - 1) % len(libs)
                for lib in libs[shift:] + libs[:shift]:
                    done += 1
                    r = run_one(drivers[lib], server, case, rep, timeout_s)
                    runs[lib].append(r)
                    if "failure" in r:
                        msg = "%s %s rep %d: %s" % (case[0], lib, rep, r["failure"])
                        bad.append(msg)
                        log("[%d/%d] FAILED %s\n    %s\n%s" % (done, total, msg, " ".join(r["argv"]),
                                                             r["stderr"]))
                        continue
                    res = r["result"]
                    ex = res.get("extra") or {}
                    meta["curator"] = meta["curator"] or ex.get("curator_version")
                    meta["kazoo"] = meta["kazoo"] or ex.get("kazoo_version")
                    meta["zkrecipes"] = meta["zkrecipes"] or ex.get("zkrecipes_version")
                    if lib == "kazoo":
                        meta["python"] = meta["python"] or ex.get("python_version")
                    if res.get("fifo_ok") is False:
                        bad.append("%s %s rep %d: fifo_ok false" % (case[0], lib, rep))
                    log("[%d/%d] %s %s rep %d: %.0f ops/s, p50 %s µs, p99 %s µs, %s reads + %s "
                        "writes/op%s" % (done, total, case[0], lib, rep, res.get("ops_per_sec") or 0,
                                         res.get("p50_us"), res.get("p99_us"),
                                         fmt(r["requests"]["reads"], 1), fmt(r["requests"]["writes"], 1),
                                         "" if res.get("fifo_ok") is None else
                                         ", fifo_ok %s" % res.get("fifo_ok")))
            for lib in libs:
                case_rows += rows_of(case, lib, runs[lib])
            # rwlock has two rows per library: group them by row, libraries in a fixed order.
            labels = []
            for r in case_rows:
                if r["row"] not in labels:
                    labels.append(r["row"])
            case_rows.sort(key=lambda r: labels.index(r["row"]))
            all_rows += case_rows
    except SetupError as e:
        log("setup failed: %s" % e)
        return 2
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    add_ratios(all_rows)
    locks, failovers = lock_rows(all_rows), failover_rows(all_rows)
    table = markdown_table(locks) if locks else None
    ftable = failover_table(failovers) if failovers else None
    print("\n\n".join(t for t in (table, ftable) if t))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(str(out) + ".csv", all_rows)
    plot_note = write_plot(str(out) + ".png", locks, ORDER) if locks else None
    if plot_note:
        log(plot_note)
    if bad:
        notes = notes + ["failed runs: " + "; ".join(bad)]
    write_markdown(str(out) + ".md", table, meta, notes, plot_note, out.name + ".png", all_rows, ftable)
    log("wrote %s.md, %s.csv%s" % (out, out, "" if plot_note or not locks else ", %s.png" % out))
    if bad:
        log("FAILED: " + "; ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
