//! Fuzzing hooks (not API; `fabric-fuzz` calls them): the collector's HTTP as one
//! connection sends it, through the reactor's driver in memory and the collector's service.

use std::time::Duration;

use fabric_reactor::http::fuzz::connection;

use crate::collector::fuzz_service;

/// The bearer token the fuzzed collector accepts (seeds send `Authorization: Bearer fuzz`).
pub const TOKEN: &str = "fuzz";

/// Splits `data` into pieces as the network might deliver them: byte 0 picks the piece
/// size (1 to 256 bytes), the rest is the connection's input.
pub fn pieces(data: &[u8]) -> Vec<Vec<u8>> {
    let Some((&first, rest)) = data.split_first() else {
        return Vec::new();
    };
    let size = usize::from(first) + 1;
    rest.chunks(size).map(<[u8]>::to_vec).collect()
}

/// One connection's bytes to a collector holding registrations `r` and `s` (its cap is 3,
/// its memory budget the smallest allowed): every answer is HTTP/1.1, and once the
/// connection is gone it holds no bytes of the memory budget.
pub fn collector_http(data: &[u8]) {
    answers(data);
}

/// What the collector wrote back to the connection of [`collector_http`].
fn answers(data: &[u8]) -> Vec<u8> {
    let (mut service, hub, limits) = fuzz_service(TOKEN, Duration::from_millis(1));
    let out = connection(&mut service, &limits, pieces(data));
    assert!(
        out.is_empty() || out.starts_with(b"HTTP/1.1 "),
        "an answer that is not HTTP/1.1"
    );
    let routes = hub.lock();
    assert_eq!(
        routes.held(),
        0,
        "a closed connection still holds budget bytes"
    );
    let stats = routes.snapshot();
    assert!(stats.registrations <= 3, "the registration cap was passed");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_reaches_the_collector_through_the_driver() {
        let register = |id: &str| {
            format!(
                "POST /v1/register HTTP/1.1\r\nAuthorization: Bearer fuzz\r\n\
                 Connection: keep-alive\r\nContent-Length: 18\r\n\r\n{{\"request_id\":\"{id}\"}}"
            )
        };
        // Split in 5-byte pieces: two registrations, the second over the cap of 3.
        let mut data = vec![4u8];
        data.extend_from_slice(register("t").as_bytes());
        data.extend_from_slice(register("u").as_bytes());
        data.extend_from_slice(b"HEAD /v1/stats HTTP/1.1\r\nAuthorization: Bearer fuzz\r\n\r\n");
        let text = String::from_utf8(answers(&data)).unwrap();
        let statuses: Vec<&str> = text
            .split("HTTP/1.1 ")
            .skip(1)
            .map(|answer| &answer[..3])
            .collect();
        assert_eq!(statuses, ["201", "503", "200"], "{text}");
        assert!(text.ends_with("\r\n\r\n"), "HEAD answered a body: {text}");
    }
}
