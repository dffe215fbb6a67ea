"""The benchmark drivers: zkr_bench (and its -mt, -standard and -tls forms), CuratorBench (compiled here
with javac) and kazoo_bench.py, each as a command line."""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import BENCH, CLIENT_JARS, NATIVE_LIBRARY, REPO, SASL_LIBRARIES, TLS_LIBRARIES, SetupError, log


class Driver:
    def __init__(self, name, argv, supports_mntr, tls=None, sasl=None):
        self.name = name
        self.argv = argv
        self.supports_mntr = supports_mntr
        # A TLS driver: a function of the server's Pki giving its command line; it connects to the secure port.
        self.tls = tls
        # A SASL driver: a function of the server's SASL description giving its command line.
        self.sasl = sasl

    def command(self, server):
        if self.sasl:
            return self.sasl(server.sasl)
        return self.tls(server.pki) if self.tls else list(self.argv)

    def connect_port(self, server):
        return server.secure_port if self.tls else server.port


def build_curator_bench(java, javac, jar_dir):
    """CuratorBench compiled (every class of bench/java/) into a cache dir under the system temp dir when its
    class file is missing or older than a source; its command line."""
    java_dir = BENCH / "java"
    srcs = sorted(java_dir.glob("*.java"))
    jars = []
    for name in CLIENT_JARS:
        p = Path(jar_dir) / (name + ".jar")
        if not p.exists():
            if name == "slf4j-nop":
                continue
            raise SetupError("%s not found (install libcurator-recipes-java)" % p)
        jars.append(str(p))
    cp = ":".join(jars)
    key = hashlib.sha1(str(java_dir / "CuratorBench.java").encode()).hexdigest()[:12]
    out = Path(tempfile.gettempdir()) / ("zkrecipes-bench-java-" + key)
    cls = out / "CuratorBench.class"
    if not cls.exists() or cls.stat().st_mtime < max(s.stat().st_mtime for s in srcs):
        out.mkdir(parents=True, exist_ok=True)
        log("compiling %s -> %s" % (java_dir.relative_to(REPO), out))
        r = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-cp", cp, "-d", str(out)] + [str(s) for s in srcs],
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


def sasl_argv(argv):
    """A zkr_bench command line that authenticates with SASL: a function of the "sasl" object zkr_bench_server
    printed (DIGEST-MD5's user and password file, or GSSAPI's principal, keytab, server host and the realm's
    krb5.conf, given to MIT's library as $KRB5_CONFIG)."""
    def make(info):
        opts = ["--sasl-mechanism", info["mechanism"]]
        for key in ("user", "password_file", "principal", "keytab", "server_host"):
            if info.get(key):
                opts += ["--sasl-" + key.replace("_", "-"), info[key]]
        env = ["env", "KRB5_CONFIG=" + info["krb5_conf"]] if info.get("krb5_conf") else []
        return env + list(argv) + opts
    return make


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
    if NATIVE_LIBRARY in wanted:
        d, _ = zkr_driver(NATIVE_LIBRARY, args.zkr_bench, notes, "--zkr-bench")
        if d:
            drivers[NATIVE_LIBRARY] = Driver(NATIVE_LIBRARY, ["env", "ZKR_ZOOKEEPER_TRANSPORT=native"] + d.argv,
                                             d.supports_mntr)
    if "zkrecipes-mt" in wanted:
        d, _ = zkr_driver("zkrecipes-mt", args.zkr_bench_mt, notes, "--zkr-bench-mt")
        if d:
            drivers["zkrecipes-mt"] = d
    for lib, plain in SASL_LIBRARIES.items():
        if lib not in wanted:
            continue
        if not args.sasl:
            notes.append("%s skipped: no --sasl given" % lib)
        elif plain in drivers:
            d = drivers[plain]
            drivers[lib] = Driver(lib, d.argv, d.supports_mntr, sasl=sasl_argv(d.argv))
        else:
            notes.append("%s skipped: it runs beside %s, which this run has not" % (lib, plain))
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
