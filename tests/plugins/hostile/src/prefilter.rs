//! Calls `warden:tool/prefilter` with what a well-behaved plugin never
//! passes: a directory, a handle it never opened, needle lists out of
//! bounds.

use warden_sdk::bindings::prefilter::{self, Found, PrefilterError};
use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Annotations, Context, Output, Tool, ToolError};
use wasip2::filesystem::types::{Descriptor, DescriptorFlags, OpenFlags, PathFlags};

#[derive(serde::Deserialize)]
pub struct PrefilterInput {
    /// Workspace-relative path to open (a file or a directory).
    path: String,
    /// Needles, each repeated `repeat` times in the list.
    needles: Vec<String>,
    #[serde(default = "one")]
    repeat: usize,
    /// Pass a handle this instance never opened instead of `path`'s.
    #[serde(default)]
    forged: bool,
}

fn one() -> usize {
    1
}

/// Reads a file through the prefilter, however asked.
pub struct PrefilterRead;

impl Tool for PrefilterRead {
    type Input = PrefilterInput;
    const NAME: &'static str = "prefilter_read";
    const DESCRIPTION: &'static str = "Open a workspace path and read it through \
         warden:tool/prefilter with the given needles; report what came back.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "needles": {"type": "array", "items": {"type": "string"}},
                "repeat": {"type": "integer"},
                "forged": {"type": "boolean"}
            },
            "required": ["path", "needles"]
        })
    }

    fn call(&self, input: PrefilterInput, _cx: &Context) -> Result<Output, ToolError> {
        let dir = crate::workspace_preopen()?;
        let fd = if input.forged {
            // SAFETY: deliberately not a handle this instance owns; the
            // component model must refuse it.
            unsafe { Descriptor::from_handle(0x7fff) }
        } else {
            dir.open_at(
                PathFlags::empty(),
                &input.path,
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )
            .map_err(|e| ToolError::io(format!("open {}: {e:?}", input.path)))?
        };
        let needles: Vec<Vec<u8>> = (0..input.repeat)
            .flat_map(|_| input.needles.iter().map(|n| n.as_bytes().to_vec()))
            .collect();
        let text = match prefilter::read_if_contains(&fd, 1 << 20, 0, &needles, 8) {
            Ok(Found::Bytes((bytes, end))) => format!("bytes {} end {end}", bytes.len()),
            Ok(Found::Absent(a)) => {
                format!("absent {} end {} nul {}", a.size, a.end, a.nul_in_head)
            }
            Err(PrefilterError::BadNeedles) => "error bad-needles".to_string(),
            Err(PrefilterError::Read(code)) => format!("error read {}", code.name()),
        };
        Ok(Output::text(text))
    }
}
