//! Where an overlay lives and what its `meta.json` says.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::base::{PRIVATE_FILE, Rename, create_private_dir, write_atomic};
use crate::home::Home;

/// The directory all overlays live in.
pub fn overlays_dir(home: &Home) -> PathBuf {
    home.root().join("overlays")
}

/// Whether the run that writes an overlay is still going.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverlayState {
    /// The run is writing to it (or was killed before it could say it
    /// ended: then `pid` is no longer alive).
    Running,
    /// The run ended; the overlay waits for review.
    Finished,
}

/// `meta.json`: what an overlay is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverlayMeta {
    pub id: String,
    /// The session of the run, once it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The workspace it overlays (canonical, absolute).
    pub workspace: PathBuf,
    /// The policy the run was under.
    pub policy: String,
    /// RFC 3339, UTC, seconds.
    pub created: String,
    /// The ctime of `started`, in nanoseconds since the epoch.
    pub started_ns: i128,
    /// The `warden run` process that writes it.
    pub pid: u32,
    pub state: OverlayState,
}

/// Why an overlay could not be created, found or read.
#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    #[error("no overlay {0} (see `warden review list`)")]
    NotFound(String),
    #[error("overlay {id}: {what}: {source}")]
    Io {
        id: String,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("overlay {id}: meta.json is not valid: {message}")]
    BadMeta { id: String, message: String },
    /// The kernel or its settings cannot give this process an overlay.
    #[error("--review cannot work on this machine: {0}")]
    Unsupported(String),
    /// overlayfs keeps `user.` extended attributes in the upper directory.
    #[error(
        "--review needs a data directory on a filesystem with user extended attributes; \
         {dir} has none ({message}): set WARDEN_HOME to a directory on another filesystem"
    )]
    NoUserXattrs { dir: PathBuf, message: String },
    /// overlayfs refuses an upper directory inside the lower one (and the
    /// other way round).
    #[error(
        "--review cannot keep the overlay of {workspace} in {data_dir}: one is inside the \
         other; set WARDEN_HOME to a directory outside the workspace"
    )]
    Overlapping {
        workspace: PathBuf,
        data_dir: PathBuf,
    },
    /// A user namespace can only be entered by a process with one thread.
    #[error("--review must be set up before any thread starts ({0} threads are running)")]
    Threaded(usize),
    /// The overlays kept together exceed the total cap.
    #[error(
        "the overlays kept take {used} bytes, more than the {limit} allowed: see \
         `warden review list`, then `warden review discard` or `warden review clean`"
    )]
    TotalCap { used: u64, limit: u64 },
}

/// One overlay's directory.
#[derive(Debug, Clone)]
pub struct Overlay {
    dir: PathBuf,
    meta: OverlayMeta,
}

impl Overlay {
    /// Make a new, empty overlay of `workspace` for a run under `policy`.
    pub fn create(home: &Home, workspace: &Path, policy: &str) -> Result<Overlay, OverlayError> {
        let root = overlays_dir(home);
        let io = |id: &str, what| {
            let id = id.to_string();
            move |source| OverlayError::Io { id, what, source }
        };
        create_private_dir(home.root()).map_err(io("-", "cannot create the data directory"))?;
        create_private_dir(&root).map_err(io("-", "cannot create the overlays directory"))?;
        let now = SystemTime::now();
        let created = humantime::format_rfc3339_seconds(now).to_string();
        let compact: String = created.chars().filter(char::is_ascii_digit).collect();
        let (id, dir) = loop {
            let id = format!("{}-{:08x}", compact, fastrand::u32(..));
            let dir = root.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => break (id, dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io(&id, "cannot create its directory")(e)),
            }
        };
        for sub in ["upper", "work"] {
            create_private_dir(&dir.join(sub)).map_err(io(&id, "cannot create upper/ or work/"))?;
        }
        let started = dir.join("started");
        std::fs::File::create(&started).map_err(io(&id, "cannot create `started`"))?;
        let stat = std::fs::metadata(&started).map_err(io(&id, "cannot read `started`"))?;
        let meta = OverlayMeta {
            id: id.clone(),
            session_id: None,
            workspace: workspace.to_path_buf(),
            policy: policy.to_string(),
            created,
            started_ns: i128::from(stat.ctime()) * 1_000_000_000 + i128::from(stat.ctime_nsec()),
            pid: std::process::id(),
            state: OverlayState::Running,
        };
        let overlay = Overlay { dir, meta };
        overlay.save()?;
        Ok(overlay)
    }

    /// The overlay `id`.
    pub fn open(home: &Home, id: &str) -> Result<Overlay, OverlayError> {
        let valid = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(OverlayError::NotFound(id.to_string()));
        }
        let dir = overlays_dir(home).join(id);
        let bytes = match std::fs::read(dir.join("meta.json")) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(OverlayError::NotFound(id.to_string()));
            }
            Err(source) => {
                return Err(OverlayError::Io {
                    id: id.to_string(),
                    what: "cannot read meta.json",
                    source,
                });
            }
        };
        let meta: OverlayMeta =
            serde_json::from_slice(&bytes).map_err(|e| OverlayError::BadMeta {
                id: id.to_string(),
                message: e.to_string(),
            })?;
        Ok(Overlay { dir, meta })
    }

    /// Every overlay, oldest first. Directories that are not overlays are
    /// skipped.
    pub fn list(home: &Home) -> Result<Vec<Overlay>, OverlayError> {
        let entries = match std::fs::read_dir(overlays_dir(home)) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(OverlayError::Io {
                    id: "-".into(),
                    what: "cannot list the overlays directory",
                    source,
                });
            }
        };
        let mut all: Vec<Overlay> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| Overlay::open(home, e.file_name().to_str()?).ok())
            .collect();
        all.sort_by(|a, b| a.meta.id.cmp(&b.meta.id));
        Ok(all)
    }

    /// Rewrite `meta.json` with the current metadata.
    pub fn save(&self) -> Result<(), OverlayError> {
        let json = serde_json::to_vec_pretty(&self.meta).map_err(|e| OverlayError::BadMeta {
            id: self.meta.id.clone(),
            message: e.to_string(),
        })?;
        write_atomic(
            &self.dir.join("meta.json"),
            &json,
            PRIVATE_FILE,
            Rename::Synced,
        )
        .map_err(|source| OverlayError::Io {
            id: self.meta.id.clone(),
            what: "cannot write meta.json",
            source,
        })
    }

    pub fn id(&self) -> &str {
        &self.meta.id
    }

    pub fn meta(&self) -> &OverlayMeta {
        &self.meta
    }

    pub fn meta_mut(&mut self) -> &mut OverlayMeta {
        &mut self.meta
    }

    /// The overlay's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// overlayfs's upper directory: what the run changed.
    pub fn upper(&self) -> PathBuf {
        self.dir.join("upper")
    }

    /// overlayfs's work directory.
    pub fn work(&self) -> PathBuf {
        self.dir.join("work")
    }
}
