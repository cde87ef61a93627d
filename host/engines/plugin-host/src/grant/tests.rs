use super::*;
use crate::caps::filesystem::Preopen;
use crate::limits::EffectiveLimits;
use std::time::Duration;

fn request(text: &str) -> Capabilities {
    toml::from_str(text).unwrap()
}

fn policy() -> GrantPolicy {
    let mut policy = GrantPolicy::new("/work/ws");
    policy
        .extra_dirs
        .push(("/data/ref".into(), Access::ReadOnly));
    policy.grants.insert(
        "web".into(),
        request(
            r#"
            http = ["*.example.com", "127.0.0.1:8080"]
            env = ["LANG", "OPENAI_API_KEY"]
            process = { programs = ["git"], network = false }
            "#,
        ),
    );
    policy
}

#[test]
fn nothing_requested_means_nothing_granted() {
    let grant = policy().effective(
        "web",
        Origin::Flag,
        &Capabilities::default(),
        &Limits::default(),
    );
    assert!(grant.filesystem.is_empty());
    assert!(grant.http.is_empty());
    assert!(!grant.interaction);
    assert!(grant.denied.is_empty());
    assert_eq!(grant.limits, EffectiveLimits::default());
}

#[test]
fn filesystem_is_intersected_with_access_reduced() {
    let req = request(
        r#"filesystem = [
            { path = "$WORKSPACE/src", access = "read-write" },
            { path = "/data/ref/docs", access = "read-write" },
            { path = "/home/me", access = "read-only" },
        ]"#,
    );
    let grant = policy().effective("other", Origin::Flag, &req, &Limits::default());
    assert_eq!(
        grant.filesystem,
        vec![
            Preopen {
                path: "/work/ws/src".into(),
                access: Access::ReadWrite
            },
            Preopen {
                path: "/data/ref/docs".into(),
                access: Access::ReadOnly
            },
        ]
    );
    assert!(
        grant
            .denied
            .iter()
            .any(|d| d.contains("write access to /data/ref/docs"))
    );
    assert!(grant.denied.iter().any(|d| d.contains("/home/me")));
}

#[test]
fn http_patterns_must_be_covered() {
    let req = request(r#"http = ["api.example.com", "evil.com", "127.0.0.1:8080", "*"]"#);
    let grant = policy().effective("web", Origin::Flag, &req, &Limits::default());
    let kept: Vec<String> = grant.http.iter().map(|p| p.to_string()).collect();
    // `*` covers the whole grant, so it gets the grant (like directories).
    assert_eq!(kept, ["api.example.com", "127.0.0.1:8080", "*.example.com"]);
    assert!(grant.denied.contains(&"http: evil.com".to_string()));
    assert!(!grant.denied.contains(&"http: *".to_string()));
    // The same request from a plugin without a grant gets nothing.
    let grant = policy().effective("other", Origin::Flag, &req, &Limits::default());
    assert!(grant.http.is_empty());
}

#[test]
fn secrets_never_pass_even_when_granted() {
    let req = request(r#"env = ["LANG", "OPENAI_API_KEY", "HOME"]"#);
    let grant = policy().effective("web", Origin::Flag, &req, &Limits::default());
    assert_eq!(grant.env, ["LANG"]);
    assert!(
        grant
            .denied
            .iter()
            .any(|d| d.contains("OPENAI_API_KEY looks like a credential"))
    );
    assert!(grant.denied.contains(&"env: HOME".to_string()));
}

#[test]
fn process_programs_and_network() {
    let req = request(r#"process = { programs = ["git", "curl"], network = true }"#);
    let grant = policy().effective("web", Origin::Flag, &req, &Limits::default());
    let process = grant.process.unwrap();
    assert_eq!(process.programs, ["git"]);
    assert!(!process.network);
    assert!(
        grant
            .denied
            .contains(&"process: program `curl`".to_string())
    );
    assert!(
        grant
            .denied
            .contains(&"process: network access".to_string())
    );
}

#[test]
fn imports_flags_need_both_sides() {
    let req = request("interaction = true\nagent = true\nllm = true");
    let grant = policy().effective("x", Origin::Flag, &req, &Limits::default());
    assert!(grant.interaction, "interaction is granted by default");
    assert!(!grant.agent && !grant.llm);
    assert!(grant.denied.contains(&"agent: not granted".to_string()));
}

#[test]
fn limits_are_capped_by_the_operator() {
    let mut policy = policy();
    policy.max_memory_mib = 128;
    policy.max_cpu_seconds = 10.0;
    let limits = Limits {
        memory_mib: Some(512),
        cpu_seconds: Some(5.0),
    };
    let grant = policy.effective("x", Origin::Flag, &Capabilities::default(), &limits);
    assert_eq!(grant.limits.memory_bytes, 128 << 20);
    assert_eq!(grant.limits.cpu_time, Duration::from_secs(5));
    assert!(
        grant
            .denied
            .iter()
            .any(|d| d.contains("memory-mib 512 lowered"))
    );
}

#[test]
fn star_grant_applies_to_every_plugin() {
    let mut policy = policy();
    policy.grants.insert("*".into(), request(r#"env = ["TZ"]"#));
    let grant = policy.effective(
        "anyone",
        Origin::Flag,
        &request(r#"env = ["TZ"]"#),
        &Limits::default(),
    );
    assert_eq!(grant.env, ["TZ"]);
}

#[test]
fn a_broad_request_gets_the_granted_trees_inside_it() {
    let req = request(r#"filesystem = [{ path = "/", access = "read-only" }]"#);
    let grant = policy().effective("glob", Origin::Flag, &req, &Limits::default());
    assert_eq!(
        grant.filesystem,
        vec![
            Preopen {
                path: "/work/ws".into(),
                access: Access::ReadOnly
            },
            Preopen {
                path: "/data/ref".into(),
                access: Access::ReadOnly
            },
        ]
    );
    assert!(grant.denied.is_empty(), "{:?}", grant.denied);
}

#[test]
fn a_wide_http_request_gets_the_narrower_grant() {
    let req = request(r#"http = ["*"]"#);
    let grant = policy().effective("web", Origin::Flag, &req, &Limits::default());
    let kept: Vec<String> = grant.http.iter().map(|p| p.to_string()).collect();
    assert_eq!(kept, ["*.example.com", "127.0.0.1:8080"]);
    assert!(grant.denied.is_empty(), "{:?}", grant.denied);
    // A scheme in the request still binds: https-only requests do not get
    // the plain-http grant.
    let mut policy = policy();
    policy.grants.insert(
        "local".into(),
        request(r#"http = ["http://127.0.0.1:9000", "https://docs.rs"]"#),
    );
    let req = request(r#"http = ["https://*"]"#);
    let grant = policy.effective("local", Origin::Flag, &req, &Limits::default());
    let kept: Vec<String> = grant.http.iter().map(|p| p.to_string()).collect();
    assert_eq!(kept, ["https://docs.rs"]);
    // An exact host granted beside `*` is kept: it opens that host's
    // internal addresses, which `*` never does.
    policy.grants.insert(
        "both".into(),
        request(r#"http = ["*", "http://127.0.0.1:9000", "*.example.com"]"#),
    );
    let grant = policy.effective(
        "both",
        Origin::Flag,
        &request(r#"http = ["*"]"#),
        &Limits::default(),
    );
    let kept: Vec<String> = grant.http.iter().map(|p| p.to_string()).collect();
    assert_eq!(kept, ["*", "http://127.0.0.1:9000"]);
}

#[test]
fn http_credentials_go_to_plugins_that_reach_their_host() {
    let mut policy = policy();
    policy.http_credentials = vec![
        HttpCredential {
            host: "api.example.com".into(),
            header: "X-Key".into(),
            env: "EXAMPLE_KEY".into(),
            prefix: String::new(),
            plugins: vec!["web".into(), "other".into()],
        },
        HttpCredential {
            host: "other.org".into(),
            header: "X-Key".into(),
            env: "OTHER_KEY".into(),
            prefix: String::new(),
            plugins: vec!["web".into()],
        },
        // Names no plugin: goes to none.
        HttpCredential {
            host: "api.example.com".into(),
            header: "X-Unnamed".into(),
            env: "UNNAMED_KEY".into(),
            prefix: String::new(),
            plugins: Vec::new(),
        },
        HttpCredential {
            host: "api.example.com".into(),
            header: "Authorization".into(),
            env: "ONLY_FOR_SEARCH".into(),
            prefix: "Bearer ".into(),
            plugins: vec!["search".into()],
        },
    ];
    let req = request(r#"http = ["*"]"#);
    let grant = policy.effective("web", Origin::Flag, &req, &Limits::default());
    let envs: Vec<&str> = grant
        .http_credentials
        .iter()
        .map(|c| c.env.as_str())
        .collect();
    assert_eq!(envs, ["EXAMPLE_KEY"]);
    // Shown by name only.
    let shown = serde_json::to_value(&grant).unwrap();
    assert_eq!(shown["http_credentials"][0]["env"], "EXAMPLE_KEY");
    // A plugin without an HTTP grant gets none.
    let grant = policy.effective("other", Origin::Flag, &req, &Limits::default());
    assert!(grant.http_credentials.is_empty());
}

#[test]
fn a_workspace_plugin_gets_interaction_only_when_granted_it() {
    let req = request("interaction = true");
    let mut policy = policy();
    let from_workspace = policy.effective("repo", Origin::Workspace, &req, &Limits::default());
    assert!(!from_workspace.interaction);
    assert!(
        from_workspace
            .denied
            .contains(&"interaction: not granted".to_string())
    );
    assert!(
        policy
            .effective("mine", Origin::User, &req, &Limits::default())
            .interaction
    );
    policy
        .grants
        .insert("repo".into(), request("interaction = true"));
    assert!(
        policy
            .effective("repo", Origin::Workspace, &req, &Limits::default())
            .interaction
    );
}
