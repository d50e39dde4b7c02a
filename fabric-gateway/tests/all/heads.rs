//! Heads of every size the gateway accepts pass through it: the endpoint client's lean
//! buffers are no limit on a harness's request head.

use std::time::Duration;

use fabric_gateway::{Capture, CaptureOptions, Upstream};

use crate::stub::{self, Stub};

#[test]
fn a_request_header_line_of_tens_of_kib_is_forwarded() {
    let stub = Stub::start(vec![stub::json_answer(r#"{"id":"c"}"#)], Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let capture = Capture::register(
        "runtime-heads",
        vec![Upstream::new("default", "m", &stub.base_url())],
        dir.path(),
        CaptureOptions::default(),
    )
    .expect("register");
    let url = format!(
        "{}/chat/completions",
        capture.base_url("default").expect("url")
    );
    for size in [100, 20 * 1024, 60 * 1024] {
        let long = "a".repeat(size);
        let (status, _, body) =
            stub::answer(stub::post(&url, "{}", &format!("x-long: {long}\r\n")));
        assert_eq!(
            (status, body.as_slice()),
            (200, br#"{"id":"c"}"#.as_slice()),
            "{size}"
        );
        let received = stub.received();
        let head = &received.last().expect("received").head;
        assert!(
            head.contains(&format!("x-long: {long}\r\n")),
            "{size}: the header passes whole"
        );
    }
}
