//! Items: ids, multi-turn items, and errors naming the line.

use fabric_batch::{ItemReader, read_all};
use fabric_config::codes;

#[test]
fn ids_come_from_id_then_request_id_then_the_line() {
    let text = "{\"id\": 7, \"input\": \"a\"}\n\n{\"request_id\": \"r\", \"input\": \"b\"}\n\"c\"\n{\"id\": \"m\", \"requests\": [\"x\", {\"input\": \"y\"}]}\n";
    let items = read_all(text.as_bytes(), "items.jsonl").unwrap();
    let ids: Vec<&str> = items.iter().map(|item| item.id.as_str()).collect();
    assert_eq!(ids, ["7", "r", "4", "m"]);
    assert_eq!(items[3].requests.len(), 2);
    assert_eq!(items[1].line, 3);
}

#[test]
fn a_malformed_line_is_named() {
    let error = read_all("\"a\"\n{\"input\": \n".as_bytes(), "items.jsonl").unwrap_err();
    assert_eq!(error.code, codes::BATCH_ITEM_INVALID);
    assert!(
        error.message.contains("items `items.jsonl` line 2"),
        "{}",
        error.message
    );
    assert_eq!(error.metadata["line"], 2);
    let error = read_all(
        "{\"id\": \"m\", \"requests\": [], \"x\": 1}\n".as_bytes(),
        "f",
    )
    .unwrap_err();
    assert!(
        error.message.contains("not `x`") || error.message.contains("at least one"),
        "{}",
        error.message
    );
}

#[test]
fn a_duplicate_id_names_both_lines_and_stops_a_stream_there() {
    let text = "{\"id\": \"a\"}\n\"b\"\n{\"request_id\": \"a\"}\n\"never read\"\n";
    let mut reader = ItemReader::new(text.as_bytes(), "-");
    assert!(reader.next().unwrap().is_ok());
    assert!(reader.next().unwrap().is_ok());
    let error = reader.next().unwrap().unwrap_err();
    assert_eq!(error.code, codes::BATCH_ITEM_DUPLICATE);
    assert!(error.message.contains("line 3") && error.message.contains("line 1"));
    assert!(reader.next().is_none());
}
