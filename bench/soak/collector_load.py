"""Collector load of the soak: a standalone ``fabric collector serve`` under churn.

Each round, while 200 idle connections are held (the ones the collector shed are opened
again), 100 registrations are made and publish at once (one ``POST /v1/atof`` each, on
concurrent connections), then each is deregistered and its stream drained over HTTP (every
record must arrive). After every round the collector's resident memory (``VmRSS``) and open
descriptors (``/proc/PID/fd``) are sampled with the idle set refreshed; both must stay flat:
the last sample may exceed the first by at most ``rss_slack_mib`` MiB and ``fd_slack``
descriptors.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

REGISTRATIONS = 100
IDLE = 200
RECORDS = 20


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Served:
    """A running ``fabric collector serve`` on 127.0.0.1 (stopped by ``close``)."""

    def __init__(self, binary: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "FABRIC_COLLECTOR_TOKEN"}
        self.process = subprocess.Popen(
            [str(binary), "collector", "serve", "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.process.stdout is not None
        first = json.loads(self.process.stdout.readline())
        host, port = first["base_url"].removeprefix("http://").rsplit(":", 1)
        self.addr = (host, int(port))
        self.auth = f"Authorization: Bearer {first['token']}\r\n"

    def connect(self, timeout: float = 30.0) -> socket.socket:
        return socket.create_connection(self.addr, timeout=timeout)

    def call(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        with self.connect() as sock:
            head = f"{method} {path} HTTP/1.1\r\n{self.auth}Content-Length: {len(body)}\r\n\r\n"
            sock.sendall(head.encode() + body)
            raw = read_all(sock)
        status = int(raw.split(b" ", 2)[1])
        return status, raw.split(b"\r\n\r\n", 1)[1]

    def drain(self, request_id: str) -> int:
        """Reads a registration's stream to its end; the number of records."""
        with self.connect() as sock:
            sock.sendall(f"GET /v1/stream/{request_id} HTTP/1.1\r\n{self.auth}\r\n".encode())
            raw = read_all(sock)
        body = raw.split(b"\r\n\r\n", 1)[1]
        count = 0
        while True:
            size_line, _, rest = body.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                return count
            count += 1
            body = rest[size + 2 :]

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def alive(sock: socket.socket) -> bool:
    """Whether the collector still holds the connection (no EOF or reset pending)."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def refresh(served: Served, idle: list[socket.socket]) -> None:
    """Keeps IDLE idle connections open: the ones the collector shed are replaced."""
    kept = []
    for sock in idle:
        if alive(sock):
            kept.append(sock)
        else:
            sock.close()
    while len(kept) < IDLE:
        kept.append(served.connect())
    idle[:] = kept
    time.sleep(0.2)  # the collector accepts (and sheds) them


def publish(served: Served, request_id: str, pad: str) -> int:
    lines = [
        {"kind": "scope", "scope_category": "start", "uuid": request_id,
         "metadata": {"nemo_fabric_request_id": request_id}},
    ]
    lines += [
        {"kind": "mark", "uuid": f"{request_id}-{i}", "parent_uuid": request_id, "pad": pad}
        for i in range(RECORDS - 1)
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return served.call("POST", "/v1/atof", body)[0]


def one_round(served: Served, index: int, idle: list[socket.socket]) -> list[str]:
    problems = []
    ids = [f"soak-{index}-{i}" for i in range(REGISTRATIONS)]
    for request_id in ids:
        status, _ = served.call("POST", "/v1/register", json.dumps({"request_id": request_id}).encode())
        if status != 201:
            problems.append(f"register {request_id}: {status}")
    statuses: list[int] = []
    pad = "x" * 1024
    threads = [threading.Thread(target=lambda r=r: statuses.append(publish(served, r, pad))) for r in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if statuses.count(200) != REGISTRATIONS:
        problems.append(f"round {index}: publishes answered {sorted(set(statuses))}")
    for request_id in ids:
        served.call("DELETE", f"/v1/deregister-request/{request_id}")
        got = served.drain(request_id)
        if got != RECORDS:
            problems.append(f"round {index}: {request_id} delivered {got} of {RECORDS} records")
    return problems


def run(binary: Path, rounds: int, rss_slack_mib: int, fd_slack: int) -> tuple[dict[str, Any], list[str]]:
    if not binary.is_file():
        return {}, [f"collector load: {binary} is missing (cargo build -p fabric-cli)"]
    served = Served(binary)
    idle: list[socket.socket] = []
    problems: list[str] = []
    rss, fds = [], []
    started = time.monotonic()
    try:
        for index in range(rounds):
            refresh(served, idle)
            problems += one_round(served, index, idle)
            refresh(served, idle)
            rss.append(rss_kib(served.process.pid))
            fds.append(fd_count(served.process.pid))
        stats = json.loads(served.call("GET", "/v1/stats")[1])
    finally:
        for sock in idle:
            sock.close()
        served.close()
    if rss and rss[-1] - rss[0] > rss_slack_mib * 1024:
        problems.append(f"collector RSS grew from {rss[0]} to {rss[-1]} KiB over {rounds} rounds")
    if fds and fds[-1] - fds[0] > fd_slack:
        problems.append(f"collector descriptors grew from {fds[0]} to {fds[-1]} over {rounds} rounds")
    report = {
        "rounds": rounds,
        "registrations_per_round": REGISTRATIONS,
        "idle_connections": IDLE,
        "seconds": round(time.monotonic() - started, 2),
        "rss_kib_after_each_round": rss,
        "fds_after_each_round": fds,
        "records_routed": stats.get("records_routed"),
        "registrations_left": stats.get("registrations"),
    }
    if stats.get("registrations") != 0:
        problems.append(f"collector load: {stats.get('registrations')} registrations left")
    return report, problems
