//! `warden run --review`: whether the run gets an overlay, which one, and
//! its mount (see `crate::overlay` and `docs/review.md`).
//!
//! Invariant: when the user asked for `--review` and it cannot work, the
//! run does not start, and nothing is left in the data directory.

use std::path::Path;

use super::RunArgs;
use crate::agent::SessionMeta;
use crate::home::Home;
use crate::overlay::{self, Overlay, OverlayError, OverlayState};
use crate::policy::Policy;

/// The policy under which review is on unless `--no-review`.
const REVIEWED_POLICY: &str = "strict";

/// The overlay a run writes to, once mounted.
pub(super) struct RunOverlay {
    pub(super) overlay: Overlay,
}

/// What comes of the review flags: an overlay mounted over `workspace`,
/// none, or a one-line reason the run cannot start. Must run while the
/// process has one thread, before anything opens the workspace to write.
/// `warn` shows why a review on by default could not be set up.
pub(super) fn set_up(
    args: &RunArgs,
    home: &Home,
    workspace: &Path,
    policy: &Policy,
    previous: Option<&SessionMeta>,
    warn: &dyn Fn(String),
) -> Result<Option<RunOverlay>, String> {
    if args.no_review {
        return Ok(None);
    }
    let earlier = previous.and_then(|p| session_overlay(home, &p.id, workspace));
    let by_default = policy.name == REVIEWED_POLICY || earlier.is_some();
    if !args.review && !by_default {
        return Ok(None);
    }
    match mount(home, workspace, policy, earlier) {
        Ok(o) => Ok(Some(o)),
        Err(e @ OverlayError::TotalCap { .. }) => Err(format!("{e}; or run with --no-review")),
        Err(e) if args.review => Err(e.to_string()),
        Err(e) => {
            warn(format!("{e}; the run writes to the workspace directly"));
            Ok(None)
        }
    }
}

/// The overlay of session `id` over `workspace`, if it is still there.
fn session_overlay(home: &Home, id: &str, workspace: &Path) -> Option<Overlay> {
    let all = Overlay::list(home).ok()?;
    all.into_iter()
        .rev()
        .find(|o| o.meta().session_id.as_deref() == Some(id) && o.meta().workspace == workspace)
}

fn mount(
    home: &Home,
    workspace: &Path,
    policy: &Policy,
    earlier: Option<Overlay>,
) -> Result<RunOverlay, OverlayError> {
    overlay::check_placement(workspace, home.root())?;
    let (mut overlay, reused) = match earlier {
        Some(o) => (o, true),
        None => {
            overlay::check_total(home, overlay::TOTAL_CAP)?;
            (Overlay::create(home, workspace, &policy.name)?, false)
        }
    };
    if let Err(e) = overlay::mount_over(&overlay, workspace, home.root()) {
        if !reused {
            let _ = std::fs::remove_dir_all(overlay.dir());
        }
        return Err(e);
    }
    if reused {
        let meta = overlay.meta_mut();
        meta.pid = std::process::id();
        meta.state = OverlayState::Running;
        overlay.save()?;
    }
    Ok(RunOverlay { overlay })
}

/// Note the session the overlay belongs to, as soon as it exists.
pub(super) fn attach(run: &mut RunOverlay, session_id: &str) -> Result<(), OverlayError> {
    if run.overlay.meta().session_id.as_deref() == Some(session_id) {
        return Ok(());
    }
    run.overlay.meta_mut().session_id = Some(session_id.to_string());
    run.overlay.save()
}

/// Mark the overlay finished (the run ended, whatever the reason).
pub(super) fn finish(run: &mut RunOverlay) -> Result<(), OverlayError> {
    run.overlay.meta_mut().state = OverlayState::Finished;
    run.overlay.save()
}

/// The lines the run ends with: where its changes are, how to review them.
pub(super) fn summary(run: &RunOverlay) -> String {
    format!(
        "warden: the run's changes are in overlay {} ({}); the workspace is untouched.\n\
         warden: review them with `warden review --last`, then `warden review apply` \
         or `warden review discard`",
        run.overlay.id(),
        run.overlay.upper().display()
    )
}
