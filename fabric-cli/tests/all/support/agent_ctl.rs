//! Helpers of the `fabric-agent-ctl` tests: a server in a temp dir (stopped by pid), the
//! bridge commands, raw socket requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

pub const AGENT_CTL: &str = env!("CARGO_BIN_EXE_fabric-agent-ctl");

/// A running server (ours or upstream's) whose socket is `dir/fabric.sock`.
pub struct Serve {
    pub child: Child,
    pub dir: PathBuf,
    pub stderr: BufReader<ChildStderr>,
}

impl Serve {
    /// Starts our server in `dir` and waits until it listens.
    pub fn ours(dir: &Path) -> Serve {
        super::ensure_scripted_adapter();
        Serve::spawn(Command::new(AGENT_CTL).arg("serve"), dir, "listening on")
    }

    /// Starts a server command in `dir`; `ready` is a stderr line fragment printed once it
    /// listens (empty: wait until the socket accepts connections).
    pub fn spawn(command: &mut Command, dir: &Path, ready: &str) -> Serve {
        let mut child = command
            .env("FABRIC_HOST_SOCKET", dir.join("fabric.sock"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn server");
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut serve = Serve {
            child,
            dir: dir.to_path_buf(),
            stderr,
        };
        if ready.is_empty() {
            serve.wait_for_socket();
        } else {
            let mut line = String::new();
            serve.stderr.read_line(&mut line).expect("server stderr");
            if !line.contains(ready) {
                let _ = serve.child.kill();
                let mut rest = String::new();
                let _ = serve.stderr.read_to_string(&mut rest);
                panic!("server did not start: {line}{rest}");
            }
        }
        serve
    }

    /// Waits (20 s deadline) until the socket accepts connections.
    pub fn wait_for_socket(&mut self) {
        let socket = self.dir.join("fabric.sock");
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while UnixStream::connect(&socket).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("server exited early: {status}");
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no socket at {}",
                socket.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM by pid; the exit code and the rest of stderr.
    pub fn terminate(mut self) -> (Option<i32>, String) {
        signal(self.child.id(), "-TERM");
        let status = self.child.wait().expect("wait server");
        let mut rest = String::new();
        let _ = self.stderr.read_to_string(&mut rest);
        (status.code(), rest)
    }

    /// SIGKILL by pid.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Runs a bridge command against this server.
    pub fn ctl(&self, args: &[&str]) -> Output {
        ctl_at(AGENT_CTL, &self.dir, args, None)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Sends `signal` (`-TERM`, `-KILL`) to `pid`.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill {signal} {pid}");
}

/// Runs `program` (a `fabric-agent-ctl`) with the socket in `dir`, optionally feeding stdin.
pub fn ctl_at(program: &str, dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("FABRIC_HOST_SOCKET", dir.join("fabric.sock"))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fabric-agent-ctl");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        // a command refused before it reads its request may exit first: its answer is what
        // the caller checks, so a closed pipe is not a failure here
        if let Err(error) = pipe.write_all(bytes) {
            assert_eq!(
                error.kind(),
                std::io::ErrorKind::BrokenPipe,
                "write stdin: {error}"
            );
        }
    }
    child.wait_with_output().expect("wait fabric-agent-ctl")
}

/// The single JSON response line of a bridge command.
pub fn response(output: &Output) -> Value {
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        text.matches('\n').count(),
        1,
        "exactly one response line expected: {text}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&text).expect("response JSON")
}

/// The error code of a response (None when succeeded).
pub fn code(response: &Value) -> Option<&str> {
    response["error"]["code"].as_str()
}

/// Sends raw bytes on a fresh connection, ends the sending side and reads the response line.
pub fn raw(socket: &Path, bytes: &[u8]) -> Value {
    raw_with(socket, bytes, true)
}

/// Sends raw bytes and reads the response line; `finish` ends the sending side.
pub fn raw_with(socket: &Path, bytes: &[u8], finish: bool) -> Value {
    let mut stream = UnixStream::connect(socket).expect("connect");
    // The server may answer before reading everything (an oversized request).
    let _ = stream.write_all(bytes);
    if finish {
        let _ = stream.shutdown(std::net::Shutdown::Write);
    }
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .expect("response");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
}
