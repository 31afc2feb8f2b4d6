//! The store's directory lock ([`Env::lock`](super::Env::lock) of
//! [`StdEnv`](super::StdEnv)): one open `Db` per directory, across
//! processes and within one, and held by no process that did not take it.
//!
//! On Unix it is a POSIX record lock (`fcntl(F_SETLK)`, as LevelDB and
//! RocksDB lock). A record lock belongs to the process that took it: a child
//! that `fork` makes does not inherit it. An `flock` lock (what
//! `std::fs::File::try_lock` takes on Linux) belongs to the open file
//! instead, which a child forked by any thread shares through its copy of
//! the descriptor until it calls `exec`: a store closed by its parent stays
//! locked that long, and an open that comes then fails.
//!
//! Record locks have two traps, both closed here: they never conflict within
//! one process, so a registry of the paths this process holds refuses a
//! second lock; and closing *any* descriptor of the file drops the
//! process's lock, so the registry is checked before the file is opened,
//! and the holder closes its descriptor before leaving the registry.
//! Elsewhere the lock is `File::try_lock`'s, behind the same registry.

#![allow(unsafe_code)]

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Every lock file this process holds, by canonical path.
static HELD: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

fn held() -> MutexGuard<'static, BTreeSet<PathBuf>> {
    // The set stays consistent through a panic elsewhere: take it anyway.
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// A held lock on a store's lock file: released on drop.
#[derive(Debug)]
pub(crate) struct DirLock {
    file: Option<File>,
    key: PathBuf,
}

/// The error a held lock gives.
fn would_block() -> io::Error {
    io::Error::new(io::ErrorKind::WouldBlock, "locked")
}

/// Takes the lock on `path` (created if missing; its directory must
/// exist): [`io::ErrorKind::WouldBlock`] if this or another process holds
/// it.
pub(crate) fn lock(path: &Path) -> io::Result<DirLock> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let key = dir.canonicalize()?.join(name);
    let mut held = held();
    if held.contains(&key) {
        return Err(would_block());
    }
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    lock_file(&file)?;
    held.insert(key.clone());
    Ok(DirLock {
        file: Some(file),
        key,
    })
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let mut held = held();
        // Closing the descriptor releases the lock; only then may another
        // thread of this process open the file.
        drop(self.file.take());
        held.remove(&self.key);
    }
}

#[cfg(unix)]
fn lock_file(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: `flock` is a plain C struct of integers, for which all zero
    // bytes are a valid value (the fields set below, and zero for the rest:
    // a write lock of the whole file, from offset 0 to its end).
    let mut region: libc::flock = unsafe { std::mem::zeroed() };
    region.l_type = libc::F_WRLCK as _;
    region.l_whence = libc::SEEK_SET as _;
    // SAFETY: the descriptor is open for the call (`file` is borrowed), and
    // `region` is a valid, exclusively borrowed `flock` that `F_SETLK`
    // only reads.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &mut region as *mut libc::flock) };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Err(would_block()),
        _ => Err(e),
    }
}

#[cfg(not(unix))]
fn lock_file(file: &File) -> io::Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(would_block()),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within one process: a second lock of the same file, by any path to
    /// it, is refused; dropping the first frees it; a refused attempt does
    /// not release the holder's lock (it never opened the file).
    #[test]
    fn one_holder_per_file_within_a_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let first = lock(&path).unwrap();
        assert_eq!(lock(&path).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        let other_way = dir.path().join(".").join("LOCK");
        assert_eq!(lock(&other_way).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        drop(first);
        let again = lock(&other_way).unwrap();
        drop(again);
        assert!(lock(&dir.path().join("missing").join("LOCK")).is_err());
    }
}
