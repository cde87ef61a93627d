//! Reading what bash's `export -p` prints: the exported variables a shell
//! call leaves for the next one (see [`crate::shell`]).
//!
//! Why `export -p`: it is one builtin that writes every exported variable
//! at once. Finding them with bash's own expansions took about 1.7 ms of
//! every call (a loop over all variables, an attribute test and a write
//! each); `export -p` takes about 0.1 ms.
//!
//! What it prints, one variable per entry: `declare -FLAGS NAME="value"`,
//! or `export NAME="value"` in POSIX mode; `$'...'` instead of `"..."`
//! when the value holds what double quotes cannot show (bash 5.2; older
//! ones put a newline inside the double quotes as it is); no `=value` for a
//! variable that is exported but unset; `(...)` for an array, which
//! `export` cannot pass to a program and so is not carried. The file is
//! written by a sandboxed program, which may write anything to it instead:
//! what does not read as an entry is skipped.

/// The exported variables in `text`, in order, with their values as
/// bytes.
pub(crate) fn parse(text: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut r = Cursor { text, at: 0 };
    let mut found = Vec::new();
    while r.at < text.len() {
        if let Some(entry) = r.entry() {
            found.push(entry);
        }
        r.skip_line();
    }
    found
}

struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, prefix: &[u8]) -> bool {
        let found = self.text[self.at..].starts_with(prefix);
        if found {
            self.at += prefix.len();
        }
        found
    }

    /// Moves past the end of the current line (what an entry left, or a
    /// line that was not one).
    fn skip_line(&mut self) {
        while let Some(b) = self.peek() {
            self.at += 1;
            if b == b'\n' {
                return;
            }
        }
    }

    /// One entry, when the line holds a set, exported, non-array variable.
    fn entry(&mut self) -> Option<(String, Vec<u8>)> {
        let array = if self.eat(b"declare -") {
            let start = self.at;
            while self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
                self.at += 1;
            }
            let flags = &self.text[start..self.at];
            if !flags.contains(&b'x') || !self.eat(b" ") {
                return None;
            }
            flags.contains(&b'a') || flags.contains(&b'A')
        } else if self.eat(b"export ") {
            false
        } else {
            return None;
        };
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.at += 1;
        }
        let name = &self.text[start..self.at];
        if name.is_empty() || name[0].is_ascii_digit() {
            return None;
        }
        // Exported but unset: nothing to carry.
        if !self.eat(b"=") {
            return None;
        }
        if array {
            self.skip_array();
            return None;
        }
        let value = if self.eat(b"\"") {
            self.double_quoted()?
        } else if self.eat(b"$'") {
            self.ansi_c_quoted()?
        } else {
            return None;
        };
        if !matches!(self.peek(), None | Some(b'\n')) {
            return None;
        }
        Some((String::from_utf8(name.to_vec()).ok()?, value))
    }

    /// `"..."` after its opening quote: a backslash escapes `"`, `\`, `$`
    /// and `` ` `` only.
    fn double_quoted(&mut self) -> Option<Vec<u8>> {
        let mut value = Vec::new();
        loop {
            let b = self.peek()?;
            self.at += 1;
            match b {
                b'"' => return Some(value),
                b'\\' if matches!(self.peek(), Some(b'"' | b'\\' | b'$' | b'`')) => {
                    value.push(self.peek()?);
                    self.at += 1;
                }
                _ => value.push(b),
            }
        }
    }

    /// `$'...'` after its opening: bash's ANSI-C escapes.
    fn ansi_c_quoted(&mut self) -> Option<Vec<u8>> {
        let mut value = Vec::new();
        loop {
            let b = self.peek()?;
            self.at += 1;
            if b == b'\'' {
                return Some(value);
            }
            if b != b'\\' {
                value.push(b);
                continue;
            }
            let e = self.peek()?;
            self.at += 1;
            match e {
                b'a' => value.push(0x07),
                b'b' => value.push(0x08),
                b'e' | b'E' => value.push(0x1b),
                b'f' => value.push(0x0c),
                b'n' => value.push(b'\n'),
                b'r' => value.push(b'\r'),
                b't' => value.push(b'\t'),
                b'v' => value.push(0x0b),
                b'\\' | b'\'' | b'"' | b'?' => value.push(e),
                b'0'..=b'7' => {
                    let mut n = u32::from(e - b'0');
                    for _ in 0..2 {
                        match self.peek() {
                            Some(d @ b'0'..=b'7') => {
                                n = n * 8 + u32::from(d - b'0');
                                self.at += 1;
                            }
                            _ => break,
                        }
                    }
                    value.push(n as u8);
                }
                b'x' => value.push(self.hex(2)? as u8),
                b'u' | b'U' => {
                    let digits = if e == b'u' { 4 } else { 8 };
                    let c = char::from_u32(self.hex(digits)?)?;
                    value.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                b'c' => {
                    let c = self.peek()?;
                    self.at += 1;
                    value.push(c & 0x1f);
                }
                _ => {
                    value.push(b'\\');
                    value.push(e);
                }
            }
        }
    }

    /// Up to `max` hexadecimal digits (at least one).
    fn hex(&mut self, max: usize) -> Option<u32> {
        let mut n = 0u32;
        let mut seen = 0;
        while seen < max {
            let Some(d) = self.peek().and_then(|b| (b as char).to_digit(16)) else {
                break;
            };
            n = n * 16 + d;
            self.at += 1;
            seen += 1;
        }
        (seen > 0).then_some(n)
    }

    /// Moves past an array's `(...)`, whose quoted elements may hold
    /// newlines and parentheses.
    fn skip_array(&mut self) {
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b')' => return,
                b'"' => {
                    let _ = self.double_quoted();
                }
                b'$' if self.peek() == Some(b'\'') => {
                    self.at += 1;
                    let _ = self.ansi_c_quoted();
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &[u8]) -> Vec<(String, String)> {
        parse(text)
            .into_iter()
            .map(|(n, v)| (n, String::from_utf8(v).unwrap()))
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn reads_both_quotings_and_skips_unset_variables_and_arrays() {
        let text = b"declare -x A=\"1\"\ndeclare -x OLDPWD\n\
            declare -x B=$'x\\ny\"c$d`e\\\\f\\'g'\n\
            declare -ax ARR=([0]=\"a)\" [1]=$'b\\n)')\n\
            declare -rx C=\"q\\\"u\\$o\\`t\\\\e\"\n\
            declare -x D=\"\xc3\xbc\"\ndeclare -x E=$'\\303\\274\\x41\\u00fc\\t'\n";
        assert_eq!(
            parsed(text),
            pairs(&[
                ("A", "1"),
                ("B", "x\ny\"c$d`e\\f'g"),
                ("C", "q\"u$o`t\\e"),
                ("D", "ü"),
                ("E", "üAü\t"),
            ])
        );
    }

    #[test]
    fn reads_posix_mode_and_older_bashes_newlines_inside_double_quotes() {
        assert_eq!(
            parsed(b"export A=\"one\ntwo\"\nexport B\nexport C=\"3\"\n"),
            pairs(&[("A", "one\ntwo"), ("C", "3")])
        );
    }

    #[test]
    fn what_does_not_read_as_an_entry_is_skipped() {
        let text = b"garbage\ndeclare -- NOT_EXPORTED=\"1\"\ndeclare -x 9BAD=\"1\"\n\
            declare -x OPEN=\"never closed\ndeclare -x OK=\"fine\"";
        // The unclosed quote swallows the rest: nothing after it is trusted.
        assert_eq!(parsed(text), Vec::<(String, String)>::new());
        assert_eq!(
            parsed(b"declare -x TRAIL=\"1\"junk\ndeclare -x OK=\"fine\"\n"),
            pairs(&[("OK", "fine")])
        );
        // Truncated anywhere: no panic.
        let full = b"declare -x B=$'\\x4\\u00\\303' C=\"x\"\n";
        for end in 0..full.len() {
            let _ = parse(&full[..end]);
        }
    }
}
