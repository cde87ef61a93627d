//! A text file as the edit tools see it: UTF-8 without its byte-order
//! mark, with CRLF line endings shown as LF so that strings the model
//! copied from Read (which hides the `\r`) match, and written back the way
//! it came.

/// How a file ends its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    /// `\n` only (or no line break at all).
    Lf,
    /// Every line break is `\r\n`.
    Crlf,
    /// Both kinds: the text is matched as it is, without conversion, so
    /// that lines nobody edited keep their endings.
    Mixed,
}

/// The decoded content of a text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextFile {
    /// The content, with `\r\n` as `\n` when the file is [`LineEnding::Crlf`].
    pub text: String,
    /// The file's line endings.
    pub ending: LineEnding,
    /// Whether it started with a UTF-8 byte-order mark.
    pub bom: bool,
}

const BOM: &str = "\u{feff}";

impl TextFile {
    /// Decodes `bytes`; the error says why it is not UTF-8 text.
    pub fn decode(bytes: Vec<u8>) -> Result<Self, String> {
        if let Some(at) = bytes.iter().position(|&b| b == 0) {
            return Err(format!("it has a NUL byte at offset {at}, so it is binary"));
        }
        let text = String::from_utf8(bytes).map_err(|err| {
            format!(
                "it is not valid UTF-8 (the first bad byte is at offset {})",
                err.utf8_error().valid_up_to()
            )
        })?;
        Ok(match text.strip_prefix(BOM) {
            Some(rest) => Self::from_text(rest.to_owned(), true),
            None => Self::from_text(text, false),
        })
    }

    /// A file holding `text` (its line endings detected), with a
    /// byte-order mark when `bom`.
    pub fn from_text(text: String, bom: bool) -> Self {
        let ending = line_ending(&text);
        let text = match ending {
            LineEnding::Crlf => text.replace("\r\n", "\n"),
            LineEnding::Lf | LineEnding::Mixed => text,
        };
        Self { text, ending, bom }
    }

    /// `s` (a string from the model) in the form [`Self::text`] uses: its
    /// CRLFs become LFs unless the file mixes both, where it is matched as
    /// given.
    pub fn adapt(&self, s: &str) -> String {
        match self.ending {
            LineEnding::Lf | LineEnding::Crlf => s.replace("\r\n", "\n"),
            LineEnding::Mixed => s.to_owned(),
        }
    }

    /// The bytes to write: the text with the file's own line endings and
    /// byte-order mark.
    pub fn encode(&self) -> Vec<u8> {
        let body = match self.ending {
            LineEnding::Crlf => self.text.replace('\n', "\r\n"),
            LineEnding::Lf | LineEnding::Mixed => self.text.clone(),
        };
        if self.bom {
            [BOM.as_bytes(), body.as_bytes()].concat()
        } else {
            body.into_bytes()
        }
    }
}

/// The line endings of `text`.
fn line_ending(text: &str) -> LineEnding {
    let breaks = text.matches('\n').count();
    let crlfs = text.matches("\r\n").count();
    match crlfs {
        0 => LineEnding::Lf,
        n if n == breaks => LineEnding::Crlf,
        _ => LineEnding::Mixed,
    }
}

/// How many lines `text` has (a last line without a newline counts; an
/// empty text has none).
pub(crate) fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.matches('\n').count() + usize::from(!text.ends_with('\n'))
    }
}

/// The 1-based line on which byte `offset` of `text` lies.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_files_are_seen_as_lf_and_written_back_as_crlf() {
        let file = TextFile::decode(b"a\r\nb\r\n".to_vec()).unwrap();
        assert_eq!(file.ending, LineEnding::Crlf);
        assert_eq!(file.text, "a\nb\n");
        assert_eq!(file.adapt("a\r\nb"), "a\nb");
        assert_eq!(file.encode(), b"a\r\nb\r\n");
    }

    #[test]
    fn mixed_files_are_matched_as_they_are() {
        let file = TextFile::decode(b"a\r\nb\nc".to_vec()).unwrap();
        assert_eq!(file.ending, LineEnding::Mixed);
        assert_eq!(file.text, "a\r\nb\nc");
        assert_eq!(file.adapt("a\r\nb"), "a\r\nb");
        assert_eq!(file.encode(), b"a\r\nb\nc");
    }

    #[test]
    fn a_byte_order_mark_is_hidden_and_kept() {
        let file = TextFile::decode("\u{feff}x = 1\n".as_bytes().to_vec()).unwrap();
        assert!(file.bom);
        assert_eq!(file.text, "x = 1\n");
        assert_eq!(file.encode(), "\u{feff}x = 1\n".as_bytes());
    }

    #[test]
    fn binary_and_invalid_utf8_are_refused_with_a_reason() {
        assert!(
            TextFile::decode(b"ab\0c".to_vec())
                .unwrap_err()
                .contains("NUL byte at offset 2")
        );
        assert!(
            TextFile::decode(b"ab\xffc".to_vec())
                .unwrap_err()
                .contains("offset 2")
        );
    }

    #[test]
    fn lines_are_counted_and_located() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}
