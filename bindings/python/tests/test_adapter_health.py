"""Tests for fabric_core.adapter_health: the Python health listener against a small,
independent client of the same wire (the Rust client is exercised against this listener in
fabric-health/tests/all/python_listener.rs)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import importlib.util
import json
import os
import secrets
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from pathlib import Path

_MODULE_PATH = Path(__file__).resolve().parents[1] / "src" / "fabric_core" / "adapter_health.py"


def _load_module():
    # Load by path: the module must work without the native library the package loads.
    spec = importlib.util.spec_from_file_location("fabric_adapter_health_under_test", _MODULE_PATH)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


ah = _load_module()

SLACK = 0.25


# -- an independent client of the wire --------------------------------------------------


def _canon(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _signed(key: bytes, body: dict) -> bytes:
    body = dict(body)
    body["mac"] = hmac.new(key, _canon(body), hashlib.sha256).hexdigest()
    return _canon(body) + b"\n"


def _request(key: bytes, level: str, *, nonce: str | None = None, budget_ms: int = 2000,
             issued_at_ms: int | None = None) -> bytes:
    return _signed(key, {
        "kind": "fabric.health/request",
        "v": 1,
        "nonce": nonce or secrets.token_hex(32),
        "level": level,
        "budget_ms": budget_ms,
        "issued_at_ms": issued_at_ms if issued_at_ms is not None else int(time.time() * 1000),
    })


def _connect(endpoint: dict, timeout: float = 5.0) -> socket.socket:
    """Connects to the listener an endpoint file names (v2 unix socket or v1 TCP)."""
    if endpoint["schema_version"] == "fabric.health-endpoint/v2":
        assert endpoint["transport"] == "unix", endpoint
        # A unix connect fails with EAGAIN while the backlog is full: retry until the timeout.
        deadline = time.monotonic() + timeout
        while True:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(timeout)
            path, dir_fd = endpoint["socket"], None
            if len(path) > 100:  # too long for a socket address: go through the directory fd
                dir_fd = os.open(os.path.dirname(path), os.O_RDONLY)
                path = f"/proc/self/fd/{dir_fd}/{os.path.basename(path)}"
            try:
                conn.connect(path)
                return conn
            except BlockingIOError:
                conn.close()
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.002)
            except OSError:
                conn.close()
                raise
            finally:
                if dir_fd is not None:
                    os.close(dir_fd)
    assert endpoint["schema_version"] == "fabric.health-endpoint/v1", endpoint
    return socket.create_connection((endpoint["host"], endpoint["port"]), timeout=timeout)


def _raw_exchange(endpoint: dict, line: bytes, timeout: float = 5.0) -> bytes:
    with _connect(endpoint, timeout) as conn:
        conn.sendall(line)
        data = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return data
            data += chunk


def _endpoint(home: str) -> dict:
    with open(os.path.join(home, "health.endpoint.json"), "rb") as handle:
        return json.load(handle)


def _check(home: str, level: str, budget_ms: int = 2000):
    """Returns the verified observations, or None when the listener gave no valid answer."""
    endpoint = _endpoint(home)
    key = bytes.fromhex(endpoint["secret"])
    nonce = secrets.token_hex(32)
    answer = _raw_exchange(endpoint, _request(key, level, nonce=nonce, budget_ms=budget_ms),
                           timeout=budget_ms / 1000 + SLACK)
    if not answer.endswith(b"\n"):
        return None
    body = json.loads(answer)
    mac = body.pop("mac")
    expected = hmac.new(key, _canon(body), hashlib.sha256).hexdigest()
    assert hmac.compare_digest(mac, expected), "response MAC"
    assert body["kind"] == "fabric.health/response"
    assert body["nonce"] == nonce
    assert body["pid"] == endpoint["pid"]
    return body["observations"]


def _summary(observations):
    return [(o["level"], o["outcome"], o["reason"]) for o in observations]


class _Runtime:
    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def check(self, level):
        self.calls.append(level)
        answer = self.answers[level]
        if isinstance(answer, BaseException):
            raise answer
        return answer() if callable(answer) else answer


class _Attacker:
    """Holds ``n`` idle connections to a TCP listener and reopens each one it closes."""

    def __init__(self, endpoint: dict, n: int) -> None:
        self.endpoint, self.n, self.held = endpoint, n, 0
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        conns: list[socket.socket | None] = [None] * self.n
        try:
            while not self._stop.is_set():
                for i, conn in enumerate(conns):
                    if conn is not None:
                        try:
                            if conn.recv(1) == b"":
                                conn.close()
                                conns[i] = conn = None
                        except BlockingIOError:
                            continue
                        except OSError:
                            conn.close()
                            conns[i] = conn = None
                    if conn is None:
                        try:
                            conn = _connect(self.endpoint, timeout=0.2)
                            conn.setblocking(False)
                            conns[i] = conn
                        except OSError:
                            pass
                self.held = sum(1 for c in conns if c is not None)
                self._ready.set()
                time.sleep(0.01)
        finally:
            for conn in conns:
                if conn is not None:
                    conn.close()

    def __enter__(self) -> "_Attacker":
        self._thread.start()
        assert self._ready.wait(60), "attacker opens its connections"
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


class CanonicalTests(unittest.TestCase):
    def test_matches_rust_canonical_form_and_mac_vector(self):
        value = {"b": [1, {"z": None, "a": True}], "a": "x\"\\\n\u0001é", "c": -3}
        self.assertEqual(
            ah.canonical(value).decode(),
            '{"a":"x\\"\\\\\\n\\u0001é","b":[1,{"a":true,"z":null}],"c":-3}',
        )
        # Same vector as fabric-health/src/wire.rs known_mac_vector.
        self.assertEqual(
            hmac.new(bytes(range(32)), ah.canonical({"a": 1}), hashlib.sha256).hexdigest(),
            "b4cebde30982443ec36c18fa99ad10a70e705bba779f57c37e84decb64ae50fb",
        )


class ListenerTests(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.home = self._tmp.name
        self.listeners = []

    def tearDown(self):
        for listener in self.listeners:
            listener.stop()
        self._tmp.cleanup()

    def serve(self, runtime, **kwargs):
        listener = ah.serve_health(runtime, self.home, **kwargs)
        self.listeners.append(listener)
        return listener

    def test_ready_passes_in_order(self):
        runtime = _Runtime({"live": True, "active": "passed",
                            "ready": {"outcome": "passed", "source_id": "py:ready"}})
        self.serve(runtime)
        observations = _check(self.home, "ready")
        self.assertEqual(_summary(observations),
                         [("live", "passed", None), ("active", "passed", None), ("ready", "passed", None)])
        self.assertEqual(observations[2]["source_id"], "py:ready")
        self.assertEqual(observations[0]["source_id"], "adapter:check")
        self.assertTrue(all(o["observed_at"].endswith("Z") for o in observations))
        self.assertEqual(runtime.calls, ["live", "active", "ready"])

    def test_live_request_probes_only_live(self):
        runtime = _Runtime({"live": True, "active": True, "ready": True})
        self.serve(runtime)
        self.assertEqual(_summary(_check(self.home, "live")), [("live", "passed", None)])
        self.assertEqual(runtime.calls, ["live"])

    def test_failed_level_stops_evaluation(self):
        runtime = _Runtime({"live": True,
                            "active": {"outcome": "failed", "reason": "interface_closed"},
                            "ready": True})
        self.serve(runtime)
        self.assertEqual(_summary(_check(self.home, "ready")),
                         [("live", "passed", None), ("active", "failed", "interface_closed")])
        self.assertEqual(runtime.calls, ["live", "active"])

    def test_false_none_garbage_and_exceptions_never_pass(self):
        cases = {
            False: ("live", "failed", "probe_failed"),
            None: ("live", "unknown", "probe_error"),
            42: ("live", "unknown", "probe_error"),
            RuntimeError("boom"): ("live", "unknown", "probe_error"),
            "great": ("live", "unknown", "probe_error"),
        }
        for answer, expected in cases.items():
            home = tempfile.mkdtemp(dir=self.home)
            listener = ah.serve_health(_Runtime({"live": answer}), home)
            try:
                self.assertEqual(_summary(_check(home, "ready")), [expected], repr(answer))
            finally:
                listener.stop()

    def test_invalid_reason_or_source_id_is_probe_error(self):
        for answer in ({"outcome": "failed", "reason": "Not Snake"},
                       {"outcome": "passed", "source_id": "has space"}):
            home = tempfile.mkdtemp(dir=self.home)
            listener = ah.serve_health(_Runtime({"live": answer}), home)
            try:
                self.assertEqual(_summary(_check(home, "live")), [("live", "unknown", "probe_error")])
            finally:
                listener.stop()

    def test_runtime_without_check_is_unsupported(self):
        self.serve(object())
        self.assertEqual(_summary(_check(self.home, "ready")),
                         [("live", "unsupported", "unsupported_adapter")])

    def test_async_check_runs_on_the_runtime_loop(self):
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        try:
            class AsyncRuntime:
                async def check(self, level, timeout):
                    assert asyncio.get_running_loop() is loop
                    assert 0 < timeout <= 2.0
                    await asyncio.sleep(0)
                    return {"outcome": "passed", "source_id": f"py:{level}"}

            self.serve(AsyncRuntime(), loop=loop)
            observations = _check(self.home, "ready")
            self.assertEqual([o["outcome"] for o in observations], ["passed"] * 3)
            self.assertEqual(observations[1]["source_id"], "py:active")
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            loop.close()

    def test_async_check_without_loop_uses_a_private_loop(self):
        class AsyncRuntime:
            async def check(self, level):
                return level != "ready" or {"outcome": "failed", "reason": "not_ready"}

        self.serve(AsyncRuntime())
        self.assertEqual(_summary(_check(self.home, "ready"))[-1], ("ready", "failed", "not_ready"))

    def test_stalled_async_probe_times_out_within_budget(self):
        class Stalling:
            async def check(self, level):
                if level == "ready":
                    await asyncio.sleep(30)
                return True

        self.serve(Stalling())
        started = time.monotonic()
        observations = _check(self.home, "ready", budget_ms=300)
        took = time.monotonic() - started
        self.assertLess(took, 0.3 + SLACK)
        self.assertEqual(_summary(observations)[-1], ("ready", "unknown", "probe_timeout"))

    def test_stalled_sync_probe_never_answers_late(self):
        release = threading.Event()

        def stall():
            release.wait(timeout=30)
            return True

        listener = self.serve(_Runtime({"live": True, "active": True, "ready": stall}))
        key = bytes.fromhex(_endpoint(self.home)["secret"])
        with _connect(_endpoint(self.home), timeout=5) as conn:
            conn.sendall(_request(key, "ready", budget_ms=200))
            conn.settimeout(0.2 + SLACK)
            with self.assertRaises(socket.timeout):
                conn.recv(65536)  # nothing within the budget while the probe stalls
            release.set()
            conn.settimeout(5)
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer += chunk
        # Past its budget the listener does not answer at all: the late result is never
        # delivered as evidence (the core reports probe_timeout on its own deadline).
        self.assertEqual(answer, b"")

    def test_forged_stale_malformed_and_replayed_requests_are_dropped(self):
        runtime = _Runtime({"live": True})
        listener = self.serve(runtime)
        key = bytes.fromhex(_endpoint(self.home)["secret"])
        port = _endpoint(self.home)
        self.assertEqual(_raw_exchange(port, _request(secrets.token_bytes(32), "live")), b"")
        stale = int(time.time() * 1000) - 2 * ah.FRESHNESS_WINDOW_MS
        self.assertEqual(_raw_exchange(port, _request(key, "live", issued_at_ms=stale)), b"")
        for junk in (b"nope\n", b"[]\n", b"{}\n", b'{"mac":"00"}\n', b"\xff\xfe\n",
                     _request(key, "sideways"), _request(key, "live", budget_ms=0)):
            self.assertEqual(_raw_exchange(port, junk), b"", junk)
        self.assertEqual(runtime.calls, [])
        line = _request(key, "live", nonce="ab" * 32)
        self.assertTrue(_raw_exchange(port, line).endswith(b"\n"))
        self.assertEqual(_raw_exchange(port, line), b"", "replayed nonce")
        self.assertEqual(runtime.calls, ["live"])

    def test_endpoint_file_is_private_and_removed_at_stop(self):
        os.chmod(self.home, 0o700)
        listener = ah.serve_health(_Runtime({"live": True}), self.home, transport="unix")
        path = listener.endpoint_path
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        endpoint = _endpoint(self.home)
        # Default transport: a 0600 unix socket inside the 0700 FABRIC_HOME (schema v2).
        self.assertEqual(endpoint["schema_version"], "fabric.health-endpoint/v2")
        self.assertEqual(endpoint["transport"], "unix")
        self.assertNotIn("port", endpoint)
        socket_path = endpoint["socket"]
        self.assertEqual(os.path.dirname(socket_path), os.path.realpath(self.home))
        self.assertTrue(stat.S_ISSOCK(os.lstat(socket_path).st_mode))
        self.assertEqual(stat.S_IMODE(os.lstat(socket_path).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(self.home).st_mode), 0o700)
        self.assertEqual(endpoint["pid"], os.getpid())
        self.assertEqual(len(endpoint["secret"]), 64)
        self.assertEqual(sorted(os.listdir(self.home)),
                         sorted(["health.endpoint.json", os.path.basename(socket_path)]))
        self.assertEqual(_summary(_check(self.home, "live")), [("live", "passed", None)])
        listener.stop()
        listener.stop()  # idempotent
        self.assertFalse(os.path.exists(path))
        self.assertEqual(os.listdir(self.home), [])

    def test_tcp_transport_writes_a_v1_endpoint(self):
        listener = ah.serve_health(_Runtime({"live": True}), self.home, transport="tcp")
        endpoint = _endpoint(self.home)
        self.assertEqual(endpoint["schema_version"], "fabric.health-endpoint/v1")
        self.assertEqual(sorted(endpoint), ["host", "pid", "port", "schema_version", "secret"])
        self.assertEqual(endpoint["host"], "127.0.0.1")
        self.assertEqual(endpoint["port"], listener.port)
        self.assertEqual(_summary(_check(self.home, "live")), [("live", "passed", None)])
        listener.stop()
        self.assertEqual(os.listdir(self.home), [])
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", endpoint["port"]), timeout=1).close()

    def test_transport_from_environment_and_deep_home(self):
        old = os.environ.get(ah.TRANSPORT_ENV)
        os.environ[ah.TRANSPORT_ENV] = "tcp"
        try:
            listener = self.serve(_Runtime({"live": True}))
        finally:
            if old is None:
                del os.environ[ah.TRANSPORT_ENV]
            else:
                os.environ[ah.TRANSPORT_ENV] = old
        self.assertEqual(listener.transport, "tcp")
        # A home too deep for a socket address still gets a unix socket.
        deep = os.path.join(self.home, "d" * 60, "e" * 60)
        os.makedirs(deep)
        listener = ah.serve_health(_Runtime({"live": True}), deep, transport="unix")
        self.listeners.append(listener)
        self.assertEqual(_endpoint(deep)["transport"], "unix")
        self.assertGreater(len(listener.socket_path), 108)
        self.assertEqual(_summary(_check(deep, "live")), [("live", "passed", None)])

    def test_idle_attackers_cannot_deny_checks_over_tcp(self):
        self.serve(_Runtime({"live": True, "active": True, "ready": True}), transport="tcp")
        endpoint = _endpoint(self.home)
        with _Attacker(endpoint, 500) as attacker:
            results = [_check(self.home, "ready") for _ in range(40)]
            self.assertGreaterEqual(attacker.held, 100)
        passed = [r for r in results if r is not None and _summary(r)[-1] == ("ready", "passed", None)]
        self.assertEqual(len(passed), 40)

    def test_idle_connections_on_the_unix_socket_cannot_deny_checks(self):
        self.serve(_Runtime({"live": True, "active": True, "ready": True}), transport="unix")
        endpoint = _endpoint(self.home)
        idle = []
        try:
            for _ in range(500):
                try:
                    idle.append(_connect(endpoint, timeout=1))
                except OSError:
                    pass
            self.assertGreaterEqual(len(idle), 100)
            results = [_check(self.home, "ready") for _ in range(40)]
        finally:
            for conn in idle:
                conn.close()
        self.assertEqual(sum(1 for r in results if r and r[-1]["outcome"] == "passed"), 40)

    def test_concurrent_checks(self):
        self.serve(_Runtime({"live": True, "active": True, "ready": True}))
        results = []

        def worker():
            for _ in range(10):
                results.append([o["outcome"] for o in _check(self.home, "ready")])

        threads = [threading.Thread(target=worker) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        self.assertEqual(len(results), 60)
        self.assertTrue(all(r == ["passed"] * 3 for r in results))


_ADAPTER = textwrap.dedent(
    """
    import asyncio, importlib.util, sys
    spec = importlib.util.spec_from_file_location("adapter_health", sys.argv[1])
    ah = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ah)

    class Runtime:
        async def start(self, payload):
            self.loop = asyncio.get_running_loop()
            return {"started": payload["runtime_context"]["runtime_id"]}

        async def invoke(self, request, context):
            raise RuntimeError("not used")

        async def stop(self):
            pass

        async def check(self, level):
            # Runs on the lifecycle loop that owns the runtime.
            same = asyncio.get_running_loop() is self.loop
            return {"outcome": "passed" if same else "failed", "source_id": "py:" + level}

    ah.serve(Runtime)
    """
)


def _upstream_python() -> str | None:
    candidate = os.environ.get("FABRIC_TEST_PYTHON") or sys.executable
    probe = subprocess.run([candidate, "-c", "import nemo_fabric_adapters.common.lifecycle"],
                           capture_output=True)
    return candidate if probe.returncode == 0 else None


class ServeWrapperTests(unittest.TestCase):
    def test_serve_starts_listener_after_start_and_stops_it_before_stop(self):
        python = _upstream_python()
        if python is None:
            self.skipTest(
                "nemo_fabric_adapters is missing; install it: scripts/setup.sh, or set FABRIC_TEST_PYTHON "
                "(an interpreter with nemo-fabric-adapters-common 0.5.0)"
            )
        with tempfile.TemporaryDirectory() as home:
            script = os.path.join(home, "adapter.py")
            with open(script, "w") as handle:
                handle.write(_ADAPTER)
            proc = subprocess.Popen(
                [python, script, str(_MODULE_PATH)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env={**os.environ, "FABRIC_HOME": home},
            )
            try:
                endpoint = os.path.join(home, "health.endpoint.json")
                self.assertFalse(os.path.exists(endpoint))
                start = {"operation": "start", "payload": {"runtime_context": {"runtime_id": "R1"}}}
                proc.stdin.write((json.dumps(start) + "\n").encode())
                proc.stdin.flush()
                reply = json.loads(proc.stdout.readline())
                self.assertEqual(reply["outcome"]["status"], "succeeded", reply)
                self.assertEqual(stat.S_IMODE(os.stat(endpoint).st_mode), 0o600)
                self.assertEqual(_summary(_check(home, "ready")),
                                 [("live", "passed", None), ("active", "passed", None),
                                  ("ready", "passed", None)])
                proc.stdin.write(b'{"operation":"stop","payload":{"runtime_id":"R1"}}\n')
                proc.stdin.flush()
                reply = json.loads(proc.stdout.readline())
                self.assertEqual(reply["outcome"]["status"], "succeeded", reply)
                self.assertEqual(proc.wait(timeout=10), 0)
                self.assertFalse(os.path.exists(endpoint))
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                for stream in (proc.stdin, proc.stdout, proc.stderr):
                    stream.close()


if __name__ == "__main__":
    unittest.main()
