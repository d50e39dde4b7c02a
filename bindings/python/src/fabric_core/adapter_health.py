"""Health listener for Python adapter hosts (standard library only).

An adapter host process answers Fabric health checks on an authenticated local
listener, separate from the lifecycle pipe, so checks succeed while an
invocation is pending. By default the listener is a unix-domain socket (0600)
inside the private ``FABRIC_HOME``, so other users cannot connect at all;
``FABRIC_HEALTH_TRANSPORT=tcp`` (or a socket that cannot be bound) selects
loopback TCP. The listener writes ``health.endpoint.json`` (mode 0600,
atomically) under ``FABRIC_HOME`` with its socket path or port, pid and a random
secret; the Fabric core reads it and sends HMAC-SHA256-authenticated requests;
answers are authenticated the same way and bound to the request's nonce.
Unauthenticated, malformed, stale or replayed requests are dropped without an
answer. One selector thread accepts every connection and reads first lines
without blocking (at most ``MAX_PENDING`` wait, the oldest is closed first, each
for ``REQUEST_READ_TIMEOUT`` seconds); only authenticated requests take one of
the ``MAX_CONNECTIONS`` worker threads, so idle connections cannot starve real
checks. The wire format is documented in ``docs/health.md`` and
``fabric-health/src/wire.rs``.

Two ways to use it::

    # 1. Wrap an upstream-style runtime: the listener starts after ``start()``
    #    succeeds and stops before ``stop()``.
    from fabric_core.adapter_health import serve
    serve(MyRuntime, config_loader=AgentConfig.from_mapping)

    # 2. Start it yourself for any object with a ``check(level)`` method.
    from fabric_core.adapter_health import serve_health
    listener = serve_health(runtime)          # FABRIC_HOME from the environment
    ...
    listener.stop()

The runtime's optional ``check(level)`` method (plain or ``async``) receives
``"live"``, ``"active"`` or ``"ready"`` (and ``timeout=<seconds left>`` when it
accepts a ``timeout`` keyword). It returns ``True`` (passed), ``False``
(failed), an outcome string (``"passed"``, ``"failed"``, ``"unknown"``,
``"unsupported"``) or a mapping ``{"outcome": ..., "reason": ..., "source_id":
...}``. ``None``, anything else, or an exception is reported as
``unknown/probe_error``: only an explicit answer passes. A runtime without
``check`` answers ``unsupported/unsupported_adapter``. Levels are evaluated in
order (live, active, ready) and stop at the first one that does not pass; the
request's remaining budget bounds the whole evaluation.

This module must stay importable without the native Fabric library: adapter
hosts use it, not SDK callers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as _dt
import hashlib
import hmac
import inspect
import json
import os
import re
import secrets
import selectors
import socket
import sys
import threading
import time
from collections import deque
from typing import Any, Callable, Mapping

__all__ = [
    "ENDPOINT_FILE_NAME",
    "HealthListener",
    "LEVELS",
    "Observation",
    "runtime_probe",
    "serve",
    "serve_health",
]

ENDPOINT_FILE_NAME = "health.endpoint.json"
ENDPOINT_SCHEMA_VERSION = "fabric.health-endpoint/v1"
ENDPOINT_SCHEMA_VERSION_V2 = "fabric.health-endpoint/v2"
TRANSPORT_ENV = "FABRIC_HEALTH_TRANSPORT"
REQUEST_KIND = "fabric.health/request"
RESPONSE_KIND = "fabric.health/response"
PROTOCOL_VERSION = 1
LEVELS = ("live", "active", "ready")
OUTCOMES = ("passed", "failed", "unknown", "unsupported")
MAX_REQUEST_BYTES = 4096
FRESHNESS_WINDOW_MS = 60_000
MAX_BUDGET_MS = 86_400_000
MAX_CONNECTIONS = 32  # authenticated requests served at once
MAX_PENDING = 128  # connections waiting for their first line; the oldest is closed first
NONCE_MEMORY = 8192
REQUEST_READ_TIMEOUT = 1.0
_MAX_DIRECT_SOCKET_PATH = 100  # longer socket paths go through /proc/self/fd/<dir fd>/
_ACCEPT_RETRY = 0.005
_ACCEPT_BURST = 32  # accepts per turn before pending first lines are read again
LISTENER_SOURCE_ID = "fabric:health_listener"
DEFAULT_SOURCE_ID = "adapter:check"

_REASON = re.compile(r"[a-z][a-z0-9_]{0,63}")
_SOURCE_ID = re.compile(r"[A-Za-z0-9._:/-]{1,128}")
_NONCE = re.compile(r"[0-9a-f]{64}")

#: What a probe returns: ``(outcome, reason or None, source_id)``.
Observation = tuple


def canonical(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no whitespace, literal UTF-8."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")


def _mac(key: bytes, body: Mapping[str, Any]) -> str:
    return hmac.new(key, canonical(body), hashlib.sha256).hexdigest()


def _seal(key: bytes, body: dict[str, Any]) -> bytes:
    sealed = dict(body)
    sealed.pop("mac", None)
    sealed["mac"] = _mac(key, sealed)
    return canonical(sealed) + b"\n"


def _open(key: bytes, line: bytes) -> dict[str, Any] | None:
    """The body without ``mac`` if ``line`` is a JSON object with a valid MAC."""
    try:
        body = json.loads(line.decode("utf-8"))
        if not isinstance(body, dict):
            return None
        mac = body.pop("mac", None)
        if not isinstance(mac, str) or not _NONCE.fullmatch(mac):
            return None
        if not hmac.compare_digest(_mac(key, body), mac):
            return None
        return body
    except (ValueError, TypeError, UnicodeError, RecursionError):
        return None


def _rfc3339_now() -> str:
    now = _dt.datetime.now(_dt.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _NonceSet:
    """Authenticated nonces seen recently; a floor refuses forgotten ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._order: deque[tuple[str, int]] = deque()
        self._floor_ms = 0

    def insert(self, nonce: str, issued_at_ms: int) -> bool:
        with self._lock:
            if issued_at_ms <= self._floor_ms or nonce in self._seen:
                return False
            if len(self._order) >= NONCE_MEMORY:
                old, at = self._order.popleft()
                self._seen.discard(old)
                self._floor_ms = max(self._floor_ms, at)
            self._seen.add(nonce)
            self._order.append((nonce, issued_at_ms))
            return True


Probe = Callable[[str, float], Observation]


def _transport_from_env() -> str:
    return "tcp" if os.environ.get(TRANSPORT_ENV, "").lower() == "tcp" else "unix"


def _bind_unix(sock: socket.socket, path: str) -> None:
    """Binds ``path``; a path too long for a socket address goes through the directory's fd."""
    if len(os.fsencode(path)) <= _MAX_DIRECT_SOCKET_PATH:
        sock.bind(path)
        return
    fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        sock.bind(f"/proc/self/fd/{fd}/{os.path.basename(path)}")
    finally:
        os.close(fd)


class HealthListener:
    """A health listener calling ``probe(level, seconds_left)``.

    ``probe`` returns ``(outcome, reason_or_None, source_id)``. ``transport`` is
    ``"unix"`` (a socket in ``fabric_home``; TCP when it cannot be bound) or
    ``"tcp"``; ``None`` reads ``FABRIC_HEALTH_TRANSPORT``. Use
    :func:`serve_health` for runtimes with a ``check(level)`` method.
    """

    def __init__(
        self,
        probe: Probe,
        fabric_home: str | os.PathLike[str],
        transport: str | None = None,
    ) -> None:
        self._probe = probe
        self._home = os.fspath(fabric_home)
        self.endpoint_path = os.path.join(self._home, ENDPOINT_FILE_NAME)
        self.transport = transport or _transport_from_env()
        self._key = secrets.token_bytes(32)
        self._nonces = _NonceSet()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._stopping = threading.Event()
        self._socket: socket.socket | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None
        self._thread: threading.Thread | None = None
        self._endpoint: dict[str, Any] | None = None
        self.port = 0
        self.socket_path: str | None = None

    # -- lifecycle -------------------------------------------------------

    def start(self) -> "HealthListener":
        """Binds the socket, starts the accept thread and writes the endpoint file."""
        if self._thread is not None:
            return self
        sock = None
        if self.transport == "unix":
            sock = self._listen_unix()
        if sock is None:
            self.transport = "tcp"
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.bind(("127.0.0.1", 0))
                sock.listen(128)
                sock.setblocking(False)
            except OSError:
                sock.close()
                raise
            self.port = sock.getsockname()[1]
            self._endpoint = {
                "schema_version": ENDPOINT_SCHEMA_VERSION,
                "host": "127.0.0.1",
                "port": self.port,
                "pid": os.getpid(),
                "secret": self._key.hex(),
            }
        else:
            self._endpoint = {
                "schema_version": ENDPOINT_SCHEMA_VERSION_V2,
                "transport": "unix",
                "socket": self.socket_path,
                "pid": os.getpid(),
                "secret": self._key.hex(),
            }
        self._socket = sock
        self._wake = socket.socketpair()
        self._thread = threading.Thread(
            target=self._accept_loop, name="fabric-health", daemon=True
        )
        self._thread.start()
        try:
            self._write_endpoint()
        except OSError:
            self.stop()
            raise
        return self

    def _listen_unix(self) -> socket.socket | None:
        path = os.path.join(
            os.path.realpath(self._home), f"health-{secrets.token_hex(8)}.sock"
        )
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            _bind_unix(sock, path)
        except OSError:
            sock.close()
            return None
        try:
            os.chmod(path, 0o600)
            sock.listen(128)
            sock.setblocking(False)
        except OSError:
            sock.close()
            _unlink(path)
            return None
        self.socket_path = path
        return sock

    def stop(self) -> None:
        """Stops accepting and removes the endpoint file and socket (idempotent).

        Probes already running finish on their own threads.
        """
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopping.set()
        self._remove_endpoint()
        if self._wake is not None:
            try:
                self._wake[1].send(b"x")
            except OSError:
                pass
        thread.join(timeout=2.0)
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._wake is not None:
            for end in self._wake:
                end.close()
            self._wake = None
        if self.socket_path is not None:
            _unlink(self.socket_path)

    close = stop

    def __enter__(self) -> "HealthListener":
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # -- endpoint file ---------------------------------------------------

    def _write_endpoint(self) -> None:
        text = json.dumps(self._endpoint, separators=(",", ":")).encode("utf-8")
        tmp = os.path.join(
            self._home, f".{ENDPOINT_FILE_NAME}.{secrets.token_hex(8)}.tmp"
        )
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.endpoint_path)
        except BaseException:
            _unlink(tmp)
            raise

    def _remove_endpoint(self) -> None:
        try:
            with open(self.endpoint_path, "rb") as handle:
                found = json.loads(handle.read(4096).decode("utf-8"))
            if found == self._endpoint:
                os.unlink(self.endpoint_path)
        except (OSError, ValueError):
            pass

    # -- serving ---------------------------------------------------------

    def _accept_loop(self) -> None:
        """Accepts everything, reads first lines without blocking, sheds idle connections."""
        sock, wake = self._socket, self._wake
        assert sock is not None and wake is not None
        selector = selectors.DefaultSelector()
        selector.register(sock, selectors.EVENT_READ, "listen")
        selector.register(wake[0], selectors.EVENT_READ, "wake")
        # Insertion-ordered: the first entry is the oldest connection.
        pending: dict[socket.socket, tuple[bytearray, float]] = {}
        retry = False

        def drop(conn: socket.socket) -> None:
            pending.pop(conn, None)
            try:
                selector.unregister(conn)
            except (KeyError, ValueError):
                pass
            conn.close()

        def accept_all() -> bool:
            for _ in range(_ACCEPT_BURST):
                try:
                    conn, _ = sock.accept()
                except BlockingIOError:
                    return False
                except InterruptedError:
                    continue
                except OSError:
                    # Out of descriptors: free the oldest waiting connection, retry soon.
                    if pending:
                        drop(next(iter(pending)))
                    return True
                while len(pending) >= MAX_PENDING:
                    drop(next(iter(pending)))
                conn.setblocking(False)
                pending[conn] = (bytearray(), time.monotonic())
                selector.register(conn, selectors.EVENT_READ, "conn")
                # A real client has usually sent its line already: take it at once.
                read_first_line(conn)
            return False  # the listener stays readable: the next select accepts the rest

        def read_first_line(conn: socket.socket) -> None:
            entry = pending.get(conn)
            if entry is None:
                return
            buf, accepted = entry
            try:
                chunk = conn.recv(4096)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                chunk = b""
            if not chunk:
                drop(conn)
                return
            buf += chunk
            end = buf.find(b"\n")
            if end < 0:
                if len(buf) >= MAX_REQUEST_BYTES:
                    drop(conn)
                return
            pending.pop(conn, None)
            selector.unregister(conn)
            if end + 1 > MAX_REQUEST_BYTES:
                conn.close()
                return
            self._dispatch(conn, bytes(buf[:end]), accepted)

        try:
            while not self._stopping.is_set():
                timeout = None
                if pending:
                    oldest = next(iter(pending.values()))[1]
                    timeout = max(0.0, oldest + REQUEST_READ_TIMEOUT - time.monotonic())
                if retry:
                    timeout = _ACCEPT_RETRY if timeout is None else min(timeout, _ACCEPT_RETRY)
                try:
                    events = selector.select(timeout)
                except OSError:
                    time.sleep(_ACCEPT_RETRY)
                    continue
                if self._stopping.is_set():
                    return
                for key, _mask in events:
                    if key.data == "listen":
                        retry = accept_all()
                    elif key.data == "conn":
                        read_first_line(key.fileobj)  # type: ignore[arg-type]
                if retry:
                    retry = accept_all()
                now = time.monotonic()
                while pending:
                    conn, (_buf, accepted) = next(iter(pending.items()))
                    if now < accepted + REQUEST_READ_TIMEOUT:
                        break
                    drop(conn)
        finally:
            for conn in list(pending):
                drop(conn)
            selector.close()

    def _dispatch(self, conn: socket.socket, line: bytes, accepted: float) -> None:
        """Authenticates on the accept thread; only authenticated requests get a worker."""
        request = self._authenticate(line)
        if request is None or not self._slots.acquire(blocking=False):
            conn.close()
            return
        worker = threading.Thread(
            target=self._serve_one,
            args=(conn, request, accepted),
            name="fabric-health-conn",
            daemon=True,
        )
        try:
            worker.start()
        except RuntimeError:
            self._slots.release()
            conn.close()

    def _serve_one(
        self, conn: socket.socket, request: tuple[str, str, int], received: float
    ) -> None:
        try:
            conn.setblocking(True)
            if conn.family != socket.AF_UNIX:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            nonce, level, budget_ms = request
            deadline = received + budget_ms / 1000.0
            observations = self._evaluate(level, deadline)
            body = {
                "kind": RESPONSE_KIND,
                "v": PROTOCOL_VERSION,
                "nonce": nonce,
                "pid": os.getpid(),
                "observations": observations,
            }
            _write_all(conn, _seal(self._key, body), deadline + 0.1)
        except OSError:
            pass
        finally:
            conn.close()
            self._slots.release()

    def _authenticate(self, line: bytes) -> tuple[str, str, int] | None:
        body = _open(self._key, line)
        if body is None:
            return None
        nonce = body.get("nonce")
        level = body.get("level")
        budget_ms = body.get("budget_ms")
        issued_at_ms = body.get("issued_at_ms")
        version = body.get("v")
        if (
            body.get("kind") != REQUEST_KIND
            or not _is_int(version)
            or version != PROTOCOL_VERSION
            or not isinstance(nonce, str)
            or not _NONCE.fullmatch(nonce)
            or level not in LEVELS
            or not _is_int(budget_ms)
            or not 0 < budget_ms <= MAX_BUDGET_MS
            or not _is_int(issued_at_ms)
        ):
            return None
        if abs(int(time.time() * 1000) - issued_at_ms) > FRESHNESS_WINDOW_MS:
            return None
        if not self._nonces.insert(nonce, issued_at_ms):
            return None
        return nonce, level, budget_ms

    def _evaluate(self, level: str, deadline: float) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for each in LEVELS[: LEVELS.index(level) + 1]:
            left = deadline - time.monotonic()
            if left <= 0:
                out.append(_observation(each, "unknown", "probe_timeout", LISTENER_SOURCE_ID))
                break
            try:
                outcome, reason, source_id = self._probe(each, left)
                if (
                    outcome not in OUTCOMES
                    or (reason is not None and not (isinstance(reason, str) and _REASON.fullmatch(reason)))
                    or not (isinstance(source_id, str) and _SOURCE_ID.fullmatch(source_id))
                ):
                    raise ValueError("invalid probe observation")
            except _ProbeTimeout:
                outcome, reason, source_id = "unknown", "probe_timeout", LISTENER_SOURCE_ID
            except Exception:  # noqa: BLE001 - a probe bug must not kill the listener
                outcome, reason, source_id = "unknown", "probe_error", LISTENER_SOURCE_ID
            if time.monotonic() > deadline:
                out.append(_observation(each, "unknown", "probe_timeout", LISTENER_SOURCE_ID))
                break
            out.append(_observation(each, outcome, reason, source_id))
            if outcome != "passed":
                break
        return out


def _observation(level: str, outcome: str, reason: str | None, source_id: str) -> dict[str, Any]:
    return {
        "level": level,
        "outcome": outcome,
        "reason": reason,
        "source_id": source_id,
        "observed_at": _rfc3339_now(),
    }


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _write_all(conn: socket.socket, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        conn.settimeout(left)
        try:
            sent = conn.send(view)
        except socket.timeout:
            return
        view = view[sent:]


class _ProbeTimeout(Exception):
    pass


# -- runtime adaptation -----------------------------------------------------


def _accepts_timeout(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.name == "timeout" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
    )


def _normalize(result: Any) -> Observation:
    if result is True:
        return "passed", None, DEFAULT_SOURCE_ID
    if result is False:
        return "failed", "probe_failed", DEFAULT_SOURCE_ID
    if isinstance(result, str) and result in OUTCOMES:
        return result, None, DEFAULT_SOURCE_ID
    if isinstance(result, Mapping):
        outcome = result.get("outcome")
        if outcome not in OUTCOMES:
            raise ValueError("check() returned a mapping without a valid outcome")
        return (
            outcome,
            result.get("reason"),
            result.get("source_id", DEFAULT_SOURCE_ID),
        )
    raise ValueError("check() returned neither a bool, an outcome nor a mapping")


def runtime_probe(
    runtime: Any, loop: asyncio.AbstractEventLoop | None = None
) -> Probe:
    """A probe calling ``runtime.check(level)``.

    Coroutines run on ``loop`` (the runtime's event loop) when it is running,
    otherwise on a private loop in the listener thread; either way they are
    cancelled when the budget runs out.
    """
    check = getattr(runtime, "check", None)
    if check is None or not callable(check):
        return lambda _level, _left: ("unsupported", "unsupported_adapter", LISTENER_SOURCE_ID)
    pass_timeout = _accepts_timeout(check)

    def probe(level: str, left: float) -> Observation:
        result = check(level, timeout=left) if pass_timeout else check(level)
        if inspect.isawaitable(result):
            result = _await(result, loop, left)
        return _normalize(result)

    return probe


def _await(awaitable: Any, loop: asyncio.AbstractEventLoop | None, left: float) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(awaitable, timeout=left)

    try:
        if loop is not None and loop.is_running():
            future = asyncio.run_coroutine_threadsafe(bounded(), loop)
            try:
                return future.result(timeout=left + 0.05)
            except concurrent.futures.TimeoutError:
                future.cancel()
                raise
        return asyncio.run(bounded())
    except (asyncio.TimeoutError, concurrent.futures.TimeoutError, TimeoutError) as error:
        raise _ProbeTimeout() from error


def serve_health(
    runtime: Any,
    fabric_home: str | os.PathLike[str] | None = None,
    *,
    loop: asyncio.AbstractEventLoop | None = None,
    transport: str | None = None,
) -> HealthListener:
    """Starts a health listener for ``runtime`` and returns it (call ``stop()``).

    ``fabric_home`` defaults to ``os.environ["FABRIC_HOME"]``. ``loop`` is the
    event loop async ``check`` coroutines run on; inside a coroutine it defaults
    to the running loop. ``transport`` (``"unix"``/``"tcp"``) defaults to
    ``FABRIC_HEALTH_TRANSPORT``, else ``"unix"``.
    """
    if fabric_home is None:
        fabric_home = os.environ["FABRIC_HOME"]
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
    return HealthListener(runtime_probe(runtime, loop), fabric_home, transport).start()


class _HealthRuntime:
    """Wraps an upstream-style runtime: the listener runs from start to stop."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._listener: HealthListener | None = None

    async def start(self, payload: dict[str, Any]) -> Any:
        output = await self._inner.start(payload)
        home = os.environ.get("FABRIC_HOME")
        if home:
            try:
                self._listener = serve_health(self._inner, home, loop=asyncio.get_running_loop())
            except OSError as error:
                # Health is optional: the core reports runtime_unavailable.
                print(f"fabric health listener not started: {error.strerror}", file=sys.stderr)
        return output

    async def invoke(self, request: Any, context: Any) -> Any:
        return await self._inner.invoke(request, context)

    async def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()
        await self._inner.stop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def serve(runtime_factory: Callable[[], Any], **kwargs: Any) -> None:
    """Upstream ``nemo_fabric_adapters.common.lifecycle.serve`` plus a health listener.

    Keyword arguments (``config_loader``, streams) are passed through. The
    listener starts after the runtime's ``start()`` succeeds (when
    ``FABRIC_HOME`` is set) and stops before its ``stop()``. The start output also
    carries the host's software evidence (``fabric_core.adapter_evidence``) when the
    core asks for it; ``evidence_targets`` adds import names to its selection.
    """
    from nemo_fabric_adapters.common.lifecycle import serve as upstream_serve

    from fabric_core.adapter_evidence import EvidenceRuntime

    targets = kwargs.pop("evidence_targets", ())
    upstream_serve(lambda: _HealthRuntime(EvidenceRuntime(runtime_factory(), targets)), **kwargs)
