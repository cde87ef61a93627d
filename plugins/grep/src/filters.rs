//! ripgrep's pieces built from the input as `rg` builds them from its
//! flags: the regex matcher, the `--glob` overrides and the `--type`
//! selection, with errors that tell the model what to change.

use std::path::Path;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use kaizen_sdk::prelude::*;

use crate::search::Options;

/// The matcher `rg` builds: `(?m)` always, `(?s)` and no line terminator
/// for multi-line searches, else `\n` as the line terminator (which lets
/// the searcher look for candidates in whole buffers).
pub(crate) fn matcher(pattern: &str, options: &Options) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(options.case_insensitive)
        .multi_line(true);
    if options.multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern).map_err(|err| {
        let err = err.to_string();
        let hint = if err.contains("not allowed") {
            "Patterns match within one line: set `multiline: true` to match across lines \
             (then `.` matches newlines too)."
        } else {
            "The pattern uses Rust regex syntax (as ripgrep): escape literal metacharacters \
             such as ( ) [ ] { } . * + ? | ^ $ \\ with a backslash (e.g. `interface\\{\\}` to \
             find `interface{}`); look-around and backreferences are not supported."
        };
        ToolError::invalid_input(format!(
            "Invalid regular expression `{pattern}`:\n{}\n{hint}",
            err.trim_end()
        ))
    })
}

/// The `--glob` filters, matched relative to `dir`.
pub(crate) fn overrides(dir: &Path, globs: &[String]) -> Result<Override, ToolError> {
    let mut builder = OverrideBuilder::new(dir);
    for glob in globs {
        builder.add(glob).map_err(|err| {
            ToolError::invalid_input(format!(
                "Invalid glob `{glob}`: {err}. Use e.g. \"*.rs\", \"*.{{ts,tsx}}\", \
                 \"src/**/*.py\", or \"!*.min.js\" to exclude files."
            ))
        })?;
    }
    builder
        .build()
        .map_err(|err| ToolError::invalid_input(format!("Invalid glob: {err}")))
}

/// ripgrep's file types with `name` selected. A name that is not a type
/// but an extension one type covers exactly (`rs`, `md`) selects that
/// type.
pub(crate) fn types(name: &str) -> Result<Types, ToolError> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let definitions = builder.definitions();
    let by_extension = format!("*.{name}");
    let selected = if definitions.iter().any(|def| def.name() == name) {
        name.to_owned()
    } else if let Some(def) = definitions
        .iter()
        .find(|def| def.globs().contains(&by_extension))
    {
        def.name().to_owned()
    } else {
        return Err(ToolError::invalid_input(format!(
            "Unknown file type `{name}`. Use a ripgrep type name such as rust, py, js, ts, go, \
             java, c, cpp, cs, rb, php, swift, kotlin, sh, md, json, yaml, toml, html or css, \
             or filter by file name with `glob` instead (e.g. \"*.{name}\")."
        )));
    };
    builder.select(&selected);
    builder
        .build()
        .map_err(|err| ToolError::failed(format!("Cannot build file types: {err}")))
}
