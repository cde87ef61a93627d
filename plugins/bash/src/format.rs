//! What the model reads back from a command: output cut to a size a
//! context window can take, and the facts it needs (exit status, timeout,
//! job state) in plain words.

use kaizen_sdk::host::process::{JobOutput, JobState, Output};
use regex::Regex;

/// Output beyond this many characters is cut, as Claude Code does.
pub const MAX_CHARS: usize = 30_000;

/// The result text of a finished command.
pub fn command_result(output: &Output, timeout_ms: u64) -> String {
    let mut text = joined(&output.stdout, &output.stderr);
    if output.truncated {
        text.push_str(
            "\n\n[the output was larger than the host keeps; its middle part was dropped]",
        );
    }
    let mut text = cut(&text);
    if output.timed_out {
        push_line(
            &mut text,
            &format!(
                "Command timed out after {timeout_ms} ms and was killed, with every process it started. \
                 Run long commands with run_in_background, or pass a larger timeout (at most 600000)."
            ),
        );
    } else if let Some(signal) = output.signal {
        push_line(
            &mut text,
            &format!("Command was killed by signal {signal}."),
        );
    } else if let Some(code) = output.exit_code.filter(|&code| code != 0) {
        push_line(&mut text, &format!("Exit code {code}"));
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    text
}

/// The result text of a command started in the background.
pub fn background_started(id: &str) -> String {
    format!(
        "Command running in the background with ID: {id}. Read its output with BashOutput \
         (bash_id \"{id}\") and stop it with KillShell (shell_id \"{id}\")."
    )
}

/// The result text of a read of background job `id`.
pub fn job_report(id: &str, output: &JobOutput, filter: Option<&Regex>) -> String {
    let status = match output.state {
        JobState::Running => "running".to_string(),
        JobState::Exited(code) => format!("completed (exit code {code})"),
        JobState::Killed => "killed".to_string(),
    };
    let mut text = joined(&output.stdout, &output.stderr);
    if let Some(filter) = filter {
        text = text
            .lines()
            .filter(|line| filter.is_match(line))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let body = if text.is_empty() {
        "(no new output)".to_string()
    } else {
        cut(&text)
    };
    format!("Shell {id}: {status}\n{body}")
}

/// Standard output, then standard error when there is any, as text.
fn joined(stdout: &[u8], stderr: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(stdout).into_owned();
    if !stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&String::from_utf8_lossy(stderr));
    }
    let kept = text.trim_end_matches('\n').len();
    text.truncate(kept);
    text
}

/// Room kept for the note that says what was cut.
const NOTE_ROOM: usize = 200;

/// `text` cut so that it and a note saying how many lines were left out
/// fit in [`MAX_CHARS`] characters (the host cuts anything longer again).
pub fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_CHARS {
        return text.to_string();
    }
    let Some((end, _)) = text.char_indices().nth(MAX_CHARS - NOTE_ROOM) else {
        return text.to_string();
    };
    let dropped_lines = text[end..].split('\n').count();
    format!(
        "{}\n\n... [{dropped_lines} more lines cut: the output exceeded {MAX_CHARS} characters; \
         narrow the command, e.g. pipe it through head, tail or grep] ...",
        &text[..end]
    )
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(stdout: &str, exit_code: Option<i32>) -> Output {
        Output {
            exit_code,
            signal: None,
            stdout: stdout.as_bytes().to_vec(),
            stderr: Vec::new(),
            truncated: false,
            timed_out: false,
        }
    }

    #[test]
    fn success_shows_the_output_without_a_status() {
        assert_eq!(command_result(&output("hi\n", Some(0)), 1000), "hi");
    }

    #[test]
    fn silence_says_so() {
        assert_eq!(command_result(&output("", Some(0)), 1000), "(no output)");
    }

    #[test]
    fn a_failure_reports_its_exit_code() {
        assert_eq!(
            command_result(&output("oops\n", Some(2)), 1000),
            "oops\nExit code 2"
        );
        assert_eq!(command_result(&output("", Some(1)), 1000), "Exit code 1");
    }

    #[test]
    fn a_timeout_says_how_long_and_that_everything_was_killed() {
        let mut out = output("partial\n", None);
        out.timed_out = true;
        out.signal = Some(9);
        let text = command_result(&out, 500);
        assert!(
            text.starts_with("partial\nCommand timed out after 500 ms"),
            "{text}"
        );
        assert!(!text.contains("signal"), "{text}");
    }

    #[test]
    fn long_output_is_cut_at_the_limit_with_the_dropped_line_count() {
        // 99 characters a line: the cut falls inside line 302 of 1000.
        let line = "x".repeat(98);
        let text = vec![line.as_str(); 1000].join("\n");
        let result = command_result(&output(&text, Some(0)), 1000);
        assert!(result.chars().count() <= MAX_CHARS);
        let (kept, note) = result.split_once("\n\n... [").unwrap();
        assert_eq!(kept.chars().count(), MAX_CHARS - NOTE_ROOM);
        assert!(note.starts_with("699 more lines cut"), "{note}");
    }

    #[test]
    fn cutting_respects_character_boundaries() {
        let text = "é".repeat(MAX_CHARS + 5);
        let result = cut(&text);
        assert!(result.starts_with(&"é".repeat(MAX_CHARS - NOTE_ROOM)));
        assert_eq!(cut(&"é".repeat(MAX_CHARS)), "é".repeat(MAX_CHARS));
    }

    #[test]
    fn stderr_follows_stdout() {
        let mut out = output("out", Some(0));
        out.stderr = b"err\n".to_vec();
        assert_eq!(command_result(&out, 1000), "out\nerr");
    }

    #[test]
    fn job_reports_filter_lines_and_name_the_state() {
        let job = JobOutput {
            state: JobState::Exited(3),
            stdout: b"keep 1\ndrop\nkeep 2\n".to_vec(),
            stderr: Vec::new(),
        };
        let filter = Regex::new("^keep").unwrap();
        assert_eq!(
            job_report("bash_1", &job, Some(&filter)),
            "Shell bash_1: completed (exit code 3)\nkeep 1\nkeep 2"
        );
        let idle = JobOutput {
            state: JobState::Running,
            stdout: Vec::new(),
            stderr: Vec::new(),
        };
        assert_eq!(
            job_report("bash_2", &idle, None),
            "Shell bash_2: running\n(no new output)"
        );
    }
}
