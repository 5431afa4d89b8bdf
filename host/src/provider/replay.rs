//! Recording model turns to a file and playing them back, so a session
//! reproduces without a network or an API key.
//!
//! The file is JSON Lines: a header `{"warden_replay": 1, "source": ...}`
//! then one [`ModelResponse`] per line, in the order the turns happened.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;

use super::{ModelResponse, ProviderError, StreamEvent};

const FORMAT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Header {
    warden_replay: u32,
    /// Which provider and model produced the recording.
    source: String,
}

/// Plays recorded turns back in order; running past the end is an error.
pub struct ReplayProvider {
    path: PathBuf,
    turns: Mutex<std::vec::IntoIter<ModelResponse>>,
}

impl ReplayProvider {
    /// Load a recording made with [`Recorder`].
    pub fn open(path: &Path) -> Result<ReplayProvider, ProviderError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProviderError::Replay(format!("cannot read {}: {e}", path.display())))?;
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let bad = |n: usize, e: serde_json::Error| {
            ProviderError::Replay(format!("{}:{}: {e}", path.display(), n + 1))
        };
        let header: Header = match lines.next() {
            Some((n, l)) => serde_json::from_str(l).map_err(|e| bad(n, e))?,
            None => {
                return Err(ProviderError::Replay(format!(
                    "{} is empty; expected a recording made with --record",
                    path.display()
                )));
            }
        };
        if header.warden_replay != FORMAT_VERSION {
            return Err(ProviderError::Replay(format!(
                "{} has replay format {}, this warden reads format {FORMAT_VERSION}",
                path.display(),
                header.warden_replay
            )));
        }
        let turns = lines
            .map(|(n, l)| serde_json::from_str(l).map_err(|e| bad(n, e)))
            .collect::<Result<Vec<ModelResponse>, _>>()?;
        Ok(ReplayProvider {
            path: path.to_path_buf(),
            turns: Mutex::new(turns.into_iter()),
        })
    }

    /// The next recorded turn, streamed as if it had just arrived.
    pub fn complete(
        &self,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        let next = self
            .turns
            .lock()
            .map_err(|_| ProviderError::Replay("the replay state is poisoned".into()))?
            .next();
        let Some(turn) = next else {
            return Err(ProviderError::Replay(format!(
                "{} has no more recorded turns; the session diverged from the recording",
                self.path.display()
            )));
        };
        for r in &turn.reasoning {
            let text = r.text();
            if !text.is_empty() {
                let _ = events.send(StreamEvent::ReasoningDelta(text));
            }
        }
        if !turn.text.is_empty() {
            // A closed receiver means no one is listening; the turn stands.
            let _ = events.send(StreamEvent::TextDelta(turn.text.clone()));
        }
        for call in &turn.tool_calls {
            let _ = events.send(StreamEvent::ToolCallReady(call.clone()));
        }
        Ok(turn)
    }

    pub fn describe(&self) -> String {
        format!("replay of {}", self.path.display())
    }
}

/// Appends every model turn to a recording, flushed per turn.
pub struct Recorder {
    file: Mutex<std::fs::File>,
}

impl Recorder {
    /// Start a new recording at `path` (truncating it) for `source`.
    pub fn create(path: &Path, source: &str) -> std::io::Result<Recorder> {
        let mut file = std::fs::File::create(path)?;
        let header = Header {
            warden_replay: FORMAT_VERSION,
            source: source.to_string(),
        };
        writeln!(file, "{}", serde_json::to_string(&header)?)?;
        Ok(Recorder {
            file: Mutex::new(file),
        })
    }

    pub fn record(&self, turn: &ModelResponse) -> std::io::Result<()> {
        let line = serde_json::to_string(turn)?;
        let mut file = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("the recorder is poisoned"))?;
        writeln!(file, "{line}")?;
        file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{FinishReason, ToolCall};

    #[test]
    fn a_recording_plays_back_in_order_then_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let rec = Recorder::create(&path, "test").unwrap();
        let first = ModelResponse {
            text: "looking".into(),
            reasoning: vec![],
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "grep".into(),
                arguments: "{\"pattern\":\"x\"}".into(),
            }],
            usage: None,
            finish: FinishReason::ToolCalls,
        };
        let second = ModelResponse {
            text: "done".into(),
            reasoning: vec![],
            tool_calls: vec![],
            usage: None,
            finish: FinishReason::Stop,
        };
        rec.record(&first).unwrap();
        rec.record(&second).unwrap();

        let replay = ReplayProvider::open(&path).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        assert_eq!(replay.complete(&tx).unwrap(), first);
        assert_eq!(
            rx.try_recv().unwrap(),
            StreamEvent::TextDelta("looking".into())
        );
        assert!(matches!(rx.try_recv().unwrap(), StreamEvent::ToolCallReady(c) if c.id == "c1"));
        assert_eq!(replay.complete(&tx).unwrap(), second);
        let err = replay.complete(&tx).unwrap_err().to_string();
        assert!(err.contains("no more recorded turns"), "{err}");
    }

    #[test]
    fn a_foreign_file_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, "{\"warden_replay\":1,\"source\":\"x\"}\nnot json\n").unwrap();
        let err = ReplayProvider::open(&path).err().unwrap().to_string();
        assert!(err.contains("r.jsonl:2"), "{err}");
    }
}
