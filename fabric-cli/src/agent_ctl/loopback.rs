//! The container's side of `network: {"mode": "loopback", ...}` and a probe of it.
//!
//! `serve` starts, for each port in `FABRIC_LOOPBACK_PORTS`, a relay from `127.0.0.1:PORT`
//! to the unix socket `loopback/PORT.sock` beside its runtime server's socket, whose other
//! half the container provider runs on the host (`fabric_sandbox::kit::relay`).
//! `connect HOST:PORT` (not in the usage: a probe the image has no other tool for) opens a
//! TCP connection, sends its stdin, half-closes, and prints what comes back; it exits 0
//! when the connection was made, else 1 with the error on stderr.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use fabric_sandbox::kit::relay::{self, LOOPBACK_DIR, LOOPBACK_PORTS_VAR, Relay};

/// How long `connect` waits for the connection and then for each read.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The container's relay halves of the allow-listed ports, next to `socket`.
pub fn relays(socket: &Path) -> Result<Vec<Relay>, String> {
    let Ok(ports) = std::env::var(LOOPBACK_PORTS_VAR) else {
        return Ok(Vec::new());
    };
    let dir = socket
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(LOOPBACK_DIR);
    ports
        .split(',')
        .map(|port| {
            let port: u16 = port
                .parse()
                .map_err(|_| format!("`{LOOPBACK_PORTS_VAR}` has the invalid port `{port}`"))?;
            Relay::tcp_to_unix(port, &relay::socket_path(&dir, port))
                .map_err(|error| format!("cannot listen on 127.0.0.1:{port}: {error}"))
        })
        .collect()
}

/// `connect HOST:PORT`.
pub fn connect(rest: &[String]) -> ExitCode {
    let [address] = rest else {
        eprintln!("fabric-agent-ctl connect: invalid_request: expected HOST:PORT");
        return ExitCode::FAILURE;
    };
    match probe(address) {
        Ok(answer) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(&answer);
            let _ = stdout.flush();
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("fabric-agent-ctl connect: {address}: {error}");
            ExitCode::FAILURE
        }
    }
}

fn probe(address: &str) -> std::io::Result<Vec<u8>> {
    let target = address
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address"))?;
    let mut stream = TcpStream::connect_timeout(&target, PROBE_TIMEOUT)?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT))?;
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;
    stream.write_all(&input)?;
    stream.shutdown(Shutdown::Write)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    Ok(answer)
}
