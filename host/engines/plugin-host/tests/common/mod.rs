//! Shared setup for the plugin host's integration tests: real components
//! built from `tests/plugins`, loaded through the real host.

#![allow(dead_code)]

use kaizen_plugin_host::interaction::{Interaction, NoUser};
use kaizen_plugin_host::{
    GrantPolicy, HostOptions, LoadError, LoadedPlugin, Location, Origin, Pin, PluginHost,
    PluginSet, PluginSource,
};
use kaizen_tools::{CallContext, ToolError, ToolOutput, ToolRegistry};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A workspace, a cache and a host, all in temporary directories.
pub struct Harness {
    pub workspace: TempDir,
    pub scratch: TempDir,
    pub host: PluginHost,
    pub policy: GrantPolicy,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_interaction(Arc::new(NoUser))
    }

    /// A harness whose `interaction` calls go to `interaction`. Compiled
    /// components are cached in one directory for all tests: compiling the
    /// Python plugin takes seconds, and the cache is safe to share.
    pub fn with_interaction(interaction: Arc<dyn Interaction>) -> Self {
        let shared = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache");
        Self::build(interaction, Some(shared))
    }

    /// A harness with a cache of its own, for tests of the cache itself.
    pub fn with_private_cache() -> Self {
        Self::build(Arc::new(NoUser), None)
    }

    fn build(interaction: Arc<dyn Interaction>, cache: Option<PathBuf>) -> Self {
        let workspace = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let host = PluginHost::new(HostOptions {
            cache_dir: Some(cache.unwrap_or_else(|| scratch.path().join("cache"))),
            interaction,
            ..HostOptions::default()
        })
        .unwrap();
        let policy = GrantPolicy::new(workspace.path().canonicalize().unwrap());
        Self {
            workspace,
            scratch,
            host,
            policy,
        }
    }

    pub fn workspace(&self) -> PathBuf {
        self.workspace.path().canonicalize().unwrap()
    }

    /// A plugin directory holding test plugin `wasm_of`'s component under
    /// the given manifest text.
    pub fn custom_plugin(&self, dir_name: &str, wasm_of: &str, manifest: &str) -> PathBuf {
        let dir = self.scratch.path().join("plugins").join(dir_name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            kaizen_test_artifacts::wasm(wasm_of),
            dir.join("component.wasm"),
        )
        .unwrap();
        std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
        dir
    }

    pub async fn load_dir(&self, dir: &Path) -> Result<LoadedPlugin, LoadError> {
        self.host.load(&source(dir), &self.policy).await
    }

    /// Loads the stock test plugin `name`, panicking on failure.
    pub async fn load(&self, name: &str) -> LoadedPlugin {
        match self
            .load_dir(&kaizen_test_artifacts::plugin_dir(name))
            .await
        {
            Ok(plugin) => plugin,
            Err(err) => panic!("loading {name}: {err}"),
        }
    }

    /// The registry of the given stock plugins.
    pub async fn registry(&self, names: &[&str]) -> ToolRegistry {
        let sources: Vec<PluginSource> = names
            .iter()
            .map(|name| source(&kaizen_test_artifacts::plugin_dir(name)))
            .collect();
        let set = PluginSet::load(&self.host, &sources, &self.policy).await;
        if let Some(failure) = set.failed.first() {
            panic!("{}: {}", failure.source.label(), failure.error);
        }
        set.registry
    }

    pub fn ctx(&self, session: &str) -> CallContext {
        CallContext {
            session_id: session.into(),
            call_id: "call-1".into(),
            workspace: self.workspace(),
            cwd: self.workspace(),
            notes: Default::default(),
            sub_agents: Default::default(),
            completions: Default::default(),
            history: Default::default(),
        }
    }
}

/// A registry of `plugin`'s tools.
pub fn registry_of(plugin: &LoadedPlugin) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register_all(plugin.tool_handles()).unwrap();
    registry
}

pub fn source(dir: &Path) -> PluginSource {
    PluginSource {
        origin: Origin::Flag,
        location: Location::Dir(dir.to_path_buf()),
        pin: Pin::Unpinned,
    }
}

/// Manifest text for a tool plugin using `component.wasm`.
pub fn manifest(name: &str, extra: &str) -> String {
    format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\ncontract = \"0.1.0\"\nkinds = [\"tool\"]\ncomponent = \"component.wasm\"\n{extra}\n"
    )
}

pub fn text(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Ok(output) => output.joined_text(),
        Err(err) => panic!("tool failed: {:?}: {}", err.kind, err.message),
    }
}

pub fn error(result: Result<ToolOutput, ToolError>) -> ToolError {
    match result {
        Ok(output) => panic!("expected an error, got {:?}", output.joined_text()),
        Err(err) => err,
    }
}

/// A loopback HTTP server answering every request `200 OK` with the body
/// `answer` gives for the request's head; counts the requests it served.
pub async fn serve_http(answer: fn(&str) -> String) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let body = answer(&String::from_utf8_lossy(&request));
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (port, hits)
}
