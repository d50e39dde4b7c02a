"""A real Ray cluster on loopback addresses of this machine, owned by the caller.

``LocalRayCluster`` starts a head node on 127.0.0.2 and worker nodes on 127.0.0.3, 127.0.0.4,
... with ``ray start --block`` (each in its own session, so the test owns every process), every
port explicit and checked free, a small object store and one CPU per node. Each node's
processes carry ``FABRIC_RAY_NODE=<tag>/<node name>`` in their environment (Ray passes the
environment of ``ray start`` on to its raylet and workers, and the workers to the adapter hosts
they start), which is how a node is killed (``kill_node``) and how leftovers are found
(``processes``) without ``ray stop`` (that would end every cluster on the machine).

Ray's token authentication is off (``RAY_AUTH_MODE=disabled``) for the nodes and, while the
cluster runs, for this process and the drivers it starts: the cluster listens on loopback
only, and Ray reads the mode when it is imported, so a token cluster would fail any driver
that imported Ray first; an explicit mode also keeps a ``~/.ray/auth_token`` left by some
other Ray run from turning token mode on for the nodes only.

Used by ``test_ray.py`` and ``bench/ray_bench.py``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

HEAD_IP = "127.0.0.2"
#: Ports each node needs besides its worker ports.
_NODE_PORTS = (
    "--node-manager-port",
    "--object-manager-port",
    "--dashboard-agent-listen-port",
    "--dashboard-agent-grpc-port",
    "--runtime-env-agent-port",
    "--metrics-export-port",
)
_WORKER_PORTS = 24
#: Node death is noticed after about period × threshold (Ray's default is ~15 s).
_SYSTEM_CONFIG = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}


def _ray_command() -> str:
    candidate = Path(sys.executable).with_name("ray")
    return str(candidate) if candidate.exists() else "ray"


def _free_ports(count: int, taken: set[int]) -> list[int]:
    """``count`` distinct ports free on every address right now (bound together, released)."""

    sockets: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < count:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            port = random.randint(20000, 59000)
            try:
                sock.bind(("0.0.0.0", port))
            except OSError:
                sock.close()
                continue
            if port in taken:
                sock.close()
                continue
            sockets.append(sock)
            ports.append(port)
            taken.add(port)
    finally:
        for sock in sockets:
            sock.close()
    return ports


@dataclass
class Node:
    name: str
    ip: str
    process: subprocess.Popen
    log: Path
    resources: dict[str, float] = field(default_factory=dict)


class LocalRayCluster:
    """Head + ``workers`` worker nodes on loopback. Use as a context manager."""

    def __init__(
        self,
        *,
        workers: int = 2,
        worker_resources: dict[str, float] | None = None,
        object_store_bytes: int = 100 * 1024 * 1024,
        env: dict[str, str] | None = None,
    ) -> None:
        self.tag = f"fabric-ray-{uuid.uuid4().hex[:8]}"
        # Unix socket paths are limited to 107 bytes: keep the temp dir short.
        self.root = Path(tempfile.mkdtemp(prefix="fr", dir="/tmp"))
        self.nodes: list[Node] = []
        self._workers = workers
        self._worker_resources = dict(worker_resources or {"fabric": 100})
        self._object_store = object_store_bytes
        self._env = dict(env or {})
        self._ports: set[int] = set()
        self.gcs_port = 0
        self.auth = {"RAY_AUTH_MODE": "disabled"}
        self._saved_env: dict[str, str | None] = {}
        #: Node ip -> Ray node id, filled by the caller once connected.
        self.node_ids: dict[str, str] = {}

    @property
    def address(self) -> str:
        return f"{HEAD_IP}:{self.gcs_port}"

    def __enter__(self) -> LocalRayCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _start_node(self, name: str, ip: str, resources: dict[str, float], head: bool) -> Node:
        ports = _free_ports(len(_NODE_PORTS) + _WORKER_PORTS + (1 if head else 0), self._ports)
        command = [_ray_command(), "start", "--block", "--node-ip-address", ip]
        if head:
            self.gcs_port = ports.pop()
            command += [
                "--head",
                "--port",
                str(self.gcs_port),
                "--include-dashboard=false",
                "--disable-usage-stats",
                "--system-config",
                json.dumps(_SYSTEM_CONFIG),
            ]
        else:
            command += ["--address", self.address]
        for flag in _NODE_PORTS:
            command += [flag, str(ports.pop())]
        command += [
            "--worker-port-list",
            ",".join(str(port) for port in ports),
            "--num-cpus",
            "1",
            "--resources",
            json.dumps(resources),
            "--object-store-memory",
            str(self._object_store),
            "--temp-dir",
            str(self.root / name),
        ]
        env = dict(os.environ)
        env.update(self._env)
        env.update(self.auth)
        env["FABRIC_RAY_NODE"] = f"{self.tag}/{name}"
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        log = self.root / f"{name}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        node = Node(name, ip, process, log, resources)
        self.nodes.append(node)
        return node

    def start(self, timeout: float = 90.0) -> None:
        for key, value in self.auth.items():
            self._saved_env[key] = os.environ.get(key)
            os.environ[key] = value
        self._start_node("head", HEAD_IP, {"head": 1}, head=True)
        deadline = time.monotonic() + timeout
        self._wait_ports(deadline)
        for index in range(self._workers):
            name = f"w{index + 1}"
            resources = {name: 1, **self._worker_resources}
            self._start_node(name, f"127.0.0.{3 + index}", resources, head=False)

    def _wait_ports(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            head = self.nodes[0]
            if head.process.poll() is not None:
                raise RuntimeError(f"ray head exited: {head.log.read_text()[-2000:]}")
            try:
                with socket.create_connection((HEAD_IP, self.gcs_port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError("the Ray head did not listen in time")

    def wait_nodes(self, ray_module, count: int, timeout: float = 90.0) -> None:
        """Wait until ``count`` nodes are alive (after ``ray.init``)."""

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = [node for node in ray_module.nodes() if node.get("Alive")]
            if len(alive) >= count:
                return
            for node in self.nodes:
                if node.process.poll() is not None:
                    raise RuntimeError(f"ray node {node.name} exited: {node.log.read_text()[-2000:]}")
            time.sleep(0.2)
        raise TimeoutError(f"fewer than {count} Ray nodes came up in time")

    def processes(self, node: str | None = None) -> list[int]:
        """Pids of the live processes of this cluster (of one node)."""

        marker = f"FABRIC_RAY_NODE={self.tag}/{node or ''}".encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state == "Z":
                continue
            if any(item.startswith(marker) for item in environ.split(b"\0")):
                found.append(int(entry))
        return found

    def adapter_processes(self) -> list[int]:
        """Pids of live scripted adapter hosts started by this cluster's workers."""

        found = []
        for pid in self.processes():
            try:
                exe = os.readlink(f"/proc/{pid}/exe")
            except OSError:
                continue
            if os.path.basename(exe).startswith("fabric-adapter-scripted"):
                found.append(pid)
        return found

    def kill_node(self, name: str) -> list[int]:
        """SIGKILL every process of one node (its ``ray start``, raylet, workers, adapters)."""

        node = next(node for node in self.nodes if node.name == name)
        killed: list[int] = []
        for _ in range(20):
            pids = self.processes(name)
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        node.process.wait(timeout=10)
        return killed

    def stop(self) -> None:
        """Stop every process this cluster started, by pid (SIGTERM, then SIGKILL)."""

        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.processes()
            for node in self.nodes:
                if node.process.poll() is None:
                    pids.append(node.process.pid)
            if not pids:
                break
            for pid in set(pids):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and self.processes():
                time.sleep(0.1)
        for node in self.nodes:
            try:
                node.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.root, ignore_errors=True)
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env = {}
