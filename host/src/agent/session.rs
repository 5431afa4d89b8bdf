//! Sessions on disk: one append-only JSON Lines file per session under
//! `<data dir>/sessions/`, plus a directory for the full text of long tool
//! outputs.
//!
//! Invariant: messages count only once the `turn_end` record that closes
//! their turn is written, so a crash mid-turn loses at most that partial
//! turn, and a resumed session never holds a tool call without its result.
//! Every record is written whole before the loop goes on (a killed process
//! loses nothing); each turn boundary starts a sync of the file, folded
//! with later ones while it runs (group commit), and a run's end waits
//! for all of them. Files are created `0600` in `0700` directories, and no
//! line or kept output holds a secret this process resolved.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::base::durable::{GroupCommit, SyncFile};
use crate::base::{PRIVATE_FILE, create_private_dir, secrets};
use crate::home::Home;
use crate::policy::Decision;
use crate::protocol::{AskAnswer, PlanStep, Question, ToolOutcome};
use crate::provider::{Message, Usage};

use super::StopReason;

/// What a session is about, written first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    /// RFC 3339, UTC.
    pub created: String,
    pub task: String,
    pub workspace: String,
    pub policy: String,
    pub provider: String,
    pub model: String,
}

/// One tool call as it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub call_id: String,
    pub tool: String,
    /// The arguments as the model sent them (not necessarily valid JSON).
    pub arguments: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    pub outcome: ToolOutcome,
    pub duration_ms: u64,
    /// Where the full output went when the context got a cut version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output: Option<String>,
}

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Start(SessionMeta),
    /// The session was resumed by a new process.
    Resumed {
        at: String,
    },
    /// A message of the conversation, as the model sees it.
    Message {
        message: Message,
    },
    /// A tool call's decision and outcome.
    Call(CallRecord),
    /// Older messages were replaced by these (the summary and the tail).
    Compaction {
        messages: Vec<Message>,
    },
    /// A turn ended; the messages before this line are committed.
    TurnEnd {
        turn: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// The run stopped.
    End {
        reason: StopReason,
    },
    /// Call `call_id` replaced the plan with `steps`.
    Plan {
        call_id: String,
        steps: Vec<PlanStep>,
    },
    /// Call `call_id` asked the user `question`; `answer` came of it.
    Asked {
        call_id: String,
        question: Question,
        answer: AskAnswer,
    },
}

/// Reading and writing sessions failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no session {0} (see `warden sessions list`)")]
    NotFound(String),
    #[error("there is no session to resume yet")]
    NoneYet,
    #[error("session file {path}:{line} is damaged: {message}")]
    Damaged {
        path: String,
        line: usize,
        message: String,
    },
    #[error("session storage: {0}")]
    Io(#[from] std::io::Error),
}

/// The sessions directory.
pub struct SessionStore {
    dir: PathBuf,
}

/// A session read back from disk.
#[derive(Debug, Clone)]
pub struct LoadedSession {
    pub meta: SessionMeta,
    /// The committed conversation, ready to continue.
    pub messages: Vec<Message>,
    /// Every complete record, in order.
    pub records: Vec<Record>,
    /// Turns completed.
    pub turns: u32,
    /// How the last run ended, if it ended cleanly.
    pub ended: Option<StopReason>,
    /// The last plan a committed turn recorded (empty: none).
    pub plan: Vec<PlanStep>,
}

impl SessionStore {
    pub fn new(home: &Home) -> SessionStore {
        SessionStore {
            dir: home.root().join("sessions"),
        }
    }

    fn file(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Start a new session, writing its metadata.
    pub fn create(
        &self,
        task: &str,
        workspace: &str,
        policy: &str,
        provider: &str,
        model: &str,
    ) -> Result<SessionWriter, SessionError> {
        create_private_dir(&self.dir)?;
        let now = SystemTime::now();
        let stamp = humantime::format_rfc3339_seconds(now).to_string();
        let compact: String = stamp.chars().filter(char::is_ascii_digit).collect();
        let (id, file) = loop {
            let id = format!("{}-{:08x}", compact, fastrand::u32(..));
            match OpenOptions::new()
                .create_new(true)
                .append(true)
                .mode(PRIVATE_FILE)
                .open(self.file(&id))
            {
                Ok(f) => break (id, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let meta = SessionMeta {
            id: id.clone(),
            created: stamp,
            task: task.to_string(),
            workspace: workspace.to_string(),
            policy: policy.to_string(),
            provider: provider.to_string(),
            model: model.to_string(),
        };
        let mut w = SessionWriter {
            id,
            file,
            outputs: self.dir.join(&meta.id),
            syncer: None,
        };
        w.append(&Record::Start(meta))?;
        w.sync_soon()?;
        Ok(w)
    }

    /// Reopen session `id` for appending, after loading it. A torn last
    /// line (a crash while it was written) is cut off first.
    pub fn resume(&self, id: &str) -> Result<(LoadedSession, SessionWriter), SessionError> {
        let loaded = self.load(id)?;
        let path = self.file(id);
        let bytes = std::fs::read(&path)?;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let file = OpenOptions::new().append(true).open(&path)?;
        if complete < bytes.len() {
            file.set_len(complete as u64)?;
        }
        let mut w = SessionWriter {
            id: id.to_string(),
            file,
            outputs: self.dir.join(id),
            syncer: None,
        };
        w.append(&Record::Resumed {
            at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        })?;
        w.sync_soon()?;
        Ok((loaded, w))
    }

    /// The most recently written session.
    pub fn last(&self) -> Result<String, SessionError> {
        let mut best: Option<(SystemTime, String)> = None;
        for (id, path) in self.files()? {
            let modified = std::fs::metadata(&path)?.modified()?;
            if best.as_ref().is_none_or(|(t, _)| modified > *t) {
                best = Some((modified, id));
            }
        }
        best.map(|(_, id)| id).ok_or(SessionError::NoneYet)
    }

    /// Every session, oldest first.
    pub fn list(&self) -> Result<Vec<LoadedSession>, SessionError> {
        let mut out = Vec::new();
        for (id, _) in self.files()? {
            out.push(self.load(&id)?);
        }
        out.sort_by(|a, b| {
            a.meta
                .created
                .cmp(&b.meta.created)
                .then(a.meta.id.cmp(&b.meta.id))
        });
        Ok(out)
    }

    fn files(&self) -> Result<Vec<(String, PathBuf)>, SessionError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut out = Vec::new();
        for entry in entries {
            let path = entry?.path();
            let id = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"));
            if let Some(id) = id {
                out.push((id.to_string(), path.clone()));
            }
        }
        Ok(out)
    }

    /// Read session `id` back. A damaged last line (a crash while writing
    /// it) is ignored; damage anywhere else is an error.
    pub fn load(&self, id: &str) -> Result<LoadedSession, SessionError> {
        let valid_id = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let path = self.file(id);
        if !valid_id || !path.is_file() {
            return Err(SessionError::NotFound(id.to_string()));
        }
        let text = std::fs::read_to_string(&path)?;
        let lines: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .collect();
        let mut records = Vec::with_capacity(lines.len());
        for (i, (n, line)) in lines.iter().enumerate() {
            match serde_json::from_str::<Record>(line) {
                Ok(r) => records.push(r),
                Err(_) if i + 1 == lines.len() => {}
                Err(e) => {
                    return Err(SessionError::Damaged {
                        path: path.display().to_string(),
                        line: n + 1,
                        message: e.to_string(),
                    });
                }
            }
        }
        replay(&path, records)
    }
}

/// Rebuild the committed conversation from the records.
fn replay(path: &Path, records: Vec<Record>) -> Result<LoadedSession, SessionError> {
    let mut meta = None;
    let mut committed = Vec::new();
    let mut pending = Vec::new();
    let mut turns = 0;
    let mut ended = None;
    let mut plan = Vec::new();
    let mut pending_plan = None;
    for r in &records {
        match r {
            Record::Start(m) => meta = Some(m.clone()),
            Record::Resumed { .. } => {
                pending.clear();
                pending_plan = None;
                ended = None;
            }
            Record::Plan { steps, .. } => pending_plan = Some(steps.clone()),
            Record::Asked { .. } => {}
            Record::Message { message } => pending.push(message.clone()),
            Record::Call(_) => {}
            Record::Compaction { messages } => {
                committed = messages.clone();
                pending.clear();
            }
            Record::TurnEnd { turn, .. } => {
                committed.append(&mut pending);
                if let Some(steps) = pending_plan.take() {
                    plan = steps;
                }
                turns = *turn;
            }
            Record::End { reason } => ended = Some(reason.clone()),
        }
    }
    let meta = meta.ok_or_else(|| SessionError::Damaged {
        path: path.display().to_string(),
        line: 1,
        message: "no start record".into(),
    })?;
    Ok(LoadedSession {
        meta,
        messages: committed,
        records,
        turns,
        ended,
        plan,
    })
}

/// Appends records to one session.
pub struct SessionWriter {
    id: String,
    file: File,
    outputs: PathBuf,
    syncer: Option<GroupCommit<SyncFile>>,
}

impl SessionWriter {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Append one record as one line, in one write, every secret this
    /// process resolved redacted.
    pub fn append(&mut self, record: &Record) -> Result<(), SessionError> {
        let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
        if let Some(clean) = secrets::redact_json(&line) {
            line = clean;
        }
        line.push(b'\n');
        self.file.write_all(&line)?;
        Ok(())
    }

    /// Start making everything appended so far durable, without waiting:
    /// a background thread syncs the file, folding requests that arrive
    /// while it syncs into one (group commit). Records are written to the
    /// file before this returns, so a crash of the process loses nothing;
    /// only a crash of the machine can lose what is not yet synced, and
    /// [`SessionWriter::sync_begun`]'s next call reports a sync that failed.
    pub fn sync_soon(&mut self) -> Result<(), SessionError> {
        if self.syncer.is_none() {
            let file = SyncFile(self.file.try_clone()?);
            self.syncer = Some(GroupCommit::start("warden-sync", file)?);
        }
        match &self.syncer {
            Some(s) => Ok(s.submit(())?),
            None => Ok(()),
        }
    }

    /// Wait until every sync begun with [`SessionWriter::sync_soon`] is done.
    pub fn sync_begun(&mut self) -> Result<(), SessionError> {
        match &self.syncer {
            Some(s) => Ok(s.wait()?),
            None => Ok(()),
        }
    }

    /// Keep the full text of a long tool output; returns where it went.
    pub fn save_output(&self, call_id: &str, text: &str) -> Result<PathBuf, SessionError> {
        create_private_dir(&self.outputs)?;
        let safe: String = call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = self.outputs.join(format!("{safe}.txt"));
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(PRIVATE_FILE)
            .open(&path)?;
        file.write_all(secrets::redact(text).as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(s: &str) -> Record {
        Record::Message {
            message: Message::User { content: s.into() },
        }
    }

    #[test]
    fn only_turns_that_ended_are_resumed() {
        let home = tempfile::tempdir().unwrap();
        let store = SessionStore::new(&Home::at(home.path().into()));
        let mut w = store.create("task", "/w", "p", "replay", "m").unwrap();
        let id = w.id().to_string();
        w.append(&msg("one")).unwrap();
        w.append(&Record::TurnEnd {
            turn: 1,
            usage: None,
        })
        .unwrap();
        w.append(&msg("two, never finished")).unwrap();
        drop(w);
        // A crash in the middle of a line.
        let path = store.file(&id);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"mess").unwrap();

        let (loaded, mut w) = store.resume(&id).unwrap();
        assert_eq!(
            loaded.messages,
            vec![Message::User {
                content: "one".into()
            }]
        );
        assert_eq!(loaded.turns, 1);
        w.append(&msg("three")).unwrap();
        w.append(&Record::TurnEnd {
            turn: 2,
            usage: None,
        })
        .unwrap();
        let again = store.load(&id).unwrap();
        assert_eq!(again.messages.len(), 2);
        assert_eq!(store.last().unwrap(), id);
    }

    #[test]
    fn hostile_ids_are_not_found() {
        let home = tempfile::tempdir().unwrap();
        let store = SessionStore::new(&Home::at(home.path().into()));
        for id in ["../x", "", "a/b", ".."] {
            assert!(
                matches!(store.load(id), Err(SessionError::NotFound(_))),
                "{id}"
            );
        }
    }
}
