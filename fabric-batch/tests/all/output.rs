//! The output file: whole lines, resume ids, a torn tail cut off.

use fabric_batch::{BatchLine, Output};

fn line(id: &str) -> String {
    fabric_batch::encode(&BatchLine {
        id: id.into(),
        attempts: 1,
        result: None,
        results: None,
        error: Some(fabric_config::ErrorInfo::new(
            fabric_config::Stage::Invoke,
            "x",
            "y",
        )),
        attempt_log: Vec::new(),
        duration_ms: 1,
    })
    .unwrap()
}

#[test]
fn resume_reads_the_ids_and_cuts_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let (output, done) = Output::open(&path).unwrap();
    assert!(done.is_empty());
    output.write(&line("a")).unwrap();
    output.write(&line("b")).unwrap();
    drop(output);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"id\": \"c\", \"err");
    std::fs::write(&path, &text).unwrap();
    let (output, done) = Output::open(&path).unwrap();
    assert_eq!(done.len(), 2);
    assert!(done.contains("a") && done.contains("b"));
    output.write(&line("c")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3);
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}
