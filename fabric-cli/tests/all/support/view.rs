//! `fabric view` in a test: the server process (stopped by pid when dropped) and a small
//! HTTP/1.1 client over a raw loopback socket.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// A running `fabric view`.
pub struct ViewServer {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    pub token: String,
}

/// An answer: status, lower-cased head, body.
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == name).then(|| value.trim())
        })
    }
}

impl ViewServer {
    /// Starts `fabric view PATHS` on 127.0.0.1:0 and reads its URL from the first stdout
    /// line.
    pub fn start(paths: &[&Path]) -> ViewServer {
        super::ensure_scripted_adapter();
        let mut child = Command::new(env!("CARGO_BIN_EXE_fabric"))
            .arg("view")
            .args(paths)
            .args(["--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fabric view");
        let stdout = child.stdout.take().expect("stdout");
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = send.send(line);
        });
        let line = match receive.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("fabric view printed no URL within 60 s");
            }
        };
        let url = line.trim();
        let rest = url
            .strip_prefix("http://")
            .unwrap_or_else(|| panic!("not a URL: {url:?}"));
        let (addr, token) = rest.split_once("/?token=").expect("URL with a token");
        assert!(addr.starts_with("127.0.0.1:"), "{url}");
        assert_eq!(token.len(), 64, "32 random bytes, hex");
        ViewServer {
            child,
            addr: addr.to_owned(),
            token: token.to_owned(),
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `GET target` with the bearer token.
    pub fn get(&self, target: &str) -> Answer {
        self.raw(target, Some(&self.token))
    }

    /// `GET target` with the JSON answer (status 200 asserted).
    pub fn json(&self, target: &str) -> Value {
        let answer = self.get(target);
        assert_eq!(
            answer.status,
            200,
            "{target}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        answer.json()
    }

    /// `GET target` sent as it is (no normalization), with `token` as a bearer if any.
    pub fn raw(&self, target: &str, token: Option<&str>) -> Answer {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: {}\r\n{auth}Connection: close\r\n\r\n",
            self.addr
        )
        .expect("send");
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).expect("read the answer");
        let end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete head");
        let head = String::from_utf8_lossy(&bytes[..end]).to_lowercase();
        let status = head[9..12].parse().expect("status");
        Answer {
            status,
            head,
            body: bytes[end + 4..].to_vec(),
        }
    }
}

impl Drop for ViewServer {
    fn drop(&mut self) {
        // By pid: SIGTERM stops it cleanly; kill() is the fallback.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
