//! `check()` is truthful on this machine: everything the sandbox needs works.

#[test]
fn check_reports_everything_supported_here() {
    let report = kaizen_sandbox::check();
    println!("{report}");
    assert!(
        report.complete(),
        "this machine supports every feature:\n{report}"
    );
    assert_eq!(report.features.len(), 8);
    let landlock = report.get(kaizen_sandbox::Feature::Landlock).unwrap();
    assert!(landlock.detail.contains("ABI"), "{}", landlock.detail);
}
