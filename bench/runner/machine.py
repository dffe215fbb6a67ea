"""What the report says about the machine and the sources: CPU, memory, fsync latency, Java, the revision."""

import os
import platform
import subprocess
import time
from pathlib import Path

from .common import REPO


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
