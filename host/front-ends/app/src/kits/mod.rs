//! Plugin kits: `kaizen plugins new NAME --lang L` writes a project from
//! the language's template, and `kaizen plugins build [DIR]` builds it with
//! the language's toolchain (installed into a cache on first use, pinned)
//! and then loads the result the way a session will, so that what would
//! fail at run time fails here, with the fix.

mod c;
mod check;
pub mod embedded;
pub mod from_source;
mod js;
mod python;
mod rust;
mod toolchain;

use crate::notices::Notices;
use anyhow::{Context as _, bail};
use kaizen_plugin_host::{MANIFEST_FILE, Manifest, valid_plugin_name};
use kaizen_sandbox::Containment;
use std::path::{Path, PathBuf};

/// A language with a kit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// Rust, with the `kaizen-sdk` crate.
    Rust,
    /// Python, with componentize-py.
    Python,
    /// JavaScript or TypeScript, with jco and componentize-js.
    Js,
    /// C, with clang and the WASI sysroot.
    C,
}

impl Lang {
    /// The kit's directory under `sdk/`.
    fn kit(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::Python => "python",
            Self::Js => "js",
            Self::C => "c",
        }
    }

    /// An input the template's example tool takes.
    fn example_input(self) -> &'static str {
        match self {
            // The C template counts a file, like `wc`.
            Self::C => r#"{"path": "plugin.toml"}"#,
            Self::Rust | Self::Python | Self::Js => r#"{"text": "one two"}"#,
        }
    }

    /// The language of the project in `dir`, from the files its template
    /// writes.
    fn of_project(dir: &Path) -> anyhow::Result<Self> {
        if dir.join("Cargo.toml").is_file() {
            return Ok(Self::Rust);
        }
        if dir.join("app.py").is_file() {
            return Ok(Self::Python);
        }
        if std::iter::once(&"package.json")
            .chain(js::MODULES)
            .any(|file| dir.join(file).is_file())
        {
            return Ok(Self::Js);
        }
        let has_c = std::fs::read_dir(dir)?
            .filter_map(Result::ok)
            .any(|entry| entry.file_name().to_string_lossy().ends_with(".c"));
        if has_c {
            return Ok(Self::C);
        }
        bail!(
            "cannot tell what language the plugin in {} is written in: a Rust plugin has Cargo.toml, a Python one app.py, a JavaScript one package.json or tool.js, a C one *.c files; `kaizen plugins new NAME --lang LANG` writes a project that builds",
            dir.display()
        )
    }
}

/// What every kit's build needs: where the kits' files were extracted,
/// where toolchains are cached, and what confines every program a build
/// runs.
pub struct Kit {
    /// The extracted kits (`wit/`, `sdk/`).
    pub root: PathBuf,
    /// Where toolchains are installed.
    pub toolchains: PathBuf,
    /// Kaizen's state hidden, configuration read-only, the user's sandbox
    /// settings: each step adds only what it reaches.
    pub containment: Containment,
    /// Where the toolchain's own output and the build's notes go (the
    /// user reads a failed build's diagnostics there).
    pub notices: Notices,
}

/// The project being built.
pub struct Project {
    /// Its directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// Where the component goes (the manifest's `component`).
    pub output: PathBuf,
}

impl Project {
    /// Puts the built component `built` where the manifest says it is.
    fn take(&self, built: &Path) -> anyhow::Result<()> {
        std::fs::copy(built, &self.output)
            .with_context(|| format!("copying {} to {}", built.display(), self.output.display()))?;
        Ok(())
    }
}

/// `kaizen plugins new NAME --lang LANG [--dir DIR]`; what to tell the
/// user: what was made and the next steps.
pub fn new_project(name: &str, lang: Lang, dir: Option<&Path>) -> anyhow::Result<String> {
    if !valid_plugin_name(name) {
        bail!(
            "`{name}` cannot name a plugin: use lowercase ASCII letters, digits and `-`, starting with a letter (e.g. word-count)"
        );
    }
    let dir = dir.map_or_else(|| PathBuf::from(name), Path::to_path_buf);
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        bail!(
            "{} already exists and is not empty; choose another name or --dir",
            dir.display()
        );
    }
    let names = Names::of(name);
    let prefix = format!("sdk/{}/template/", lang.kit());
    let mut written = 0;
    for (path, bytes) in embedded::under(&prefix)? {
        let target = dir.join(names.render(&project_path(path)));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let text = std::str::from_utf8(bytes)
            .map(|text| names.render(text).into_bytes())
            .unwrap_or_else(|_| bytes.to_vec());
        std::fs::write(&target, text).with_context(|| format!("writing {}", target.display()))?;
        written += 1;
    }
    if written == 0 {
        bail!("this kaizen has no template for {lang:?}");
    }
    // A JavaScript project carries the kit, so that `node --test` needs no
    // install step.
    if lang == Lang::Js {
        let kit = dir.join("kaizen-sdk");
        std::fs::create_dir_all(&kit)?;
        for (path, bytes) in embedded::under("sdk/js/kaizen-sdk/")? {
            if js::PROJECT_KIT.contains(&path) {
                std::fs::write(kit.join(path), bytes)?;
            }
        }
    }
    let shown = dir.display();
    Ok(format!(
        "Created {shown}: a {lang:?} tool plugin `{name}` with one tool, {camel}.\n\nNext:\n  cd {shown}\n  kaizen plugins build\n  kaizen plugins test\n  kaizen tools call --plugins . {camel} '{input}'\n  kaizen plugins add .        # use it in your sessions, pinned",
        camel = names.camel,
        input = lang.example_input(),
    ))
}

/// The project in `dir`, its language and the kits, telling `notices`
/// what the toolchain says.
fn open(dir: &Path, notices: Notices) -> anyhow::Result<(Project, Lang, Kit)> {
    let dir = plugin_dir(dir)?;
    let manifest = Manifest::load(&dir).map_err(|err| anyhow::anyhow!("{err}"))?;
    let lang = Lang::of_project(&dir)?;
    let home = crate::home::kaizen_home()?;
    let kit = Kit {
        root: embedded::extracted(&home.join("kits"))?,
        toolchains: toolchain::cache_dir(&home)?,
        containment: crate::plugin_host::state_containment(&home)?,
        notices,
    };
    let project = Project {
        output: manifest.component_path(&dir),
        dir,
        manifest,
    };
    Ok((project, lang, kit))
}

/// `kaizen plugins test [DIR]`: the project's own tests, run natively
/// with the kit that matches this kaizen; what they print goes to
/// `notices`.
pub async fn test(dir: &Path, notices: Notices) -> anyhow::Result<()> {
    let (project, lang, kit) = open(dir, notices)?;
    match lang {
        Lang::Rust => rust::test(&project, &kit).await,
        Lang::Python => python::test(&project, &kit).await,
        Lang::Js => js::test(&project, &kit).await,
        Lang::C => c::test(&project, &kit).await,
    }
}

/// `kaizen plugins build [DIR]`; what the toolchain prints goes to
/// `notices`. What the built plugin provides, as lines for the user.
pub async fn build(dir: &Path, notices: Notices) -> anyhow::Result<String> {
    let (project, lang, kit) = open(dir, notices)?;
    match lang {
        Lang::Rust => rust::build(&project, &kit).await?,
        Lang::Python => python::build(&project, &kit).await?,
        Lang::Js => js::build(&project, &kit).await?,
        Lang::C => c::build(&project, &kit).await?,
    }
    check::report(&project).await
}

/// A template file's path in the project: `.tmpl` dropped (it keeps
/// templates out of tools' way, e.g. cargo's) and `gitignore` given its dot.
fn project_path(path: &str) -> String {
    let path = path.strip_suffix(".tmpl").unwrap_or(path);
    match path.rsplit_once('/') {
        Some((dir, "gitignore")) => format!("{dir}/.gitignore"),
        None if path == "gitignore" => ".gitignore".into(),
        _ => path.to_string(),
    }
}

/// What templates fill in: the spellings of a plugin's name, and the
/// contract version (`{{contract}}`, the newest this kaizen provides).
struct Names {
    /// `word-count`.
    name: String,
    /// `word_count`.
    snake: String,
    /// `WordCount`.
    camel: String,
}

impl Names {
    fn of(name: &str) -> Self {
        let camel = name
            .split('-')
            .map(|part| {
                let mut chars = part.chars();
                chars.next().map_or(String::new(), |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect();
        Self {
            name: name.to_string(),
            snake: name.replace('-', "_"),
            camel,
        }
    }

    fn render(&self, text: &str) -> String {
        text.replace("{{name}}", &self.name)
            .replace("{{snake_name}}", &self.snake)
            .replace("{{camel_name}}", &self.camel)
            .replace("{{contract}}", kaizen_plugin_host::CONTRACT_VERSION)
    }
}

/// Copies the directory `from` to `to`, leaving out `__pycache__`.
pub fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_tree(&path, &target)?;
            }
        } else {
            std::fs::copy(&path, &target).with_context(|| format!("copying {}", path.display()))?;
        }
    }
    Ok(())
}

/// The canonical path of the plugin directory `path`, which must hold a
/// manifest.
pub fn plugin_dir(path: &Path) -> anyhow::Result<PathBuf> {
    let dir = path
        .canonicalize()
        .with_context(|| format!("{} does not exist", path.display()))?;
    if !dir.join(MANIFEST_FILE).is_file() {
        anyhow::bail!(
            "{} has no {MANIFEST_FILE}: give a plugin project's directory (`kaizen plugins new NAME --lang LANG` makes one)",
            dir.display()
        );
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths_render() {
        let names = Names::of("word-count2");
        assert_eq!(
            names.render("{{name}} {{snake_name}} {{camel_name}}"),
            "word-count2 word_count2 WordCount2"
        );
        assert_eq!(project_path("Cargo.toml.tmpl"), "Cargo.toml");
        assert_eq!(project_path("gitignore"), ".gitignore");
        assert_eq!(project_path("src/lib.rs"), "src/lib.rs");
    }
}
