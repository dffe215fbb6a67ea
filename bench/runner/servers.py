"""The benchmark's ZooKeeper, started through zkr_bench_server (bench/server/zkr_bench_server.cpp), which runs the
project's own test support (zkrecipes::testing: TestingServer, TestCertificates); and the four-letter words the
runner reads the server's counters with."""

import json
import select
import socket
import subprocess
import time
from pathlib import Path

from .common import SetupError


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


class TlsFiles:
    """The TLS client files zkr_bench_server made (TestCertificates: its CA, one client certificate for every TLS
    client with an encrypted PEM key for the C client and a PKCS12 store for Java, and the trust store)."""

    def __init__(self, tls):
        self.dir = Path(tls["ca"]).parent
        self.files = tls

    def zkr_options(self):
        t = self.files
        return ["--tls-ca", t["ca"], "--tls-cert", t["cert"], "--tls-key", t["key"],
                "--tls-key-password", t["key_password"]]

    def java_properties(self):
        t = self.files
        return ["-Dzookeeper.client.secure=true",
                "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
                "-Dzookeeper.ssl.keyStore.location=%s" % t["key_store"],
                "-Dzookeeper.ssl.keyStore.password=" + t["key_store_password"],
                "-Dzookeeper.ssl.keyStore.type=PKCS12",
                "-Dzookeeper.ssl.trustStore.location=%s" % t["trust_store"],
                "-Dzookeeper.ssl.trustStore.password=" + t["trust_store_password"],
                "-Dzookeeper.ssl.trustStore.type=PKCS12"]


class BenchServer:
    """One standalone ZooKeeper on 127.0.0.1 (tickTime 2000, forceSync=yes), with a TLS port when `tls` and SASL
    offered when `sasl` (the mechanism): a
    zkr_bench_server child that prints where it listens and stops the server at the end of its stdin."""

    def __init__(self, helper, workdir, port=None, tls=False, start_timeout_s=120, sasl=None):
        self.helper = helper
        self.workdir = Path(workdir)
        self.requested_port = port
        self.tls = tls
        self.sasl_mechanism = sasl  # None, "digest-md5" or "gssapi"
        self.sasl = None  # with sasl: zkr_bench_server's description of the SASL user (its "sasl" object)
        self.start_timeout_s = start_timeout_s
        self.proc = None
        self.info = None
        self.port = None
        self.secure_port = None
        self.pki = None  # TlsFiles with --tls
        self.stderr_path = self.workdir / "zkr_bench_server.log"

    def start(self):
        argv = [self.helper, "--data-dir", str(self.workdir / "zookeeper"), "--tick-ms", "2000",
                "--force-sync", "yes"]
        if self.requested_port:
            argv += ["--port", str(self.requested_port)]
        if self.tls:
            argv.append("--tls")
        if self.sasl_mechanism:
            argv += ["--sasl", self.sasl_mechanism]
        with open(self.stderr_path, "ab") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         start_new_session=True)
        line = self._first_line()
        if not line:
            rc = self.stop()
            tail = self.stderr_path.read_text(errors="replace")[-2500:] if self.stderr_path.exists() else ""
            raise SetupError("zkr_bench_server (exit status %s) started no ZooKeeper:\n%s" % (rc, tail))
        self.info = json.loads(line)
        self.port = self.info["ports"][0]
        if self.tls:
            self.secure_port = self.info["secure_ports"][0]
            self.pki = TlsFiles(self.info["tls"])
        if self.sasl_mechanism:
            self.sasl = self.info["sasl"]

    def _first_line(self):
        deadline = time.monotonic() + self.start_timeout_s
        out = self.proc.stdout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], 1.0)
            if ready:
                line = out.readline()
                return line.decode("utf-8", "replace").strip() if line else None
            if self.proc.poll() is not None:
                return None
        return None

    def pid(self):
        return self.info["pids"][0] if self.info else None

    def stop(self):
        """Ends zkr_bench_server's stdin: it stops the server and exits (SIGTERM, then SIGKILL, if it does not).
        Returns its exit status (None when it was not running)."""
        if self.proc is None:
            return None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        for signal_it in (None, self.proc.terminate, self.proc.kill):
            if signal_it:
                signal_it()
            try:
                self.proc.wait(timeout=20)
                break
            except subprocess.TimeoutExpired:
                continue
        self.proc.stdout.close()
        rc, self.proc = self.proc.returncode, None
        return rc

    def version(self):
        try:
            v = str(mntr(self.port).get("zk_version", ""))
            return v.split("-")[0].split(",")[0].strip() or None
        except OSError:
            return None
