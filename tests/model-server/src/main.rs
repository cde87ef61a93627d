//! `kaizen-model-server --script FILE.json [--port N] [--log FILE.jsonl] [--no-pace] [--by-position]`
//!
//! Serves a scripted model on 127.0.0.1, printing
//! `listening on http://127.0.0.1:PORT` once ready, until killed. With
//! `--log`, every request received is appended to the file as one JSON line
//! (a `Recorded`). With `--no-pace`, streamed answers go out without the
//! default 1 ms pauses and split events (a zero-latency model). With
//! `--by-position`, each request gets the turn at its position in the
//! conversation (a deterministic model, as `kaizen eval`'s offline runs
//! use).

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

use kaizen_model_server::{ModelServer, Options, Script};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: kaizen-model-server --script FILE.json [--port N] [--log FILE.jsonl] [--no-pace] [--by-position]";

struct Args {
    script: PathBuf,
    options: Options,
}

fn parse_args() -> Result<Args, String> {
    let mut script = None;
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--script" => script = Some(PathBuf::from(value("--script")?)),
            "--port" => {
                let port = value("--port")?;
                options.port = port.parse().map_err(|_| format!("bad port: {port}"))?;
            }
            "--log" => options.log = Some(PathBuf::from(value("--log")?)),
            "--no-pace" => options.pace = None,
            "--by-position" => options.by_position = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument: {other}")),
        }
    }
    let script = script.ok_or("--script is required")?;
    Ok(Args { script, options })
}

fn load(path: &PathBuf) -> Result<Script, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("bad script {}: {e}", path.display()))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("kaizen-model-server: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let script = match load(&args.script) {
        Ok(script) => script,
        Err(message) => {
            eprintln!("kaizen-model-server: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kaizen-model-server: cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let server = match ModelServer::start_with(script, args.options).await {
            Ok(server) => server,
            Err(e) => {
                eprintln!("kaizen-model-server: cannot listen: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut stdout = std::io::stdout();
        let _ = writeln!(stdout, "listening on http://{}", server.addr());
        let _ = stdout.flush();
        std::future::pending::<()>().await;
        ExitCode::SUCCESS
    })
}
