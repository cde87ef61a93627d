//! Incremental framing of streamed bodies: lines (NDJSON) and server-sent
//! events (SSE). Chunks arrive cut anywhere, mid-line and mid-character, so
//! both buffer bytes until a line is complete before decoding it.

/// Splits a byte stream into lines, whatever the chunking.
#[derive(Debug, Default)]
pub struct LineSplitter {
    pending: Vec<u8>,
}

impl LineSplitter {
    /// Adds a chunk and returns the lines it completed, without their `\n`
    /// or `\r\n` terminators. Invalid UTF-8 is replaced, not fatal: the
    /// JSON parser downstream reports anything that matters.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        let mut rest = chunk;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            self.pending.extend_from_slice(&rest[..pos]);
            rest = &rest[pos + 1..];
            let mut line = std::mem::take(&mut self.pending);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            lines.push(String::from_utf8_lossy(&line).into_owned());
        }
        self.pending.extend_from_slice(rest);
        lines
    }

    /// The unterminated last line, if any, at the end of the stream.
    pub fn finish(&mut self) -> Option<String> {
        let mut line = std::mem::take(&mut self.pending);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        (!line.is_empty()).then(|| String::from_utf8_lossy(&line).into_owned())
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty when the server sent none.
    pub event: String,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

/// Parses server-sent events incrementally.
#[derive(Debug, Default)]
pub struct SseParser {
    lines: LineSplitter,
    event: String,
    data: Vec<String>,
}

impl SseParser {
    /// Adds a chunk and returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for line in self.lines.push(chunk) {
            self.line(line, &mut events);
        }
        events
    }

    /// At the end of the stream: the last event even if its blank line never
    /// came (lenient where the spec would drop it, so a server that ends with
    /// `data: [DONE]\n` is not taken for a truncated stream).
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if let Some(line) = self.lines.finish() {
            self.line(line, &mut events);
        }
        self.dispatch(&mut events);
        events
    }

    fn line(&mut self, line: String, events: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line.starts_with(':') {
            return; // a comment, used as keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => self.data.push(value.to_string()),
            _ => {} // id, retry: irrelevant to a one-shot completion
        }
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return;
        }
        let data = std::mem::take(&mut self.data).join("\n");
        events.push(SseEvent { event, data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_bytewise(input: &[u8]) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        for byte in input {
            events.extend(parser.push(std::slice::from_ref(byte)));
        }
        events.extend(parser.finish());
        events
    }

    #[test]
    fn sse_events_survive_any_chunking() {
        let input = "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\ndata:{\"é\":2}\ndata: x\n\nretry: 5\nid: 3\ndata: [DONE]\n\n";
        let expected = vec![
            SseEvent {
                event: "message_start".into(),
                data: "{\"a\":1}".into(),
            },
            SseEvent {
                event: String::new(),
                data: "{\"é\":2}\nx".into(),
            },
            SseEvent {
                event: String::new(),
                data: "[DONE]".into(),
            },
        ];
        assert_eq!(feed_bytewise(input.as_bytes()), expected);
        let mut parser = SseParser::default();
        let mut whole = parser.push(input.as_bytes());
        whole.extend(parser.finish());
        assert_eq!(whole, expected);
    }

    #[test]
    fn sse_last_event_without_blank_line() {
        assert_eq!(
            feed_bytewise(b"data: [DONE]"),
            vec![SseEvent {
                event: String::new(),
                data: "[DONE]".into()
            }]
        );
        assert!(feed_bytewise(b"event: ping\n\n").is_empty());
    }

    #[test]
    fn lines_split_across_chunks() {
        let mut lines = LineSplitter::default();
        assert!(lines.push(b"{\"a\"").is_empty());
        assert_eq!(
            lines.push(b":1}\n{\"b\":2}\r\n{\"c\""),
            vec!["{\"a\":1}", "{\"b\":2}"]
        );
        assert_eq!(lines.push(b":3}"), Vec::<String>::new());
        assert_eq!(lines.finish().as_deref(), Some("{\"c\":3}"));
        assert_eq!(lines.finish(), None);
    }
}
