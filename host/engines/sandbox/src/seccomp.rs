//! The seccomp filters: system calls a tool never needs fail with `EPERM`.
//!
//! Four programs, installed in this order (the kernel applies the strictest
//! answer of all installed filters):
//! 1. x86_64 only, hand-built because seccompiler matches exact numbers: every
//!    x32-ABI call (number with bit 30 set) fails, so the x32 aliases of the
//!    denied calls cannot slip past the list.
//! 2. `clone3` fails with `ENOSYS`: its flags live in memory a filter cannot
//!    read, and on ENOSYS libc falls back to `clone`, whose flags it can.
//! 3. `socket` and `socketpair` fail with `EAFNOSUPPORT` for every address
//!    family but unix, IPv4, IPv6 and netlink: no tool needs a raw packet
//!    socket, `AF_VSOCK` (the hypervisor's side door), Bluetooth or the
//!    kernel's crypto and key sockets.
//! 4. The deny list, with `clone` denied only when it asks for a namespace.
//!
//! seccompiler also kills any call made through another architecture's ABI
//! (e.g. `int 0x80`), which no tool needs either.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

#[cfg(target_arch = "x86_64")]
const ARCH: Option<TargetArch> = Some(TargetArch::x86_64);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<TargetArch> = Some(TargetArch::aarch64);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: Option<TargetArch> = None;

/// Calls denied outright on every supported architecture.
const DENIED: &[libc::c_long] = &[
    // Reading or steering other processes.
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    // Changing what the filesystem looks like.
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    // Leaving the namespaces.
    libc::SYS_unshare,
    libc::SYS_setns,
    // The kernel itself.
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_lookup_dcookie,
    // Keyrings are not namespaced.
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    // Machine administration.
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_quotactl_fd,
    libc::SYS_syslog,
    libc::SYS_vhangup,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    // File handles bypass path-based checks.
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
];

/// Port I/O exists only on x86.
#[cfg(target_arch = "x86_64")]
const DENIED_ARCH: &[libc::c_long] = &[libc::SYS_iopl, libc::SYS_ioperm];
#[cfg(not(target_arch = "x86_64"))]
const DENIED_ARCH: &[libc::c_long] = &[];

/// `clone` flags that create namespaces. (`CLONE_NEWTIME` shares its bit with
/// the exit signal in `clone`'s flags, so it cannot be told apart there; it is
/// reachable only through `clone3` and `unshare`, both denied.)
const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// The address families a socket may have.
const SOCKET_FAMILIES: &[u32] = &[
    libc::AF_UNIX as u32,
    libc::AF_INET as u32,
    libc::AF_INET6 as u32,
    libc::AF_NETLINK as u32,
];

/// How many calls the deny list names (for the support report).
pub(crate) fn denied_count() -> usize {
    DENIED.len() + DENIED_ARCH.len() + 2
}

fn convert(program: BpfProgram) -> Vec<libc::sock_filter> {
    program
        .into_iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect()
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    action: SeccompAction,
    arch: TargetArch,
) -> Result<Vec<libc::sock_filter>, String> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, action, arch)
        .map_err(|e| format!("seccomp: {e}"))?;
    let program: BpfProgram = filter.try_into().map_err(|e| format!("seccomp: {e}"))?;
    Ok(convert(program))
}

/// Denies every x32 system call (x86_64 only).
#[cfg(target_arch = "x86_64")]
fn x32_filter() -> Vec<libc::sock_filter> {
    const X32_BIT: u32 = 0x4000_0000;
    let ld = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let jge = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    vec![
        // seccomp_data.nr is at offset 0.
        libc::sock_filter {
            code: ld,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: jge,
            jt: 0,
            jf: 1,
            k: X32_BIT,
        },
        libc::sock_filter {
            code: ret,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
        libc::sock_filter {
            code: ret,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ]
}

/// `socket`/`socketpair` with a family outside [`SOCKET_FAMILIES`] fail.
fn socket_families(arch: TargetArch) -> Result<Vec<libc::sock_filter>, String> {
    // One rule: the family is none of the allowed ones (conditions AND).
    let rule = || -> Result<SeccompRule, String> {
        let conditions = SOCKET_FAMILIES
            .iter()
            .map(|&family| {
                SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, family.into())
                    .map_err(|e| format!("seccomp: {e}"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        SeccompRule::new(conditions).map_err(|e| format!("seccomp: {e}"))
    };
    let rules = BTreeMap::from([
        (libc::SYS_socket, vec![rule()?]),
        (libc::SYS_socketpair, vec![rule()?]),
    ]);
    compile(rules, SeccompAction::Errno(libc::EAFNOSUPPORT as u32), arch)
}

/// Builds the programs, in installation order.
pub(crate) fn programs() -> Result<Vec<Vec<libc::sock_filter>>, String> {
    let arch = ARCH.ok_or("no seccomp filter for this CPU architecture")?;
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    out.push(x32_filter());

    let clone3 = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    out.push(compile(
        clone3,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?);

    out.push(socket_families(arch)?);

    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED
        .iter()
        .chain(DENIED_ARCH)
        .map(|&nr| (nr, Vec::new()))
        .collect();
    // One rule per flag: rules are ORed, conditions within a rule ANDed.
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            let cond = SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .map_err(|e| format!("seccomp: {e}"))?;
            SeccompRule::new(vec![cond]).map_err(|e| format!("seccomp: {e}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    out.push(compile(
        rules,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?);
    Ok(out)
}
