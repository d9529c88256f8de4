//! ABP, the MixOS Bus frame: a `---` block of `key: value` headers in
//! alphabetical order, a closing `---`, then the body; `---\n---\n` is a heartbeat.
//!
//! Parsing is strict (sorted headers, a known `type`) or lenient (any order,
//! CRLF lines); both bound the header count and the frame size.

use std::collections::BTreeMap;
use std::fmt;

/// The line that opens and closes a header block.
pub const DELIMITER: &str = "---\n";
/// Headers one frame may carry at most.
pub const MAX_HEADERS: usize = 64;
/// Bytes one frame may take at most (MixOS's MAX_MESSAGE_BYTES).
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// What a frame is for, its `type` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Response,
    Event,
    Stream,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Response => "response",
            Kind::Event => "event",
            Kind::Stream => "stream",
        }
    }

    pub fn from_word(word: &str) -> Option<Kind> {
        [Kind::Request, Kind::Response, Kind::Event, Kind::Stream]
            .into_iter()
            .find(|k| k.word() == word)
    }
}

/// A return code band (ARexx's): 10 and above is an application error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rc {
    Ok,
    Warning,
    Error,
    Failure,
}

impl Rc {
    pub fn code(self) -> u8 {
        match self {
            Rc::Ok => 0,
            Rc::Warning => 5,
            Rc::Error => 10,
            Rc::Failure => 20,
        }
    }

    pub fn from_code(code: u8) -> Option<Rc> {
        [Rc::Ok, Rc::Warning, Rc::Error, Rc::Failure]
            .into_iter()
            .find(|rc| rc.code() == code)
    }
}

/// The body of an rc 10 answer: why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Refusal {
    pub error_code: String,
    pub message: String,
}

impl Refusal {
    pub fn new(error_code: impl Into<String>, message: impl Into<String>) -> Self {
        Refusal {
            error_code: error_code.into(),
            message: message.into(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::json!({"error_code": self.error_code, "message": self.message}).to_string()
    }
}

/// One frame: headers (kept sorted) and a body. No headers and no body is a heartbeat.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frame {
    pub headers: BTreeMap<String, String>,
    pub body: String,
}

/// Why a frame could not be read; the message says what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    TooLarge(usize),
    NoOpening,
    NoClosing,
    TooManyHeaders,
    BadHeader(String),
    Unsorted(String),
    Duplicate(String),
    BadType(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::TooLarge(n) => write!(f, "frame of {n} bytes exceeds {MAX_FRAME} bytes"),
            ParseError::NoOpening => write!(f, "a frame starts with a \"---\" line"),
            ParseError::NoClosing => write!(f, "the header block has no closing \"---\" line"),
            ParseError::TooManyHeaders => write!(f, "more than {MAX_HEADERS} headers"),
            ParseError::BadHeader(line) => {
                write!(f, "header line {line:?} is not \"key: value\"")
            }
            ParseError::Unsorted(key) => write!(
                f,
                "header {key:?} is out of alphabetical order; write headers sorted by key"
            ),
            ParseError::Duplicate(key) => write!(f, "header {key:?} is given twice"),
            ParseError::BadType(t) => {
                write!(f, "type {t:?} is none of request, response, event, stream")
            }
        }
    }
}

impl std::error::Error for ParseError {}

impl Frame {
    pub fn heartbeat() -> Frame {
        Frame::default()
    }

    pub fn is_heartbeat(&self) -> bool {
        self.headers.is_empty() && self.body.is_empty()
    }

    /// This frame with a header set; line breaks in the value become spaces.
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Frame {
        let value: String = value.into().replace(['\n', '\r'], " ");
        self.headers.insert(key.to_string(), value);
        self
    }

    pub fn with_body(mut self, body: impl Into<String>) -> Frame {
        self.body = body.into();
        self
    }

    /// A request frame.
    pub fn request(command: &str, from: &str, to: &str, id: &str) -> Frame {
        Frame::default()
            .with("command", command)
            .with("from", from)
            .with("id", id)
            .with("to", to)
            .with("type", Kind::Request.word())
    }

    /// The answer to `request`: its command and id repeated, from whom it
    /// was sent to, back to whoever sent it.
    pub fn response_to(request: &Frame, rc: Rc, body: impl Into<String>) -> Frame {
        let mut frame = Frame::default()
            .with("rc", rc.code().to_string())
            .with("type", Kind::Response.word())
            .with_body(body);
        for (key, from) in [
            ("command", "command"),
            ("id", "id"),
            ("from", "to"),
            ("to", "from"),
        ] {
            if let Some(v) = request.header(from) {
                frame = frame.with(key, v);
            }
        }
        frame
    }

    /// A refusal of `request` (rc 10).
    pub fn refusal_to(request: &Frame, refusal: &Refusal) -> Frame {
        Frame::response_to(request, Rc::Error, refusal.to_json())
    }

    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers.get(key).map(String::as_str)
    }

    pub fn kind(&self) -> Option<Kind> {
        self.header("type").and_then(Kind::from_word)
    }

    pub fn command(&self) -> Option<&str> {
        self.header("command")
    }

    pub fn id(&self) -> Option<&str> {
        self.header("id")
    }

    pub fn to(&self) -> Option<&str> {
        self.header("to")
    }

    pub fn from(&self) -> Option<&str> {
        self.header("from")
    }

    pub fn rc(&self) -> Option<Rc> {
        self.header("rc")
            .and_then(|v| v.parse().ok())
            .and_then(Rc::from_code)
    }

    /// The frame as text, headers in alphabetical order.
    pub fn serialize(&self) -> String {
        let mut out = String::with_capacity(64 + self.body.len());
        out.push_str(DELIMITER);
        for (k, v) in &self.headers {
            out.push_str(k);
            out.push_str(": ");
            out.push_str(v);
            out.push('\n');
        }
        out.push_str(DELIMITER);
        out.push_str(&self.body);
        out
    }

    /// Parse as MixOS's strict reader does: headers sorted, `type` known.
    pub fn parse_strict(text: &str) -> Result<Frame, ParseError> {
        parse(text, true)
    }

    /// Parse as MixOS's lenient reader does: headers in any order, CRLF lines.
    pub fn parse_lenient(text: &str) -> Result<Frame, ParseError> {
        parse(text, false)
    }

    /// What can be read of the headers that say whom to answer (`id`,
    /// `command`, `from`, `to`) in a frame that cannot be parsed, so that its
    /// refusal reaches the request it answers: the first readable value of
    /// each, from the header block's start, bad lines skipped.
    pub fn salvage(text: &str) -> Frame {
        const ADDRESSING: [&str; 4] = ["id", "command", "from", "to"];
        let mut frame = Frame::default();
        let mut lines = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
        if lines.next() != Some("---") {
            return frame;
        }
        // A header block is at most 64 lines; a few more are read, not a body.
        for line in lines.take(2 * MAX_HEADERS) {
            if line == "---" {
                break;
            }
            if let Some((key, value)) = line.split_once(": ") {
                if ADDRESSING.contains(&key) && !frame.headers.contains_key(key) {
                    frame.headers.insert(key.to_string(), value.to_string());
                }
            }
        }
        frame
    }
}

fn parse(text: &str, strict: bool) -> Result<Frame, ParseError> {
    if text.len() > MAX_FRAME {
        return Err(ParseError::TooLarge(text.len()));
    }
    // Both readers take CRLF line ends, as MixOS's lenient one does; only
    // the header order and `type` are strict.
    let is_delimiter = |line: &str| line == "---" || line == "---\r";
    let mut rest = text;
    let first = next_line(&mut rest).ok_or(ParseError::NoOpening)?;
    if !is_delimiter(first) {
        return Err(ParseError::NoOpening);
    }
    let mut headers = BTreeMap::new();
    let mut last: Option<String> = None;
    loop {
        let line = next_line(&mut rest).ok_or(ParseError::NoClosing)?;
        if is_delimiter(line) {
            break;
        }
        if headers.len() == MAX_HEADERS {
            return Err(ParseError::TooManyHeaders);
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let (key, value) = line
            .split_once(": ")
            .or_else(|| line.strip_suffix(':').map(|k| (k, "")))
            .filter(|(k, _)| !k.is_empty() && !k.contains(char::is_whitespace))
            .ok_or_else(|| ParseError::BadHeader(shorten(line)))?;
        if strict && last.as_deref().is_some_and(|l| l > key) {
            return Err(ParseError::Unsorted(key.to_string()));
        }
        if headers.insert(key.to_string(), value.to_string()).is_some() {
            return Err(ParseError::Duplicate(key.to_string()));
        }
        last = Some(key.to_string());
    }
    if strict {
        if let Some(t) = headers.get("type") {
            if Kind::from_word(t).is_none() {
                return Err(ParseError::BadType(shorten(t)));
            }
        }
    }
    Ok(Frame {
        headers,
        body: rest.to_string(),
    })
}

/// The next line without its newline; `None` when no complete line is left.
fn next_line<'a>(rest: &mut &'a str) -> Option<&'a str> {
    let end = rest.find('\n')?;
    let line = &rest[..end];
    *rest = &rest[end + 1..];
    Some(line)
}

/// At most 80 characters of a bad line, for a message.
fn shorten(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PING: &str =
        "---\ncommand: noded.ping\nfrom: probe\nid: 1\nto: noded\ntype: request\n---\n{\"detail\":true}";

    #[test]
    fn the_wire_notes_example_round_trips() {
        let frame = Frame::parse_strict(PING).unwrap();
        assert_eq!(frame.command(), Some("noded.ping"));
        assert_eq!(frame.kind(), Some(Kind::Request));
        assert_eq!(frame.body, "{\"detail\":true}");
        assert_eq!(frame.serialize(), PING);
    }

    #[test]
    fn a_built_frame_serializes_with_sorted_headers() {
        let frame = Frame::request("calc.ui.tree", "probe", "calc", "7").with_body("{}");
        let text = frame.serialize();
        assert_eq!(
            text,
            "---\ncommand: calc.ui.tree\nfrom: probe\nid: 7\nto: calc\ntype: request\n---\n{}"
        );
        assert_eq!(Frame::parse_strict(&text).unwrap(), frame);
    }

    #[test]
    fn a_response_repeats_command_and_id_and_carries_rc() {
        let request = Frame::parse_strict(PING).unwrap();
        let answer = Frame::refusal_to(&request, &Refusal::new("ARGUMENT", "no"));
        assert_eq!(answer.command(), Some("noded.ping"));
        assert_eq!(answer.id(), Some("1"));
        assert_eq!(answer.to(), Some("probe"));
        assert_eq!(answer.rc(), Some(Rc::Error));
        assert_eq!(answer.kind(), Some(Kind::Response));
        let body: Refusal = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body, Refusal::new("ARGUMENT", "no"));
    }

    #[test]
    fn the_empty_frame_is_a_heartbeat() {
        let frame = Frame::parse_strict("---\n---\n").unwrap();
        assert!(frame.is_heartbeat());
        assert_eq!(Frame::heartbeat().serialize(), "---\n---\n");
    }

    #[test]
    fn unsorted_headers_are_refused_strictly_and_read_leniently() {
        let text = "---\nto: noded\ncommand: noded.ping\ntype: request\n---\n";
        assert_eq!(
            Frame::parse_strict(text),
            Err(ParseError::Unsorted("command".into()))
        );
        let frame = Frame::parse_lenient(text).unwrap();
        assert_eq!(frame.to(), Some("noded"));
        assert_eq!(
            frame.serialize(),
            "---\ncommand: noded.ping\nto: noded\ntype: request\n---\n"
        );
    }

    #[test]
    fn crlf_lines_are_read_by_both_readers() {
        let text = "---\r\ncommand: x\r\ntype: request\r\n---\r\nbody";
        for frame in [Frame::parse_strict(text), Frame::parse_lenient(text)] {
            let frame = frame.unwrap();
            assert_eq!(frame.command(), Some("x"));
            assert_eq!(frame.body, "body");
        }
    }

    #[test]
    fn an_unreadable_frame_still_names_whom_to_answer() {
        let duplicate = "---\ncommand: c.ui.tree\nid: 7\nid: 8\nto: c\ntype: request\n---\n{}";
        assert!(Frame::parse_lenient(duplicate).is_err());
        let seen = Frame::salvage(duplicate);
        assert_eq!(
            (seen.id(), seen.command(), seen.to()),
            (Some("7"), Some("c.ui.tree"), Some("c"))
        );
        let bad_line = "---\nid: 9\nnot a header\n---\n";
        assert_eq!(Frame::salvage(bad_line).id(), Some("9"));
        let huge = format!("---\nid: 10\ntype: request\n---\n{}", "x".repeat(17 << 20));
        assert_eq!(Frame::salvage(&huge).id(), Some("10"));
        assert_eq!(Frame::salvage("garbage\nid: 1\n"), Frame::default());
    }

    #[test]
    fn a_frame_without_its_delimiters_is_refused() {
        assert_eq!(
            Frame::parse_strict("command: x\n---\n"),
            Err(ParseError::NoOpening)
        );
        assert_eq!(
            Frame::parse_strict("---\ncommand: x\ntype: request\n"),
            Err(ParseError::NoClosing)
        );
        assert_eq!(Frame::parse_lenient(""), Err(ParseError::NoOpening));
    }

    #[test]
    fn more_than_sixty_four_headers_are_refused() {
        let mut text = String::from("---\n");
        for i in 0..65 {
            text.push_str(&format!("h{i:03}: v\n"));
        }
        text.push_str("---\n");
        assert_eq!(Frame::parse_lenient(&text), Err(ParseError::TooManyHeaders));
        let at_limit: String = text.lines().take(65).map(|l| format!("{l}\n")).collect();
        let frame = Frame::parse_strict(&format!("{at_limit}---\n")).unwrap();
        assert_eq!(frame.headers.len(), 64);
    }

    #[test]
    fn a_seventeen_mebibyte_frame_is_refused() {
        let text = format!("---\ntype: request\n---\n{}", "x".repeat(17 << 20));
        assert!(matches!(
            Frame::parse_strict(&text),
            Err(ParseError::TooLarge(_))
        ));
        assert!(matches!(
            Frame::parse_lenient(&text),
            Err(ParseError::TooLarge(_))
        ));
    }

    #[test]
    fn garbage_is_refused_with_a_message() {
        for text in [
            "hello",
            "---\nno colon here\n---\n",
            "\u{0}\u{1}---",
            "---\n: v\n---\n",
        ] {
            let e = Frame::parse_lenient(text).unwrap_err();
            assert!(!e.to_string().is_empty());
        }
        assert!(matches!(
            Frame::parse_strict("---\ntype: shout\n---\n"),
            Err(ParseError::BadType(_))
        ));
        assert!(matches!(
            Frame::parse_strict("---\na: 1\na: 2\n---\n"),
            Err(ParseError::Duplicate(_))
        ));
    }

    #[test]
    fn a_body_may_hold_delimiter_lines() {
        let frame = Frame::request("x.y", "a", "b", "1").with_body("---\nnot: a header\n---\n");
        let back = Frame::parse_strict(&frame.serialize()).unwrap();
        assert_eq!(back.body, "---\nnot: a header\n---\n");
        assert_eq!(back.headers.len(), 5);
    }

    #[test]
    fn header_values_cannot_break_the_block() {
        let frame = Frame::default().with("message", "two\nlines");
        assert_eq!(frame.header("message"), Some("two lines"));
        assert_eq!(Frame::parse_strict(&frame.serialize()).unwrap(), frame);
    }

    #[test]
    fn rc_bands_are_the_four_codes() {
        for rc in [Rc::Ok, Rc::Warning, Rc::Error, Rc::Failure] {
            assert_eq!(Rc::from_code(rc.code()), Some(rc));
        }
        assert_eq!(Rc::from_code(3), None);
    }
}
