//! Warden's built-in file tools: read, write, edit, list and glob.
//!
//! Every path in tool input goes through [`Context::path`], and every path
//! shown to the model is workspace-relative, or absolute inside an extra
//! directory the user granted (named as they granted it): neither the guest
//! preopen (`/workspace`) nor any other host path appears in output or
//! errors. The host's WASI sandbox keeps each open inside the granted
//! directories; these tools only make the failures readable.

mod edit;
mod glob;
mod glob_split;
mod list;
mod read;
mod write;

use std::io;
use std::path::Path;

use warden_sdk::{Context, ToolError, WorkspacePath, register};

register!(
    read::ReadFile,
    write::WriteFile,
    edit::EditFile,
    list::ListDir,
    glob::Glob
);

/// The workspace root and the input path, both resolved through the context.
pub(crate) fn resolve(
    cx: &Context,
    input: &str,
) -> Result<(WorkspacePath, WorkspacePath), ToolError> {
    Ok((cx.path(".")?, cx.path(input)?))
}

/// The workspace-relative form of `path`, a path found by walking under the
/// guest root `root`. Falls back to the lossy full path only if `path` is not
/// under `root`, which the walkers never produce.
pub(crate) fn relative_to(root: &WorkspacePath, path: &Path) -> String {
    match path.strip_prefix(root.guest()) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// Describe an error writing `shown`: like [`ToolError::from_io`], but a
/// refusal names the likely cause, a grant that only lets the call read.
pub(crate) fn write_error(err: &io::Error, shown: &str) -> ToolError {
    if err.kind() == io::ErrorKind::PermissionDenied {
        return ToolError::permission_denied(format!(
            "{shown}: the sandbox refused the write: this call may only read there (ask the user \
             to allow writes), or the path leads outside the directories it was granted"
        ));
    }
    ToolError::from_io(err, shown)
}

/// True once the user has cancelled the call; always false in native tests,
/// where the host import does not exist.
pub(crate) fn cancelled() -> bool {
    #[cfg(target_family = "wasm")]
    {
        warden_sdk::is_cancelled()
    }
    #[cfg(not(target_family = "wasm"))]
    {
        false
    }
}

/// `n` followed by `one` or `many`, e.g. `1 line`, `3 lines`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use warden_sdk::Context;

    /// A temporary workspace and a context whose preopen is that directory.
    pub fn workspace() -> (tempfile::TempDir, Context) {
        let dir = tempfile::tempdir().unwrap();
        let cx = Context::for_tests(dir.path().to_str().unwrap());
        (dir, cx)
    }

    /// Write `content` to `rel` under `dir`, creating parent directories.
    pub fn put(dir: &tempfile::TempDir, rel: &str, content: &str) {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_refusals_name_the_read_only_grant() {
        let err = write_error(&io::Error::from(io::ErrorKind::PermissionDenied), "a.txt");
        assert!(
            err.message
                .starts_with("a.txt: the sandbox refused the write"),
            "{}",
            err.message
        );
        let err = write_error(&io::Error::from(io::ErrorKind::NotFound), "a.txt");
        assert_eq!(err.message, "a.txt: no such file or directory");
    }
}
