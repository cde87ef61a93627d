//! How a line a person typed answers a plugin's question: option numbers,
//! or their own words. The terminal's prompt and `kaizen approve
//! --answer` read answers alike through it.

use kaizen_plugin_host::interaction::Question;

/// What `line` answers to `question`: the chosen labels in option order,
/// or the user's own text. `Err` says why the line is no answer; the
/// caller shows it and asks again.
///
/// A line made only of numbers (separated by commas or spaces) picks
/// options; any other text is the user's own answer, so "2 weeks" is text,
/// not option 2.
pub fn parse(question: &Question, line: &str) -> Result<Vec<String>, String> {
    let line = line.trim();
    let n = question.options.len();
    let Some(numbers) = numbers(line) else {
        return Ok(vec![line.to_string()]);
    };
    // A blank line (or only separators) is most likely a stray Enter.
    if numbers.is_empty() {
        return Err(format!(
            "Type a number from 1 to {n} or your own answer (Ctrl-D declines)."
        ));
    }
    if let Some(bad) = numbers.iter().find(|&&k| k == 0 || k > n) {
        return Err(format!(
            "There is no option {bad}; choose from 1 to {n}, or type your own answer."
        ));
    }
    if !question.multi_select && numbers.len() > 1 {
        return Err(format!(
            "Choose only one option (a number from 1 to {n}); this question takes a single answer."
        ));
    }
    Ok(question
        .options
        .iter()
        .enumerate()
        .filter(|(i, _)| numbers.contains(&(i + 1)))
        .map(|(_, option)| option.label.clone())
        .collect())
}

/// The numbers in `line` when it holds nothing else.
fn numbers(line: &str) -> Option<Vec<usize>> {
    line.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|token| !token.is_empty())
        .map(|token| {
            // Leading digits only: "1e3" or "+1" is text, not a choice.
            token
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| token.parse().unwrap_or(usize::MAX))
        })
        .collect()
}
