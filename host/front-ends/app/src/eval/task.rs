//! Task folders: finding them under the paths given and reading each one's
//! `task.toml`.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file that makes a directory a task.
pub const TASK_FILE: &str = "task.toml";

/// Why the tasks could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// None of the paths holds a task folder.
    #[error("no task folder (a directory with {TASK_FILE}) in the paths given")]
    NoTasks,
    /// A path or a task's file could not be read.
    #[error("reading {}", path.display())]
    Read {
        /// What was being read.
        path: PathBuf,
        /// Why it could not be.
        source: std::io::Error,
    },
    /// A `task.toml` that does not parse.
    #[error("{} is not a task file", path.display())]
    NotATask {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: toml::de::Error,
    },
    /// A task folder without the check that judges it.
    #[error("{} has no check.sh", .0.display())]
    NoCheck(PathBuf),
}

/// `task.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TaskFile {
    /// What the agent is asked to do.
    pub instruction: String,
    /// A cap on model calls for this task, over the flags'.
    pub max_cycles: Option<u32>,
}

/// One task.
#[derive(Debug)]
pub struct Task {
    /// Its folder's name.
    pub name: String,
    /// Its folder, absolute.
    pub dir: PathBuf,
    /// Its `task.toml`.
    pub spec: TaskFile,
}

/// The tasks under `paths`: each path a task folder or a folder of them,
/// the latter's tasks by name.
pub fn find_tasks(paths: &[PathBuf]) -> Result<Vec<Task>, TaskError> {
    let mut tasks = Vec::new();
    for path in paths {
        if path.join(TASK_FILE).is_file() {
            tasks.push(read_task(path)?);
            continue;
        }
        let entries = std::fs::read_dir(path).map_err(unreadable(path))?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|dir| dir.join(TASK_FILE).is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            tasks.push(read_task(&dir)?);
        }
    }
    Ok(tasks)
}

/// [`TaskError::Read`] for `path`.
fn unreadable(path: &Path) -> impl FnOnce(std::io::Error) -> TaskError + '_ {
    move |source| TaskError::Read {
        path: path.to_path_buf(),
        source,
    }
}

fn read_task(dir: &Path) -> Result<Task, TaskError> {
    // Absolute: the check runs in the workspace's copy.
    let dir = dir.canonicalize().map_err(unreadable(dir))?;
    let file = dir.join(TASK_FILE);
    let text = std::fs::read_to_string(&file).map_err(unreadable(&file))?;
    let spec: TaskFile = toml::from_str(&text).map_err(|source| TaskError::NotATask {
        path: file.clone(),
        source,
    })?;
    if !dir.join("check.sh").is_file() {
        return Err(TaskError::NoCheck(dir));
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Task { name, dir, spec })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(root: &Path, name: &str, toml: &str, check: bool) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(TASK_FILE), toml).unwrap();
        if check {
            std::fs::write(dir.join("check.sh"), "true\n").unwrap();
        }
    }

    #[test]
    fn a_folder_of_tasks_gives_them_by_name_and_a_task_folder_itself() {
        let root = tempfile::tempdir().unwrap();
        task(
            root.path(),
            "b",
            "instruction = \"two\"\nmax-cycles = 3\n",
            true,
        );
        task(root.path(), "a", "instruction = \"one\"\n", true);
        std::fs::create_dir(root.path().join("not-a-task")).unwrap();
        let tasks = find_tasks(&[root.path().to_path_buf()]).unwrap();
        let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(tasks[1].spec.max_cycles, Some(3));
        assert!(tasks[0].dir.is_absolute());
        let one = find_tasks(&[root.path().join("b")]).unwrap();
        assert_eq!(one[0].spec.instruction, "two");
    }

    #[test]
    fn a_task_needs_its_check_and_a_valid_file() {
        let root = tempfile::tempdir().unwrap();
        task(root.path(), "unchecked", "instruction = \"x\"\n", false);
        let err = find_tasks(&[root.path().join("unchecked")]).unwrap_err();
        assert!(matches!(err, TaskError::NoCheck(_)), "{err}");
        task(
            root.path(),
            "odd",
            "instruction = \"x\"\ncolour = 1\n",
            true,
        );
        let err = find_tasks(&[root.path().join("odd")]).unwrap_err();
        assert!(err.to_string().ends_with("is not a task file"), "{err}");
        let err = find_tasks(&[root.path().join("missing")]).unwrap_err();
        assert!(matches!(err, TaskError::Read { .. }), "{err}");
    }
}
