use super::*;
use crate::grant::GrantPolicy;
use crate::limits::Limits;
use crate::origin::Origin;

fn request(text: &str) -> Capabilities {
    toml::from_str(text).unwrap()
}

const EVERYTHING: &str = r#"
    filesystem = [{ path = "$WORKSPACE", access = "read-only" }]
    process = { programs = ["git", "bash"], network = true }
    http = ["api.example.com", "*.test"]
    env = ["LANG"]
    interaction = true
    agent = true
    llm = true
    parallel = true
    data-dir = true
"#;

fn everything_granted() -> EffectiveGrant {
    let mut policy = GrantPolicy::new("/ws");
    policy.data_root = Some("/home/me/.kaizen/data".into());
    policy.grants.insert("p".into(), request(EVERYTHING));
    policy.effective("p", Origin::Flag, &request(EVERYTHING), &Limits::default())
}

#[test]
fn a_request_is_described_a_line_per_item_in_registry_order() {
    assert_eq!(
        request(EVERYTHING).describe(),
        [
            "filesystem $WORKSPACE (read-only)",
            "process git, bash (with network)",
            "http api.example.com, *.test",
            "env LANG",
            "interaction",
            "agent",
            "llm",
            "parallel",
            "data-dir",
        ]
    );
    assert!(Capabilities::default().describe().is_empty());
}

#[test]
fn a_grant_is_described_with_what_was_resolved() {
    let grant = everything_granted();
    assert!(grant.denied.is_empty(), "{:?}", grant.denied);
    assert_eq!(
        grant.describe(),
        [
            "filesystem /ws (read-only)",
            "process git, bash (with network)",
            "http api.example.com, *.test",
            "env LANG",
            "interaction",
            "agent",
            "llm",
            "parallel",
            "data-dir /home/me/.kaizen/data/p",
        ]
    );
}

#[test]
fn requests_serialize_with_their_manifest_keys_and_only_what_is_asked() {
    let caps = request(EVERYTHING);
    let back: Capabilities = toml::from_str(&toml::to_string(&caps).unwrap()).unwrap();
    assert_eq!(back, caps);
    let json = serde_json::to_value(request("data-dir = true")).unwrap();
    assert_eq!(json, serde_json::json!({ "data-dir": true }));
    let err = toml::from_str::<Capabilities>("filesytem = []").unwrap_err();
    assert!(
        err.message().starts_with("unknown field `filesytem`"),
        "{err}"
    );
}

#[test]
fn a_grant_lists_every_capability_but_an_absent_data_dir() {
    let json = serde_json::to_value(EffectiveGrant::default()).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "agent",
            "denied",
            "env",
            "filesystem",
            "http",
            "interaction",
            "limits",
            "llm",
            "parallel",
            "process"
        ]
    );
    let json = serde_json::to_value(everything_granted()).unwrap();
    assert_eq!(
        json["http"],
        serde_json::json!(["api.example.com", "*.test"])
    );
    assert_eq!(json["data_dir"], "/home/me/.kaizen/data/p");
    assert_eq!(
        json["process"]["programs"],
        serde_json::json!(["git", "bash"])
    );
}

#[test]
fn capabilities_set_their_variables_after_the_granted_ones() {
    let grant = everything_granted();
    assert_eq!(
        grant.capability_env(),
        [
            (
                "KAIZEN_HTTP_ALLOW".to_string(),
                "api.example.com *.test".to_string()
            ),
            (
                "KAIZEN_DATA_DIR".to_string(),
                "/home/me/.kaizen/data/p".to_string()
            ),
        ]
    );
    assert!(EffectiveGrant::default().capability_env().is_empty());
}
