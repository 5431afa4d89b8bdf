//! Where a guest path really leads, checked before (or, when the kernel
//! must say, right after) anything changes: opens with no symlink on the
//! way, careful opens and creates when there is one, and directories pinned
//! so that an operation acts on one checked entry.

use std::sync::Arc;

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::{Descriptor, Dir, File, OpenMode, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types as wasi;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{self as fs, HostDescriptor};
use wasmtime_wasi::p2::{FsError, FsResult};

use super::GuardedFs;
use crate::capability::PathUse;
use crate::capability::beneath::{self, Beneath, Symlinks};
use crate::capability::fs_boundary::FsOp;
use crate::capability::wasi::BLOCK_CURRENT_THREAD;

/// Symlinks followed by hand before giving up with `loop` (Linux's limit).
const MAX_HOPS: u8 = 40;

/// A directory held for one operation, and the entry in it to act on.
pub(super) struct Pinned {
    pub(super) dir: Resource<Descriptor>,
    /// Whether `dir` was opened for the operation (and is closed after it).
    pub(super) owned: bool,
    /// The directory's host path.
    pub(super) rel: String,
    /// The last component of the guest's path, trailing `/` kept.
    pub(super) leaf: String,
    /// The entry's host path; `None` if it leaves every granted directory,
    /// which wasmtime refuses.
    target: Option<String>,
}

impl Pinned {
    pub(super) fn dir(&self) -> Resource<Descriptor> {
        Resource::new_borrow(self.dir.rep())
    }

    pub(super) fn target(&self) -> Option<String> {
        self.target.clone()
    }
}

fn is(err: &FsError, code: wasi::ErrorCode) -> bool {
    err.downcast_ref() == Some(&code)
}

/// [`beneath::special`] for a type wasmtime reports.
fn special_type(kind: fs::DescriptorType) -> bool {
    use fs::DescriptorType as T;
    match kind {
        T::RegularFile | T::Directory | T::SymbolicLink => false,
        T::Fifo | T::Socket | T::CharacterDevice | T::BlockDevice | T::Unknown => true,
    }
}

fn use_of(oflags: fs::OpenFlags, dflags: fs::DescriptorFlags) -> PathUse {
    let changes = oflags.intersects(fs::OpenFlags::CREATE | fs::OpenFlags::TRUNCATE)
        || dflags.contains(fs::DescriptorFlags::WRITE);
    if changes {
        PathUse::Change
    } else {
        PathUse::Read
    }
}

impl GuardedFs<'_> {
    pub(super) fn deny(&mut self, op: FsOp, path: Option<&str>) -> FsError {
        self.boundary.record(op, path);
        wasi::ErrorCode::Access.into()
    }

    /// Refuse `how` on `rel` if it is protected.
    pub(super) fn check(&mut self, op: FsOp, rel: Option<&str>, how: PathUse) -> FsResult<()> {
        match rel {
            Some(rel) if self.boundary.refuses(rel, how) => Err(self.deny(op, Some(rel))),
            _ => Ok(()),
        }
    }

    fn close(&mut self, fd: Resource<Descriptor>) {
        self.boundary.paths.remove(&fd.rep());
        // Closing a descriptor the table holds cannot fail.
        let _ = HostDescriptor::drop(&mut self.inner, fd);
    }

    pub(super) fn release(&mut self, pinned: Pinned) {
        if pinned.owned {
            self.close(pinned.dir);
        }
    }

    /// The host path of `fd`: remembered from its open, or read back from
    /// the kernel (and remembered) if it lies in a granted directory.
    fn path_of(&mut self, fd: &Resource<Descriptor>, op: FsOp) -> FsResult<String> {
        if let Some(rel) = self.boundary.paths.get(&fd.rep()) {
            return Ok(rel.clone());
        }
        let host = match self.inner.table.get(fd)? {
            Descriptor::File(f) => beneath::host_path(&f.file),
            Descriptor::Dir(d) => beneath::host_path(&d.dir),
        };
        match host.and_then(|h| self.boundary.place(&h)) {
            Some(rel) => {
                self.boundary.paths.insert(fd.rep(), rel.clone());
                Ok(rel)
            }
            None => Err(self.deny(op, None)),
        }
    }

    /// Refuse `how` on the object `fd` stands for if it is protected.
    pub(super) fn check_descriptor(
        &mut self,
        fd: &Resource<Descriptor>,
        op: FsOp,
        how: PathUse,
    ) -> FsResult<()> {
        if !self.boundary.checks(how) {
            return Ok(());
        }
        let rel = self.path_of(fd, op)?;
        self.check(op, Some(&rel), how)
    }

    /// Open `path` under `fd` with no symlink on the way, remembering `rel`
    /// as its path; `None` when only the careful path can open it.
    fn open_beneath(
        &mut self,
        fd: &Resource<Descriptor>,
        rel: &str,
        path: &str,
        flags: (fs::PathFlags, fs::OpenFlags, fs::DescriptorFlags),
    ) -> Option<FsResult<Resource<Descriptor>>> {
        let opened = self.open_direct(fd, path, flags, Symlinks::Refused)?;
        Some(opened.inspect(|res| {
            self.boundary.paths.insert(res.rep(), rel.to_string());
        }))
    }

    /// Open `path` under `fd` as wasmtime would, through symlinks that stay
    /// beneath it, but without blocking, so that a FIFO is refused rather
    /// than waited on. `None` where the kernel cannot make that open (a
    /// symlink leading out, which wasmtime refuses; no `openat2`; a racing
    /// rename): [`refuse_special`](Self::refuse_special) then looks first.
    fn open_following(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        flags: (fs::PathFlags, fs::OpenFlags, fs::DescriptorFlags),
    ) -> FsResult<Resource<Descriptor>> {
        if let Some(opened) = self.open_direct(fd, path, flags, Symlinks::Beneath) {
            return opened;
        }
        let (pflags, oflags, dflags) = flags;
        self.refuse_special(fd, pflags, path)?;
        let at = Resource::new_borrow(fd.rep());
        let opened = self
            .inner
            .open_at(at, pflags, path.to_string(), oflags, dflags)?;
        // Checked opens reach here without truncating (`open_existing`).
        match self.refuse_linked(&opened, FsOp::Open, use_of(oflags, dflags)) {
            Ok(()) => Ok(opened),
            Err(e) => {
                self.close(opened);
                Err(e)
            }
        }
    }

    /// The open wasmtime's `open-at` makes, non-blocking, refusing special
    /// files; `None` when the kernel cannot make it `via` these symlinks or
    /// wasmtime would refuse it for the directory's permissions.
    fn open_direct(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        flags: (fs::PathFlags, fs::OpenFlags, fs::DescriptorFlags),
        via: Symlinks,
    ) -> Option<FsResult<Resource<Descriptor>>> {
        let (pflags, oflags, dflags) = flags;
        let mut plan = beneath::plan(pflags, oflags, dflags)?;
        let how = use_of(oflags, dflags);
        // A checked open truncates only once what it opened is known not to
        // be a protected file under another name.
        let truncate = self.boundary.checks(how) && plan.defer_truncate();
        let Ok(Descriptor::Dir(dir)) = self.inner.table.get(fd) else {
            return None;
        };
        let (handle, perms) = (dir.dir.clone(), dir.perms);
        if perms.write_not_permitted() && plan.mode.contains(OpenMode::WRITE) {
            return None;
        }
        let file = match beneath::open(&handle, path, &plan, via) {
            Beneath::Opened(file) => file,
            Beneath::Failed(e) => return Some(Err(e.into())),
            Beneath::Special(file) => return Some(Err(self.refuse_opened_special(&file, flags))),
            Beneath::Unavailable => return None,
        };
        let descriptor = match file.metadata() {
            Err(e) => return Some(Err(e.into())),
            Ok(m) if m.is_dir() => {
                Descriptor::Dir(Dir::new(file, perms, plan.mode, BLOCK_CURRENT_THREAD))
            }
            Ok(m) if beneath::special(m.file_type()) => {
                return Some(Err(self.refuse_opened_special(&file, flags)));
            }
            Ok(_) if oflags.contains(fs::OpenFlags::DIRECTORY) => {
                return Some(Err(wasi::ErrorCode::NotDirectory.into()));
            }
            Ok(m) if self.is_protected_link(&m, how) => {
                return Some(Err(self.refuse_opened_link(&file, FsOp::Open)));
            }
            Ok(m) => {
                if truncate && let Err(e) = file.set_len(0) {
                    return Some(Err(e.into()));
                }
                let file = File::new(file, perms, plan.mode, BLOCK_CURRENT_THREAD);
                if !plan.mode.contains(OpenMode::WRITE) {
                    self.boundary.size_at_open = Some((Arc::downgrade(&file.file), m.len()));
                }
                Descriptor::File(file)
            }
        };
        Some(self.inner.table.push(descriptor).map_err(FsError::from))
    }

    /// The refusal of a FIFO, socket or device an open reached: `access`
    /// (recorded) if where it really is is protected against this use, so a
    /// symlink does not change how a protected path is refused; otherwise
    /// `unsupported`.
    fn refuse_opened_special(
        &mut self,
        file: &std::fs::File,
        (_, oflags, dflags): (fs::PathFlags, fs::OpenFlags, fs::DescriptorFlags),
    ) -> FsError {
        let how = use_of(oflags, dflags);
        if self.boundary.checks(how) {
            let rel = beneath::host_path(file).and_then(|h| self.boundary.place(&h));
            if let Err(e) = self.check(FsOp::Open, rel.as_deref(), how) {
                return e;
            }
        }
        wasi::ErrorCode::Unsupported.into()
    }

    /// Hold the directory holding the last component of `path`.
    pub(super) fn pin(
        &mut self,
        fd: Resource<Descriptor>,
        path: &str,
        op: FsOp,
    ) -> FsResult<Pinned> {
        let trimmed = path.trim_end_matches('/');
        let Some(slash) = trimmed.rfind('/') else {
            let rel = self.path_of(&fd, op)?;
            let target = self.boundary.join(&rel, trimmed);
            return Ok(Pinned {
                dir: fd,
                owned: false,
                rel,
                leaf: path.to_string(),
                target,
            });
        };
        let parent = if slash == 0 { "/" } else { &trimmed[..slash] };
        let leaf = path[slash + 1..].to_string();
        let base = self.path_of(&fd, op)?;
        let as_dir = (
            fs::PathFlags::SYMLINK_FOLLOW,
            fs::OpenFlags::DIRECTORY,
            fs::DescriptorFlags::READ,
        );
        let direct = self
            .boundary
            .join(&base, parent)
            .and_then(|rel| self.open_beneath(&fd, &rel, parent, as_dir));
        let dir = match direct {
            Some(opened) => opened?,
            // The trailing `/.` fails on anything but a directory, so a FIFO
            // is never opened (which would block).
            None => self
                .inner
                .open_at(fd, as_dir.0, format!("{parent}/."), as_dir.1, as_dir.2)?,
        };
        match self.path_of(&dir, op) {
            Ok(rel) => {
                let target = self.boundary.join(&rel, leaf.trim_end_matches('/'));
                Ok(Pinned {
                    dir,
                    owned: true,
                    rel,
                    leaf,
                    target,
                })
            }
            Err(e) => {
                self.close(dir);
                Err(e)
            }
        }
    }

    /// [`Self::pin`], checking the entry, and when `follow` is set following
    /// a symlink there by hand until the entry is not one.
    pub(super) fn pin_followed(
        &mut self,
        fd: Resource<Descriptor>,
        path: &str,
        follow: bool,
        (op, how): (FsOp, PathUse),
        hops: u8,
    ) -> FsResult<Pinned> {
        let at = self.pin(fd, path, op)?;
        if let Err(e) = self.check(op, at.target().as_deref(), how) {
            self.release(at);
            return Err(e);
        }
        let stat = follow.then(|| {
            self.inner
                .stat_at(at.dir(), fs::PathFlags::empty(), at.leaf.clone())
        });
        if !matches!(
            stat,
            Some(Ok(fs::DescriptorStat {
                type_: fs::DescriptorType::SymbolicLink,
                ..
            }))
        ) {
            return Ok(at);
        }
        let link = match self.inner.readlink_at(at.dir(), at.leaf.clone()) {
            Ok(_) if hops >= MAX_HOPS => Err(wasi::ErrorCode::Loop.into()),
            other => other,
        };
        let next =
            link.and_then(|link| self.pin_followed(at.dir(), &link, true, (op, how), hops + 1));
        match next {
            // The target lies in the link's own directory: hand it over.
            Ok(mut n) if at.owned && !n.owned && n.dir.rep() == at.dir.rep() => {
                n.owned = true;
                Ok(n)
            }
            other => {
                self.release(at);
                other
            }
        }
    }

    /// Pin the entry `path` names, refuse `how` on it if protected, else `act` on it.
    pub(super) fn at_entry<R>(
        &mut self,
        fd: Resource<Descriptor>,
        path: &str,
        (op, how): (FsOp, PathUse),
        act: impl FnOnce(&mut WasiFilesystemCtxView<'_>, Resource<Descriptor>, String) -> FsResult<R>,
    ) -> FsResult<R> {
        let at = self.pin(fd, path, op)?;
        let result = match self.check(op, at.target().as_deref(), how) {
            Ok(()) => act(&mut self.inner, at.dir(), at.leaf.clone()),
            Err(e) => Err(e),
        };
        self.release(at);
        result
    }

    /// Open `path` under `fd`, checked as `use_of` the flags says. `named`
    /// is the path's workspace name when the caller has worked it out
    /// (`None` on a symlink hop): an open with nothing to check remembers
    /// it, and only such an open uses it.
    pub(super) fn open_guarded(
        &mut self,
        fd: Resource<Descriptor>,
        pflags: fs::PathFlags,
        path: String,
        (oflags, dflags): (fs::OpenFlags, fs::DescriptorFlags),
        (named, hops): (Option<&str>, u8),
    ) -> FsResult<Resource<Descriptor>> {
        let how = use_of(oflags, dflags);
        if beneath::plan(pflags, oflags, dflags).is_none() {
            // Flags wasmtime refuses, before any effect.
            return self.inner.open_at(fd, pflags, path, oflags, dflags);
        }
        if !self.boundary.checks(how) {
            // Nothing to check, but the open must still not block.
            if let Some(rel) = named
                && let Some(opened) = self.open_beneath(&fd, rel, &path, (pflags, oflags, dflags))
            {
                return opened;
            }
            return self.open_following(&fd, &path, (pflags, oflags, dflags));
        }
        let base = self.path_of(&fd, FsOp::Open)?;
        if let Some(rel) = self.boundary.join(&base, &path) {
            self.check(FsOp::Open, Some(&rel), how)?;
            if let Some(opened) = self.open_beneath(&fd, &rel, &path, (pflags, oflags, dflags)) {
                return opened;
            }
        }
        if !oflags.contains(fs::OpenFlags::CREATE) {
            return self.open_existing(fd, pflags, path, (oflags, dflags), how);
        }
        if !oflags.contains(fs::OpenFlags::EXCLUSIVE) {
            let again = Resource::new_borrow(fd.rep());
            match self.open_existing(again, pflags, path.clone(), (oflags, dflags), how) {
                Err(e) if is(&e, wasi::ErrorCode::NoEntry) => {}
                other => return other,
            }
        }
        let at = self.pin(fd, &path, FsOp::Open)?;
        let result = self.create_in(&at, pflags, (oflags, dflags), hops);
        self.release(at);
        result
    }

    /// Refuse to open a FIFO, socket or device that `path` leads to, before
    /// wasmtime's own open (which would block on a FIFO), where the open
    /// cannot be made non-blocking. Residual: the entry could be swapped
    /// between this look and the open (by another process, or by a
    /// concurrent call re-pointing a symlink while the kernel reports a
    /// racing rename); no guest can make a FIFO or a device itself.
    fn refuse_special(
        &mut self,
        fd: &Resource<Descriptor>,
        pflags: fs::PathFlags,
        path: &str,
    ) -> FsResult<()> {
        let at = Resource::new_borrow(fd.rep());
        match self.inner.stat_at(at, pflags, path.to_string()) {
            Ok(stat) if special_type(stat.type_) => Err(wasi::ErrorCode::Unsupported.into()),
            // Nothing there, or nothing to stat: the open says so itself.
            _ => Ok(()),
        }
    }

    /// Open an existing entry without creating or truncating it, check
    /// where it really is, then truncate if asked.
    fn open_existing(
        &mut self,
        fd: Resource<Descriptor>,
        pflags: fs::PathFlags,
        path: String,
        (oflags, mut dflags): (fs::OpenFlags, fs::DescriptorFlags),
        how: PathUse,
    ) -> FsResult<Resource<Descriptor>> {
        if how == PathUse::Change {
            dflags |= fs::DescriptorFlags::WRITE;
        }
        let plain = oflags & fs::OpenFlags::DIRECTORY;
        let opened = self.open_following(&fd, &path, (pflags, plain, dflags))?;
        let checked = self
            .path_of(&opened, FsOp::Open)
            .and_then(|rel| self.check(FsOp::Open, Some(&rel), how));
        let truncated = checked.and_then(|()| {
            if oflags.contains(fs::OpenFlags::TRUNCATE) {
                self.inner.set_size(Resource::new_borrow(opened.rep()), 0)
            } else {
                Ok(())
            }
        });
        match truncated {
            Ok(()) => Ok(opened),
            Err(e) => {
                self.close(opened);
                Err(e)
            }
        }
    }

    /// Create the entry `at` names, which did not exist: exclusively, so
    /// nothing but that entry is created.
    fn create_in(
        &mut self,
        at: &Pinned,
        pflags: fs::PathFlags,
        (oflags, dflags): (fs::OpenFlags, fs::DescriptorFlags),
        hops: u8,
    ) -> FsResult<Resource<Descriptor>> {
        let rel = at.target();
        self.check(FsOp::Open, rel.as_deref(), PathUse::Change)?;
        let special = matches!(at.leaf.trim_end_matches('/'), "" | "." | "..");
        let (Some(rel), false) = (rel, special) else {
            return self.open_existing(
                at.dir(),
                pflags,
                at.leaf.clone(),
                (oflags, dflags),
                PathUse::Change,
            );
        };
        let exclusive = oflags | fs::OpenFlags::CREATE | fs::OpenFlags::EXCLUSIVE;
        let created = self.inner.open_at(
            at.dir(),
            fs::PathFlags::empty(),
            at.leaf.clone(),
            exclusive,
            dflags,
        );
        match created {
            Ok(res) => {
                self.boundary.paths.insert(res.rep(), rel);
                Ok(res)
            }
            // It exists after all: a symlink (perhaps dangling), or a file
            // created meanwhile.
            Err(e)
                if is(&e, wasi::ErrorCode::Exist) && !oflags.contains(fs::OpenFlags::EXCLUSIVE) =>
            {
                match self.inner.readlink_at(at.dir(), at.leaf.clone()) {
                    Ok(_)
                        if !pflags.contains(fs::PathFlags::SYMLINK_FOLLOW) || hops >= MAX_HOPS =>
                    {
                        Err(wasi::ErrorCode::Loop.into())
                    }
                    Ok(link) => self.open_guarded(
                        at.dir(),
                        pflags,
                        link,
                        (oflags, dflags),
                        (None, hops + 1),
                    ),
                    Err(_) => self.open_existing(
                        at.dir(),
                        pflags,
                        at.leaf.clone(),
                        (oflags, dflags),
                        PathUse::Change,
                    ),
                }
            }
            Err(e) => Err(e),
        }
    }
}
