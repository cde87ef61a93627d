//! The spawner's messages, byte for byte: what the host sends (the plan
//! once, then one request per process) and what the spawner answers.
//!
//! Both ends are the same binary, so the format only has to be unambiguous,
//! not stable: little-endian integers, length-prefixed byte strings, one
//! message per `SOCK_SEQPACKET` datagram. Decoding still checks every length
//! and refuses trailing bytes, so a short or garbled message is an error,
//! never a misread plan.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::exec::Spec;
use crate::landlock_rules::FsGrant;
use crate::plan::{Plan, RootPlan};
use crate::root::RootStep;

/// What a message is; its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// Host → spawner, first: the session's control groups to join
    /// (`cgroup.procs` files).
    Join = 3,
    /// Host → spawner, second: the plan and the grant.
    Init = 1,
    /// Host → spawner: start one process ([`Spec`]); its stdin (when
    /// piped), stdout and stderr ride along.
    Spawn = 2,
    /// Spawner → host: ready for requests.
    Ready = 10,
    /// Spawner → host: the plan could not be taken up (a message).
    InitFailed = 11,
    /// Spawner → host: started, with its PID; its pidfd rides along.
    Started = 12,
    /// Spawner → host: could not start (an OS error number, or -1 and a
    /// message).
    Failed = 13,
    /// Spawner → host: ended, with its raw wait status.
    Exited = 14,
}

impl Kind {
    fn from_byte(byte: u8) -> Option<Kind> {
        Some(match byte {
            1 => Kind::Init,
            2 => Kind::Spawn,
            3 => Kind::Join,
            10 => Kind::Ready,
            11 => Kind::InitFailed,
            12 => Kind::Started,
            13 => Kind::Failed,
            14 => Kind::Exited,
            _ => return None,
        })
    }
}

/// A message that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed spawner message: {0}")]
pub(crate) struct Malformed(pub(crate) &'static str);

/// Builds one message.
#[derive(Debug)]
pub(crate) struct Writer(Vec<u8>);

impl Writer {
    /// A message of `kind` about request `id` (0 when none).
    pub(crate) fn new(kind: Kind, id: u64) -> Writer {
        let mut buf = Vec::with_capacity(256);
        buf.push(kind as u8);
        buf.extend_from_slice(&id.to_le_bytes());
        Writer(buf)
    }

    pub(crate) fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }

    pub(crate) fn bool(&mut self, v: bool) -> &mut Self {
        self.u8(v as u8)
    }

    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
        self
    }

    fn count(&mut self, n: usize) -> &mut Self {
        self.u32(n as u32)
    }

    /// The message's bytes.
    pub(crate) fn finish(self) -> Vec<u8> {
        self.0
    }
}

/// Reads one message.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// The message's kind and request id, and a reader of its body.
    pub(crate) fn open(msg: &'a [u8]) -> Result<(Kind, u64, Reader<'a>), Malformed> {
        let mut r = Reader { rest: msg };
        let kind = Kind::from_byte(r.u8()?).ok_or(Malformed("unknown kind"))?;
        let id = r.u64()?;
        Ok((kind, id, r))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.rest.len() < n {
            return Err(Malformed("truncated"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn bool(&mut self) -> Result<bool, Malformed> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Malformed("not a boolean")),
        }
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn i32(&mut self) -> Result<i32, Malformed> {
        Ok(self.u32()? as i32)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, Malformed> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    /// A count of items that each take at least `min_size` bytes: bounded
    /// by what is left, so a garbled count cannot make a huge allocation.
    fn count(&mut self, min_size: usize) -> Result<usize, Malformed> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_size.max(1)) > self.rest.len() {
            return Err(Malformed("count beyond the message"));
        }
        Ok(n)
    }

    pub(crate) fn cstring(&mut self) -> Result<CString, Malformed> {
        CString::new(self.bytes()?).map_err(|_| Malformed("NUL inside a string"))
    }

    pub(crate) fn string(&mut self) -> Result<String, Malformed> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| Malformed("not UTF-8"))
    }

    fn path(&mut self) -> Result<PathBuf, Malformed> {
        Ok(PathBuf::from(std::ffi::OsString::from_vec(
            self.cstring()?.into_bytes(),
        )))
    }

    /// Ends the message: nothing may be left.
    pub(crate) fn end(self) -> Result<(), Malformed> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(Malformed("trailing bytes"))
        }
    }
}

fn put_cstr(w: &mut Writer, s: &CStr) {
    w.bytes(s.to_bytes());
}

fn put_path(w: &mut Writer, p: &Path) {
    w.bytes(p.as_os_str().as_bytes());
}

fn put_paths(w: &mut Writer, paths: &[PathBuf]) {
    w.count(paths.len());
    for p in paths {
        put_path(w, p);
    }
}

fn get_paths(r: &mut Reader) -> Result<Vec<PathBuf>, Malformed> {
    (0..r.count(4)?).map(|_| r.path()).collect()
}

/// Writes the control groups to join.
pub(crate) fn put_join(w: &mut Writer, procs: &[CString]) {
    w.count(procs.len());
    for p in procs {
        put_cstr(w, p);
    }
}

/// What [`put_join`] wrote.
pub(crate) fn get_join(r: &mut Reader) -> Result<Vec<CString>, Malformed> {
    (0..r.count(4)?).map(|_| r.cstring()).collect()
}

/// Writes the plan and the grant: not its lifeline (the spawner has its
/// own), its control groups (joined already: see [`put_join`]) or a shared
/// network namespace (the spawner makes the session's).
pub(crate) fn put_init(w: &mut Writer, plan: &Plan, grant: &FsGrant) {
    w.i32(plan.unshare_flags)
        .bool(plan.user_ns)
        .bytes(&plan.uid_map)
        .bytes(&plan.gid_map)
        .bool(plan.private_mounts)
        .bool(plan.mount_proc)
        .bool(plan.mask_run);
    w.count(plan.secrets.len());
    for (path, dir) in &plan.secrets {
        put_cstr(w, path);
        w.bool(*dir);
    }
    match &plan.pid_max {
        Some(v) => w.bool(true).bytes(v),
        None => w.bool(false),
    };
    w.count(plan.rlimits.len());
    for (resource, soft, hard) in &plan.rlimits {
        w.u32(*resource).u64(*soft).u64(*hard);
    }
    w.i32(plan.cap_last)
        .bool(plan.landlock)
        .u64(plan.proc_access);
    w.count(plan.seccomp.len());
    for program in &plan.seccomp {
        w.count(program.len());
        for ins in program {
            w.u32(ins.code as u32).u8(ins.jt).u8(ins.jf).u32(ins.k);
        }
    }
    match &plan.root {
        Some(root) => {
            w.bool(true);
            w.count(root.steps.len());
            for step in &root.steps {
                put_step(w, step);
            }
            w.u64(root.private_access);
            put_cstr(w, &root.fallback_cwd);
        }
        None => {
            w.bool(false);
        }
    }
    put_paths(w, &grant.read);
    put_paths(w, &grant.write);
    w.bool(grant.network);
    w.bool(plan.warm);
}

/// What [`put_init`] wrote: the plan (with `lifeline`, no control groups
/// and no shared network yet) and the grant.
pub(crate) fn get_init(
    r: &mut Reader,
    lifeline: std::os::fd::RawFd,
) -> Result<(Plan, FsGrant), Malformed> {
    let unshare_flags = r.i32()?;
    let user_ns = r.bool()?;
    let uid_map = r.bytes()?.to_vec();
    let gid_map = r.bytes()?.to_vec();
    let private_mounts = r.bool()?;
    let mount_proc = r.bool()?;
    let mask_run = r.bool()?;
    let secrets = (0..r.count(5)?)
        .map(|_| Ok((r.cstring()?, r.bool()?)))
        .collect::<Result<_, Malformed>>()?;
    let pid_max = if r.bool()? {
        Some(r.bytes()?.to_vec())
    } else {
        None
    };
    let rlimits = (0..r.count(20)?)
        .map(|_| Ok((r.u32()?, r.u64()?, r.u64()?)))
        .collect::<Result<_, Malformed>>()?;
    let cap_last = r.i32()?;
    let landlock = r.bool()?;
    let proc_access = r.u64()?;
    let seccomp = (0..r.count(4)?)
        .map(|_| {
            (0..r.count(10)?)
                .map(|_| {
                    let code = u16::try_from(r.u32()?).map_err(|_| Malformed("BPF code"))?;
                    Ok(libc::sock_filter {
                        code,
                        jt: r.u8()?,
                        jf: r.u8()?,
                        k: r.u32()?,
                    })
                })
                .collect::<Result<Vec<_>, Malformed>>()
        })
        .collect::<Result<_, Malformed>>()?;
    let root = if r.bool()? {
        let steps = (0..r.count(5)?)
            .map(|_| get_step(r))
            .collect::<Result<_, Malformed>>()?;
        Some(RootPlan {
            steps,
            private_access: r.u64()?,
            fallback_cwd: r.cstring()?,
            refresh: None,
        })
    } else {
        None
    };
    let grant = FsGrant {
        read: get_paths(r)?,
        write: get_paths(r)?,
        network: r.bool()?,
    };
    let warm = r.bool()?;
    let plan = Plan {
        unshare_flags,
        user_ns,
        uid_map,
        gid_map,
        private_mounts,
        mount_proc,
        mask_run,
        secrets,
        pid_max,
        rlimits,
        cap_last,
        landlock,
        proc_access,
        seccomp,
        lifeline,
        root,
        cgroup_procs: Vec::new(),
        shared_net: None,
        zygote: false,
        warm,
    };
    Ok((plan, grant))
}

fn put_step(w: &mut Writer, step: &RootStep) {
    match step {
        RootStep::Dir(to) => {
            w.u8(0);
            put_cstr(w, to);
        }
        RootStep::Symlink { target, link } => {
            w.u8(1);
            put_cstr(w, target);
            put_cstr(w, link);
        }
        RootStep::File(to) => {
            w.u8(2);
            put_cstr(w, to);
        }
        RootStep::Bind {
            from,
            to,
            read_only,
            devices,
        } => {
            w.u8(3);
            put_cstr(w, from);
            put_cstr(w, to);
            w.bool(*read_only).bool(*devices);
        }
        RootStep::Tmpfs {
            to,
            data,
            read_only,
        } => {
            w.u8(4);
            put_cstr(w, to);
            put_cstr(w, data);
            w.bool(*read_only);
        }
        RootStep::Proc(to) => {
            w.u8(5);
            put_cstr(w, to);
        }
    }
}

fn get_step(r: &mut Reader) -> Result<RootStep, Malformed> {
    Ok(match r.u8()? {
        0 => RootStep::Dir(r.cstring()?),
        1 => RootStep::Symlink {
            target: r.cstring()?,
            link: r.cstring()?,
        },
        2 => RootStep::File(r.cstring()?),
        3 => RootStep::Bind {
            from: r.cstring()?,
            to: r.cstring()?,
            read_only: r.bool()?,
            devices: r.bool()?,
        },
        4 => RootStep::Tmpfs {
            to: r.cstring()?,
            data: r.cstring()?,
            read_only: r.bool()?,
        },
        5 => RootStep::Proc(r.cstring()?),
        _ => return Err(Malformed("unknown root step")),
    })
}

/// Writes one process's request.
pub(crate) fn put_spec(w: &mut Writer, spec: &Spec) {
    w.bytes(spec.program.as_bytes());
    w.count(spec.args.len());
    for arg in &spec.args {
        w.bytes(arg.as_bytes());
    }
    put_path(w, &spec.cwd);
    w.count(spec.env.len());
    for (k, v) in &spec.env {
        w.bytes(k.as_bytes()).bytes(v.as_bytes());
    }
    w.bool(spec.stdin);
}

/// What [`put_spec`] wrote.
pub(crate) fn get_spec(r: &mut Reader) -> Result<Spec, Malformed> {
    let program = r.string()?;
    let args = (0..r.count(4)?)
        .map(|_| r.string())
        .collect::<Result<_, Malformed>>()?;
    let cwd = r.path()?;
    let env = (0..r.count(8)?)
        .map(|_| Ok((r.string()?, r.string()?)))
        .collect::<Result<_, Malformed>>()?;
    Ok(Spec {
        program,
        args,
        cwd,
        env,
        stdin: r.bool()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::RootSpec;

    fn plan() -> Plan {
        let layers = crate::features::full_layers();
        let filters = vec![vec![
            libc::sock_filter {
                code: 0x20,
                jt: 1,
                jf: 2,
                k: 4,
            },
            libc::sock_filter {
                code: 0x06,
                jt: 0,
                jf: 0,
                k: 0x7fff_0000,
            },
        ]];
        let root = RootSpec {
            readable: vec!["/srv/ref".into()],
            writable: vec!["/srv/ws".into()],
            protected: vec!["/srv/ws/.git/hooks".into()],
            hidden: vec!["/srv/ws/.env".into()],
            tmp_mib: 64,
            fallback_cwd: "/srv/ws".into(),
            ..Default::default()
        };
        let mut plan = Plan::new(&layers, filters, 7, &root);
        plan.cgroup_procs = vec![c"/sys/fs/cgroup/pids/k/cgroup.procs".into()];
        plan
    }

    fn grant() -> FsGrant {
        FsGrant {
            read: vec!["/srv/ref".into()],
            write: vec!["/srv/ws".into(), "/tmp/kaizen-sandbox-x".into()],
            network: false,
        }
    }

    fn init_bytes(plan: &Plan, grant: &FsGrant) -> Vec<u8> {
        let mut w = Writer::new(Kind::Init, 0);
        put_init(&mut w, plan, grant);
        w.finish()
    }

    #[test]
    fn the_plan_and_grant_come_back_as_they_were_sent() {
        let (plan, grant) = (plan(), grant());
        let bytes = init_bytes(&plan, &grant);
        let (kind, id, mut r) = Reader::open(&bytes).unwrap();
        assert_eq!((kind, id), (Kind::Init, 0));
        let (back, back_grant) = get_init(&mut r, 9).unwrap();
        r.end().unwrap();
        assert_eq!(back.lifeline, 9);
        // Debug covers every field (the lifeline aside, which is local,
        // and the control groups, which travel in `Join`).
        let mut expected = plan;
        expected.lifeline = 9;
        expected.cgroup_procs.clear();
        assert_eq!(format!("{back:?}"), format!("{expected:?}"));
        assert_eq!(format!("{back_grant:?}"), format!("{grant:?}"));
    }

    #[test]
    fn the_control_groups_come_back_as_they_were_sent() {
        let procs = plan().cgroup_procs;
        let mut w = Writer::new(Kind::Join, 0);
        put_join(&mut w, &procs);
        let bytes = w.finish();
        let (kind, _, mut r) = Reader::open(&bytes).unwrap();
        assert_eq!(kind, Kind::Join);
        assert_eq!(get_join(&mut r).unwrap(), procs);
        r.end().unwrap();
    }

    #[test]
    fn a_spec_comes_back_as_it_was_sent() {
        let spec = Spec {
            program: "/bin/bash".into(),
            args: vec!["-c".into(), "echo 'ü'; exit 3".into()],
            cwd: "/srv/ws/sub dir".into(),
            env: vec![
                ("PATH".into(), "/usr/bin".into()),
                ("EMPTY".into(), "".into()),
            ],
            stdin: true,
        };
        let mut w = Writer::new(Kind::Spawn, 42);
        put_spec(&mut w, &spec);
        let bytes = w.finish();
        let (kind, id, mut r) = Reader::open(&bytes).unwrap();
        assert_eq!((kind, id), (Kind::Spawn, 42));
        let back = get_spec(&mut r).unwrap();
        r.end().unwrap();
        assert_eq!(format!("{back:?}"), format!("{spec:?}"));
    }

    #[test]
    fn every_truncation_of_a_message_is_refused() {
        let bytes = init_bytes(&plan(), &grant());
        for len in 0..bytes.len() {
            let refused = Reader::open(&bytes[..len])
                .and_then(|(_, _, mut r)| get_init(&mut r, 3).map(|_| r))
                .and_then(Reader::end);
            assert!(refused.is_err(), "a message cut at {len} bytes was taken");
        }
    }

    #[test]
    fn trailing_bytes_unknown_kinds_and_huge_counts_are_refused() {
        let mut bytes = init_bytes(&plan(), &grant());
        bytes.push(0);
        let (_, _, mut r) = Reader::open(&bytes).unwrap();
        get_init(&mut r, 3).unwrap();
        assert_eq!(r.end(), Err(Malformed("trailing bytes")));

        assert!(Reader::open(&[99, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());

        let mut w = Writer::new(Kind::Spawn, 1);
        w.bytes(b"true").u32(u32::MAX);
        let bytes = w.finish();
        let (_, _, mut r) = Reader::open(&bytes).unwrap();
        assert_eq!(
            get_spec(&mut r).unwrap_err(),
            Malformed("count beyond the message")
        );
    }

    #[test]
    fn a_nul_inside_a_path_is_refused() {
        let mut w = Writer::new(Kind::Spawn, 1);
        w.bytes(b"true").u32(0).bytes(b"/srv\0/ws");
        let bytes = w.finish();
        let (_, _, mut r) = Reader::open(&bytes).unwrap();
        assert_eq!(
            get_spec(&mut r).unwrap_err(),
            Malformed("NUL inside a string")
        );
    }
}
