//! `fs-probe`: file operations through `std::fs`, on the path exactly as the
//! model gave it, so that tests can see what the preopens allow.

use std::fs;

use kaizen_sdk::{CallContext, Output, Tool, ToolError, export_tools};
use schemars::JsonSchema;
use serde::Deserialize;

/// What to do with the path.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Op {
    /// Read the file as UTF-8 text.
    Read,
    /// Write `content` to the file, replacing it.
    Write,
    /// List the directory's entries.
    List,
    /// Create the directory and its parents.
    Mkdir,
    /// Remove the file, or the directory and everything in it.
    Remove,
}

/// Input of `FsProbe`.
#[derive(Deserialize, JsonSchema)]
struct FsProbeInput {
    /// The operation.
    op: Op,
    /// The path, absolute or relative, used as given.
    path: String,
    /// What to write (`write` only; empty when omitted).
    content: Option<String>,
}

struct FsProbe;

impl Tool for FsProbe {
    const NAME: &'static str = "FsProbe";
    const DESCRIPTION: &'static str =
        "Reads, writes, lists, creates or removes a path with std::fs, exactly as given.";
    type Input = FsProbeInput;

    fn call(_ctx: &CallContext, input: FsProbeInput) -> Result<Output, ToolError> {
        let path = input.path.as_str();
        let (verb, result) = match input.op {
            Op::Read => ("read", fs::read_to_string(path)),
            Op::Write => {
                let content = input.content.unwrap_or_default();
                let written = fs::write(path, &content);
                (
                    "write",
                    written.map(|()| format!("wrote {} bytes", content.len())),
                )
            }
            Op::List => ("list", list(path)),
            Op::Mkdir => (
                "mkdir",
                fs::create_dir_all(path).map(|()| format!("created {path}")),
            ),
            Op::Remove => ("remove", remove(path).map(|()| format!("removed {path}"))),
        };
        result
            .map(Output::text)
            .map_err(|err| ToolError::from(err).context(format_args!("{verb} {path}")))
    }
}

fn list(path: &str) -> std::io::Result<String> {
    let mut names = fs::read_dir(path)?
        .map(|entry| entry.map(|entry| entry.file_name().to_string_lossy().into_owned()))
        .collect::<std::io::Result<Vec<_>>>()?;
    names.sort();
    Ok(names.join("\n"))
}

fn remove(path: &str) -> std::io::Result<()> {
    if fs::symlink_metadata(path)?.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
}

export_tools!(FsProbe);
