"""A deliberately misbehaving lifecycle host for fabric-host's fault tests.

FAKE_MODE selects the misbehaviour; without one it is a well-behaved echo host.
Test-only; not an adapter.
"""

import json
import os
import signal
import subprocess
import sys
import time

MODE = os.environ.get("FAKE_MODE", "ok")
out = sys.stdout.buffer


def send(obj):
    out.write(json.dumps(obj, sort_keys=True).encode() + b"\n")
    out.flush()


def ok(operation, output=None):
    send({"operation": operation, "outcome": {"status": "succeeded", "output": output}})


def forever():
    while True:
        time.sleep(3600)


if MODE == "ignore_stop":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

sys.stderr.write("fake host %s starting secret=%s\n" % (MODE, os.environ.get("FAKE_SECRET", "")))
sys.stderr.flush()

for raw in sys.stdin.buffer:
    message = json.loads(raw)
    operation = message["operation"]
    payload = message["payload"]
    if operation == "start":
        if MODE == "grandchildren":
            inside = subprocess.Popen(["sleep", "1000"])
            escaped = subprocess.Popen(["setsid", "sleep", "1000"])
            with open(os.environ["FAKE_PIDS"], "w") as handle:
                handle.write("%d %d\n" % (inside.pid, escaped.pid))
        if MODE == "close_stdin":
            # Close first, then answer: the core's next write must find the pipe closed
            # (answering first raced with the core's invoke write under load).
            os.close(0)
            ok("start")
            forever()
        if MODE == "fail_start":
            send({"operation": "start", "outcome": {"status": "failed", "error": {
                "stage": "start", "code": "lifecycle_invalid_config",
                "message": "Adapter config does not match its typed contract", "retryable": False}}})
            sys.exit(1)
        ok("start")
        continue
    if operation == "stop":
        if MODE == "ignore_stop":
            continue
        if os.environ.get("FAKE_STOP_MARKER"):
            with open(os.environ["FAKE_STOP_MARKER"], "w") as handle:
                handle.write(json.dumps(payload))
        ok("stop")
        sys.exit(0)
    # invoke
    if os.environ.get("FAKE_INVOKE_MARKER"):
        # Proof that the request line arrived (written before the answer).
        with open(os.environ["FAKE_INVOKE_MARKER"], "a") as handle:
            handle.write("invoke\n")
    if MODE == "crash_invoke":
        sys.stderr.write("boom: about to crash, token=%s\n" % os.environ.get("FAKE_SECRET", ""))
        sys.stderr.flush()
        os._exit(3)
    if MODE == "eof_invoke":
        os.close(1)
        forever()
    if MODE == "non_json":
        out.write(b"this is not json\n")
        out.flush()
        continue
    if MODE == "oversized":
        size = int(os.environ.get("FAKE_SIZE", str(20 * 1024 * 1024)))
        chunk = b"x" * (1024 * 1024)
        try:
            while size > 0:
                out.write(chunk[: min(size, len(chunk))])
                size -= len(chunk)
            out.write(b"\n")
            out.flush()
        except BrokenPipeError:
            pass
        forever()
    if MODE == "invalid_utf8":
        out.write(b'{"operation": "invoke", "outcome": "\xff\xfe"}\n')
        out.flush()
        continue
    if MODE == "wrong_operation":
        ok("start")
        continue
    if MODE in ("silent", "ignore_stop_silent"):
        forever()
    if MODE == "artifact":
        ok("invoke", {"status": "succeeded", "output": None, "artifacts": [
            {"name": "a", "kind": "file", "path": os.environ["FAKE_ARTIFACT_PATH"]}]})
        continue
    if MODE == "slow":
        sys.stderr.write("slow invoke started\n")
        sys.stderr.flush()
        time.sleep(float(payload.get("request", {}).get("sleep", 0)))
    ok("invoke", {"status": "succeeded", "output": {"echo": payload.get("request", {}).get("input")}})

if MODE == "ignore_stop":
    forever()
