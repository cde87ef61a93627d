//! [`Sandbox`]: one session's processes, shells and background jobs.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::attached::Attached;
use crate::cgroup::SessionGroup;
use crate::env;
use crate::exec::{self, Context, Registry, Spec};
use crate::features::{self, Feature, SupportReport};
use crate::jobs::Job;
use crate::landlock_rules::{self, FsGrant};
use crate::lifeline;
use crate::plan::{Layers, Plan};
use crate::root::RootSpec;
use crate::seccomp;
use crate::shell::{self, Body, ShellState};
use crate::spawner::{Slot, Spawner};
use crate::stale;
use crate::state_dir::{StateDir, StateFile};
use crate::types::{Command, JobOutput, Output, Policy, ProcessError};

/// The program behind every shell.
const BASH: &str = "/bin/bash";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs one session's programs, each in its own OS sandbox (see the crate
/// docs). Send + Sync: share it in an `Arc`. Dropping it kills everything it
/// started.
#[derive(Debug)]
pub struct Sandbox {
    policy: Policy,
    /// The private directory that HOME and TMPDIR point to.
    temp: PathBuf,
    /// Where shell state files and long scripts go: out of the way of
    /// `ls $TMPDIR`, but writable by the sandbox too (see [`StateDir`]).
    state_dir: Arc<StateDir>,
    ctx: Context,
    base_env: Vec<(String, String)>,
    shells: Mutex<HashMap<String, ShellState>>,
    jobs: Mutex<BTreeMap<String, Arc<Job>>>,
    job_counter: AtomicU64,
    /// The control groups the session's processes share, when this host can
    /// make them; removed after the kills.
    group: Option<SessionGroup>,
    /// Owns the private directories; last field, so removed after the kills.
    _root: tempfile::TempDir,
}

/// Checks that the policy's paths are absolute existing directories.
fn check_paths(policy: &Policy) -> Result<(), ProcessError> {
    for dir in policy.writable.iter().chain(&policy.readable) {
        if !dir.is_absolute() || !dir.is_dir() {
            return Err(ProcessError::Failed(format!(
                "sandbox policy: {} is not an absolute path to an existing directory",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Picks the layers this machine supports; fails closed when one is missing
/// unless the operator allowed degraded mode.
fn choose_layers(policy: &Policy, report: &SupportReport) -> Result<Layers, ProcessError> {
    let mut required = vec![
        Feature::Landlock,
        Feature::UserNamespace,
        Feature::PidNamespace,
        Feature::MountNamespace,
        Feature::Seccomp,
        Feature::Rlimits,
    ];
    if !policy.network {
        required.push(Feature::NetworkNamespace);
    }
    let missing: Vec<_> = required
        .iter()
        .filter_map(|&f| report.get(f).filter(|line| !line.supported))
        .collect();
    if !missing.is_empty() && !policy.allow_degraded {
        let what = missing
            .iter()
            .map(|line| {
                let name = match line.feature {
                    Feature::Landlock => "Landlock".to_string(),
                    other => other.to_string(),
                };
                format!(
                    "{name} is not available (kernel {}: {})",
                    report.kernel, line.detail
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(ProcessError::Sandbox(format!(
            "{what}. Refusing to run processes without it. An operator who accepts the risk can \
             opt in to degraded mode (allow_degraded in the sandbox policy); \
             `kaizen sandbox check` shows what this machine supports"
        )));
    }
    let has = |f| report.supports(f);
    let user_ns = has(Feature::UserNamespace);
    let pid_ns = user_ns && has(Feature::PidNamespace);
    Ok(Layers {
        user_ns,
        pid_ns,
        net_ns: !policy.network && user_ns && has(Feature::NetworkNamespace),
        mount_proc: pid_ns && has(Feature::MountNamespace),
        landlock: has(Feature::Landlock),
        seccomp: has(Feature::Seccomp),
        limits: Some(policy.limits),
    })
}

/// The control groups the session's processes share, when this host can
/// make them.
fn session_group(policy: &Policy) -> Option<SessionGroup> {
    SessionGroup::create(policy.limits.max_processes, policy.limits.max_memory)
        .map_err(|why| {
            // The per-process limits still hold.
            tracing::debug!("no session-wide process and memory limits: {why}");
        })
        .ok()
}

/// The home directory the password database names for this user.
fn passwd_home() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut entry = std::mem::MaybeUninit::<libc::passwd>::uninit();
    let mut found = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes the entry and its strings into `entry` and
    // `buf`, which live until the home is copied out below.
    let status = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            entry.as_mut_ptr(),
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    if status != 0 || found.is_null() {
        return None;
    }
    // SAFETY: `found` points at `entry`, filled in by the successful call;
    // `pw_dir` is a NUL-terminated string in `buf`.
    let dir = unsafe { std::ffi::CStr::from_ptr((*found).pw_dir) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())))
}

impl Sandbox {
    /// Creates the session's sandbox and its private temp directory. Fails
    /// closed ([`ProcessError::Sandbox`], naming the missing kernel feature
    /// and how to opt in to degraded mode) unless `policy.allow_degraded`.
    pub fn new(policy: Policy) -> Result<Self, ProcessError> {
        check_paths(&policy)?;
        let group = session_group(&policy);
        let group_procs = group
            .as_ref()
            .map(|group| group.procs().to_vec())
            .unwrap_or_default();
        // Started first: it joins the control groups (milliseconds of the
        // kernel's waiting) while this thread probes and plans.
        let spawner = Spawner::launch(&group_procs)
            .map_err(|e| tracing::debug!("no spawner ahead: {e}"))
            .ok();
        let layers = choose_layers(&policy, features::cached())?;
        let io_err = |what: &str, e: std::io::Error| ProcessError::Failed(format!("{what}: {e}"));
        // 0700: the session's files are nobody else's business on this host.
        let parent = std::env::temp_dir();
        stale::sweep_once(&parent);
        let root = tempfile::Builder::new()
            .prefix(stale::PREFIX)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&parent)
            .map_err(|e| io_err("creating the private temp directory", e))?;
        stale::mark_owner(root.path())
            .map_err(|e| io_err("creating the private temp directory", e))?;
        let temp = root.path().join("tmp");
        let state_dir = root.path().join("state");
        for dir in [&temp, &state_dir] {
            std::fs::create_dir(dir)
                .map_err(|e| io_err("creating the private temp directory", e))?;
        }
        let mut write = policy.writable.clone();
        write.push(root.path().to_path_buf());
        let bound = write.clone();
        // The private home is also bound where the password database puts
        // the user's home; Landlock judges a path by the mount it is
        // reached through, so the home needs a rule of its own.
        write.push(temp.clone());
        let grant = FsGrant {
            read: policy.readable.clone(),
            write,
            network: policy.network,
        };
        if layers.landlock {
            // Fail now, not at the first command, if a rule cannot be made.
            landlock_rules::create(&grant).map_err(ProcessError::Sandbox)?;
        }
        let filters = if layers.seccomp {
            seccomp::programs().map_err(ProcessError::Sandbox)?
        } else {
            Vec::new()
        };
        let state_dir =
            StateDir::open(&state_dir).map_err(|e| io_err("opening the state directory", e))?;
        let lifeline = lifeline::read_end().map_err(|e| io_err("creating the lifeline pipe", e))?;
        let root_spec = RootSpec {
            readable: policy.readable.clone(),
            writable: bound,
            protected: policy.protect.clone(),
            hidden: policy.hide.clone(),
            no_exec: policy.no_exec.clone(),
            network: policy.network,
            tmp_mib: policy.limits.tmp_size.div_ceil(1 << 20),
            fallback_cwd: policy
                .writable
                .first()
                .cloned()
                .unwrap_or_else(|| temp.clone()),
            home: passwd_home().map(|home| (temp.clone(), home)),
        };
        let watched = root_spec.watched();
        let mut plan = Plan::new(&layers, filters, lifeline, &root_spec);
        plan.cgroup_procs = group_procs;
        // The session's network namespace is the spawner's to make (a fork
        // of a small process: see `shared_net.rs`); processes the host
        // starts itself each make their own.
        let spawner = spawner.filter(|spawner| {
            spawner
                .init(&plan, &grant)
                .map_err(|e| tracing::debug!("the spawner did not take the plan: {e}"))
                .is_ok()
        });
        let plan = Arc::new(plan);
        let base_env = env::build(&temp, &policy.env, &[]);
        Ok(Sandbox {
            ctx: Context {
                plan,
                grant,
                registry: Arc::new(Registry::default()),
                spawner: Slot::with(spawner, watched),
            },
            base_env,
            temp,
            state_dir,
            shells: Mutex::new(HashMap::new()),
            jobs: Mutex::new(BTreeMap::new()),
            job_counter: AtomicU64::new(0),
            policy,
            group,
            _root: root,
        })
    }

    /// The session's private temp directory (HOME and TMPDIR of every
    /// process; removed when the sandbox is dropped).
    pub fn temp_dir(&self) -> &Path {
        &self.temp
    }

    fn default_cwd(&self) -> PathBuf {
        self.policy
            .writable
            .first()
            .cloned()
            .unwrap_or_else(|| self.temp.clone())
    }

    fn cap(&self) -> usize {
        self.policy.limits.max_output_bytes
    }

    /// What `cmd` runs as, with stdin piped when `stdin` says so
    /// (`cmd.stdin` and `cmd.timeout` are the caller's to use).
    fn command_spec(&self, cmd: Command, stdin: bool) -> Spec {
        Spec {
            // A relative cwd is taken from the workspace, not the host's cwd.
            cwd: match &cmd.cwd {
                Some(dir) => self.default_cwd().join(dir),
                None => self.default_cwd(),
            },
            env: env::build(&self.temp, &self.policy.env, &cmd.env),
            program: cmd.program,
            args: cmd.args,
            stdin,
        }
    }

    /// Runs one program to completion.
    pub async fn run(&self, mut cmd: Command) -> Result<Output, ProcessError> {
        let (stdin, timeout) = (cmd.stdin.take(), cmd.timeout);
        let spec = self.command_spec(cmd, stdin.is_some());
        let kills = self.oom_kills();
        let running = exec::spawn(&self.ctx, spec)?;
        let mut output = exec::finish(running, stdin, timeout, self.cap()).await?;
        self.explain_limits(kills, &mut output.stderr);
        Ok(output)
    }

    /// Starts one program with its stdin and stdout attached to the host,
    /// for as long as it runs (see [`Attached`]). `cmd.stdin` and
    /// `cmd.timeout` do not apply: the caller writes, reads and kills.
    pub fn attach(&self, cmd: Command) -> Result<Attached, ProcessError> {
        let running = exec::spawn(&self.ctx, self.command_spec(cmd, true))?;
        Attached::start(running, self.cap())
    }

    /// Whether the session's processes share one process and memory limit
    /// (a control group this host could make), besides each process's own.
    pub fn shares_limits(&self) -> bool {
        self.group.is_some()
    }

    /// Processes the session's memory limit has killed so far.
    fn oom_kills(&self) -> u64 {
        self.group.as_ref().map_or(0, SessionGroup::oom_kills)
    }

    /// Says in `out` when the session's memory limit killed a process
    /// since there were `kills_before`: otherwise the command just died of
    /// SIGKILL, with nothing to tell why.
    fn explain_limits(&self, kills_before: u64, out: &mut Vec<u8>) {
        if self.oom_kills() > kills_before {
            let note = format!(
                "\n[kaizen: the session's programs reached their memory limit of {} MiB \
                 together, and the kernel stopped one; use less memory at once]\n",
                self.policy.limits.max_memory >> 20
            );
            out.extend_from_slice(note.as_bytes());
        }
    }

    /// The state of shell `name` (a fresh one starts in the workspace with
    /// the safe environment).
    fn shell_state(&self, name: &str) -> ShellState {
        let mut state = lock(&self.shells)
            .get(name)
            .cloned()
            .unwrap_or_else(|| ShellState {
                cwd: self.default_cwd(),
                env: self.base_env.clone(),
            });
        if !state.cwd.is_dir() {
            // The directory was removed since: start over in the workspace.
            state.cwd = self.default_cwd();
        }
        state
    }

    /// Prepares `bash -c <wrapper>`, with the script file to remove
    /// afterwards if the script was too long for the command line.
    fn shell_spec(
        &self,
        state: &ShellState,
        script: &str,
        state_file: Option<&Path>,
    ) -> Result<(Spec, Option<StateFile>), ProcessError> {
        let (text, script_file) =
            if script.len() > shell::MAX_INLINE_SCRIPT || script.contains('\0') {
                let file = self
                    .state_dir
                    .create("script", script.as_bytes())
                    .map_err(|e| ProcessError::Failed(format!("writing the script file: {e}")))?;
                (
                    shell::wrapper(Body::File(file.path()), state_file),
                    Some(file),
                )
            } else {
                (shell::wrapper(Body::Inline(script), state_file), None)
            };
        let spec = Spec {
            program: BASH.into(),
            args: vec!["-c".into(), text],
            cwd: state.cwd.clone(),
            env: state.env.clone(),
            stdin: false,
        };
        Ok((spec, script_file))
    }

    /// Runs `script` in the persistent shell `shell`: a fresh sandboxed bash
    /// that starts in the shell's last directory with its exported
    /// variables, and saves both for the next call. stderr is merged into
    /// stdout, in order.
    ///
    /// Each call is its own PID namespace: processes left running with `&`
    /// are killed when the call returns. Use [`Sandbox::spawn`] to keep
    /// something running.
    pub async fn shell_run(
        &self,
        shell: &str,
        script: &str,
        timeout: Option<Duration>,
    ) -> Result<Output, ProcessError> {
        let state = self.shell_state(shell);
        // The shell creates the file in its EXIT trap (see `StateDir::reserve`).
        let state_file = self
            .state_dir
            .reserve("state")
            .map_err(|e| ProcessError::Failed(format!("naming the shell state file: {e}")))?;
        let (spec, script_file) = self.shell_spec(&state, script, Some(state_file.path()))?;
        let kills = self.oom_kills();
        let result = match exec::spawn(&self.ctx, spec) {
            Ok(running) => {
                exec::finish(running, None, timeout, self.cap())
                    .await
                    .map(|mut output| {
                        // A shell's stderr is merged into its stdout.
                        self.explain_limits(kills, &mut output.stdout);
                        output
                    })
            }
            Err(e) => Err(e),
        };
        drop(script_file);
        let saved = state_file.read();
        drop(state_file);
        if let Some((cwd, env)) = saved.as_deref().and_then(shell::parse_state) {
            let mut shells = lock(&self.shells);
            let entry = shells.entry(shell.to_string()).or_insert(state);
            if let Some(cwd) = cwd {
                entry.cwd = cwd;
            }
            entry.env = env;
        }
        result
    }

    /// Starts `script` in the background, like [`Sandbox::shell_run`] (same
    /// directory and variables, no timeout, stdout and stderr kept apart),
    /// and returns its id at once: the shell name, `_`, a counter.
    pub async fn spawn(&self, shell: &str, script: &str) -> Result<String, ProcessError> {
        let state = self.shell_state(shell);
        let (spec, script_file) = self.shell_spec(&state, script, None)?;
        // On failure the script file goes with the error.
        let running = exec::spawn(&self.ctx, spec)?;
        let id = format!(
            "{shell}_{}",
            self.job_counter.fetch_add(1, Ordering::Relaxed) + 1
        );
        let job = Job::start(running, self.cap(), script_file);
        lock(&self.jobs).insert(id.clone(), job);
        Ok(id)
    }

    fn job(&self, id: &str) -> Result<Arc<Job>, ProcessError> {
        let jobs = lock(&self.jobs);
        jobs.get(id).cloned().ok_or_else(|| {
            let known: Vec<&str> = jobs.keys().map(String::as_str).collect();
            let known = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            ProcessError::UnknownId(format!("{id} (known ids: {known})"))
        })
    }

    /// Output of a background job since the last read, and its state.
    pub fn read_job(&self, id: &str) -> Result<JobOutput, ProcessError> {
        Ok(self.job(id)?.read())
    }

    /// Kills a background job and everything it started; returns once it is
    /// gone (its state is then [`crate::JobState::Killed`], unless it had
    /// already exited).
    pub async fn kill_job(&self, id: &str) -> Result<(), ProcessError> {
        self.job(id)?.kill().await;
        Ok(())
    }

    /// Kills every job and running command of the session and waits for the
    /// jobs to be gone.
    pub async fn shutdown(&self) {
        self.ctx.registry.kill_all();
        let jobs: Vec<Arc<Job>> = lock(&self.jobs).values().cloned().collect();
        for job in jobs {
            job.kill().await;
        }
    }
}

impl Drop for Sandbox {
    /// Kills everything synchronously (SIGKILL to every intermediate; the
    /// namespaces die with them).
    fn drop(&mut self) {
        // Jobs are registered too. The short wait lets the namespaces start
        // dying before the private directory is removed.
        self.ctx.registry.kill_all_and_wait(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::FeatureSupport;
    use crate::types::Limits;

    fn report_without(missing: Feature) -> SupportReport {
        let all = [
            Feature::Landlock,
            Feature::UserNamespace,
            Feature::PidNamespace,
            Feature::NetworkNamespace,
            Feature::MountNamespace,
            Feature::Seccomp,
            Feature::Rlimits,
            Feature::FullSandbox,
        ];
        SupportReport {
            kernel: "5.4.0".into(),
            features: all
                .into_iter()
                .map(|feature| FeatureSupport {
                    feature,
                    supported: feature != missing,
                    detail: if feature == missing {
                        "not built into this kernel".into()
                    } else {
                        "ok".into()
                    },
                })
                .collect(),
        }
    }

    fn policy(network: bool, allow_degraded: bool) -> Policy {
        Policy {
            writable: Vec::new(),
            readable: Vec::new(),
            network,
            env: Vec::new(),
            protect: Vec::new(),
            hide: Vec::new(),
            no_exec: Vec::new(),
            limits: Limits::default(),
            allow_degraded,
        }
    }

    #[test]
    fn missing_landlock_fails_closed_with_a_way_out() {
        let err =
            choose_layers(&policy(false, false), &report_without(Feature::Landlock)).unwrap_err();
        let ProcessError::Sandbox(msg) = err else {
            panic!("{err:?}")
        };
        assert!(
            msg.starts_with("Landlock is not available (kernel 5.4.0: not built into"),
            "{msg}"
        );
        assert!(msg.contains("allow_degraded"), "{msg}");
    }

    #[test]
    fn degraded_mode_runs_without_the_missing_layer() {
        let layers =
            choose_layers(&policy(false, true), &report_without(Feature::Landlock)).unwrap();
        assert!(
            !layers.landlock && layers.user_ns && layers.pid_ns && layers.net_ns && layers.seccomp
        );
        let layers = choose_layers(
            &policy(false, true),
            &report_without(Feature::UserNamespace),
        )
        .unwrap();
        assert!(
            !layers.user_ns
                && !layers.pid_ns
                && !layers.net_ns
                && !layers.mount_proc
                && layers.landlock
        );
    }

    #[test]
    fn network_namespaces_matter_only_without_network() {
        let report = report_without(Feature::NetworkNamespace);
        assert!(choose_layers(&policy(false, false), &report).is_err());
        let layers = choose_layers(&policy(true, false), &report).unwrap();
        assert!(!layers.net_ns && layers.pid_ns);
    }
}
