//! Hostile input on the wire parsers every face's bytes land in: ABP frames
//! and MyGo request lines, at random and at their limits, never panic.

use proptest::prelude::*;
use wayrig_proto::abp::{Frame, MAX_FRAME, MAX_HEADERS};
use wayrig_proto::mygo::Request;

/// Bytes shaped like the wire: mostly its own characters, some anything.
fn wire_text() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("---\n".to_string()),
        Just("---\r\n".to_string()),
        Just("\n".to_string()),
        Just(": ".to_string()),
        Just("id: 1\n".to_string()),
        Just("type: request\n".to_string()),
        Just("command: x.ui.tree\n".to_string()),
        "[a-z]{0,8}".prop_map(String::from),
        any::<String>(),
    ];
    prop::collection::vec(pieces, 0..40).prop_map(|p| p.concat())
}

/// JSON-ish request lines: braces, keys, deep nesting, odd numbers.
fn request_line() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\"id\":".to_string()),
        Just("\"method\":".to_string()),
        Just("\"params\":".to_string()),
        Just("\"act\"".to_string()),
        Just("\"input\"".to_string()),
        Just("18446744073709551616".to_string()),
        Just("-1e400".to_string()),
        Just("NaN".to_string()),
        Just(",".to_string()),
        Just("null".to_string()),
        any::<String>().prop_map(|s| format!("{s:?}")),
    ];
    (
        prop::collection::vec(pieces, 0..60),
        prop::collection::vec(any::<u8>(), 0..8),
    )
        .prop_map(|(p, junk)| [p.concat().into_bytes(), junk].concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn abp_readers_answer_every_text_and_a_read_frame_reads_back(text in wire_text()) {
        let strict = Frame::parse_strict(&text);
        let _ = Frame::parse_lenient(&text);
        let salvaged = Frame::salvage(&text);
        // What salvage finds names whom to answer, nothing else.
        for key in salvaged.headers.keys() {
            prop_assert!(["id", "command", "from", "to"].contains(&key.as_str()));
        }
        if let Ok(frame) = strict {
            let again = Frame::parse_strict(&frame.serialize());
            prop_assert_eq!(again, Ok(frame));
        }
    }

    #[test]
    fn mygo_request_lines_parse_or_refuse_without_panicking(line in request_line()) {
        let (_id, call) = Request::parse(&line);
        if let Ok(call) = call {
            // A call that parsed writes a line that parses to it again.
            let request = Request { id: serde_json::json!(1), call };
            let again = Request::parse(request.to_line().trim_end().as_bytes());
            prop_assert!(again.1.is_ok(), "{:?}", request.to_line());
        }
    }
}

#[test]
fn frames_at_and_past_their_limits_are_answered() {
    let mut headers = String::from("---\n");
    for i in 0..=MAX_HEADERS {
        headers.push_str(&format!("h{i:03}: v\n"));
    }
    headers.push_str("---\n");
    assert_eq!(
        Frame::parse_lenient(&headers),
        Err(wayrig_proto::abp::ParseError::TooManyHeaders)
    );
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(
        Request::parse(deep.as_bytes()).1.is_err(),
        "deep JSON is refused"
    );
    let huge = format!("---\nid: 1\n---\n{}", "x".repeat(MAX_FRAME + 1));
    assert!(Frame::parse_strict(&huge).is_err());
    assert_eq!(Frame::salvage(&huge).id(), Some("1"));
}
