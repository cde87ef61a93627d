//! `kaizen sandbox check`.

/// Prints what the machine supports; the exit code is 0 only when every
/// feature the sandbox uses is there.
pub fn check() -> u8 {
    let report = kaizen_sandbox::check();
    print!("{report}");
    if report.complete() {
        println!("The sandbox is complete on this machine.");
        0
    } else {
        println!(
            "Programs will not run until the missing features are available, unless the user's \
             config ($KAIZEN_HOME/config.toml) says `[sandbox] allow-degraded = true`."
        );
        1
    }
}
