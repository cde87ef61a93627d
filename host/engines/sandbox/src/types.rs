//! The plain data the plugin host exchanges with the sandbox: what a session
//! may touch, what to run, and what came back.

use std::path::PathBuf;
use std::time::Duration;

/// What every process of one session may do. Built by the plugin host from
/// the operator's grant; the sandbox enforces it and adds nothing.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Directories the session may read and write (absolute): the workspace
    /// first, then read-write added directories. The first one is the default
    /// working directory.
    pub writable: Vec<PathBuf>,
    /// Directories the session may only read (absolute): read-only added
    /// directories and the operator's extra read directories.
    pub readable: Vec<PathBuf>,
    /// Whether processes may use the network. `false` gives each process a
    /// new, empty network namespace (and, with Landlock ABI 4, denies TCP).
    pub network: bool,
    /// Extra environment variables on top of the safe set. The caller has
    /// already filtered them: the sandbox passes them through as given.
    pub env: Vec<(String, String)>,
    /// Existing paths inside the writable directories that processes may
    /// only read (configuration the session must not change).
    pub protect: Vec<PathBuf>,
    /// Paths processes must not see even inside the granted directories
    /// (the host's own state); covered by an empty directory or file.
    pub hide: Vec<PathBuf>,
    /// Programs (their real paths, anywhere in the process's root, the
    /// system directories included) that must not run at all: each is
    /// covered by `/dev/null`, so executing it fails with `EACCES` however
    /// it is named, and a copy of it is empty.
    pub no_exec: Vec<PathBuf>,
    /// Resource limits applied to every process.
    pub limits: Limits,
    /// The operator opted in to running without a kernel feature this machine
    /// lacks. Without it [`crate::Sandbox::new`] fails closed.
    pub allow_degraded: bool,
}

/// Resource limits for each sandboxed process (and its descendants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Processes the session's user may run at once inside one sandbox
    /// (RLIMIT_NPROC; see the crate docs for how it holds when the host runs
    /// as root).
    pub max_processes: u64,
    /// Largest file a process may write, in bytes (RLIMIT_FSIZE).
    pub max_file_size: u64,
    /// CPU seconds each process may use (RLIMIT_CPU).
    pub cpu_seconds: u64,
    /// Memory each process may allocate, in bytes (RLIMIT_DATA: its heap
    /// and private writable mappings).
    pub max_memory: u64,
    /// Size of each process's private `/tmp` and `/dev/shm`, in bytes.
    pub tmp_size: u64,
    /// Bytes kept per output stream (stdout, stderr) of one command, and of
    /// unread output per stream of a background job.
    pub max_output_bytes: usize,
}

impl Limits {
    /// 512 processes, 4 GiB files, 30 CPU minutes, 8 GiB of memory per
    /// process, 1 GiB of private `/tmp`, 1 MiB per output stream.
    pub const DEFAULT: Limits = Limits {
        max_processes: 512,
        max_file_size: 4 << 30,
        cpu_seconds: 1800,
        max_memory: 8 << 30,
        tmp_size: 1 << 30,
        max_output_bytes: 1 << 20,
    };
}

impl Default for Limits {
    /// [`Limits::DEFAULT`].
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// One program to run to completion.
#[derive(Debug, Clone, Default)]
pub struct Command {
    /// The program: a name looked up on the sandbox's `PATH`, or a path.
    pub program: String,
    /// Its arguments (without the program name).
    pub args: Vec<String>,
    /// Working directory; defaults to the first writable directory.
    pub cwd: Option<PathBuf>,
    /// Variables added last, over the safe set and the policy's.
    pub env: Vec<(String, String)>,
    /// Bytes fed to standard input; `None` means `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// Wall-clock limit; when it passes, everything the command started is
    /// killed and [`Output::timed_out`] is set.
    pub timeout: Option<Duration>,
}

/// What a finished command left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Exit code when the program exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended the program, when one did.
    pub signal: Option<i32>,
    /// Standard output (for shells: stdout and stderr merged in order).
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: Vec<u8>,
    /// Some output was dropped to respect [`Limits::max_output_bytes`]: the
    /// head and tail were kept, with a marker line between them.
    pub truncated: bool,
    /// The command ran out of time and was killed.
    pub timed_out: bool,
}

/// Where a background job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Still running.
    Running,
    /// Exited normally with this code.
    Exited(i32),
    /// Ended by a signal: killed through the API, or it died of one.
    Killed,
}

/// Output a background job produced since the last read, and its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOutput {
    /// The job's state at the time of the read.
    pub state: JobState,
    /// Standard output since the last read.
    pub stdout: Vec<u8>,
    /// Standard error since the last read.
    pub stderr: Vec<u8>,
}

/// Why a process could not be run (a program that ran and failed is not an
/// error: see [`Output`]).
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The program does not exist on the sandbox's `PATH` (or at that path).
    #[error("program not found: {0}")]
    NotFound(String),
    /// The sandbox could not be set up; the message names the kernel feature
    /// or step that failed.
    #[error("sandbox unavailable: {0}")]
    Sandbox(String),
    /// No background job has this id; the message lists the known ones.
    #[error("unknown background job: {0}")]
    UnknownId(String),
    /// Anything else that stopped the process from being run.
    #[error("{0}")]
    Failed(String),
}
