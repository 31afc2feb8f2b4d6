//! [`FaultEnv`]: an in-memory file system for tests that can fail any
//! mutating operation and simulate a power cut, after LevelDB's
//! `fault_injection_test.cc`.
//!
//! Model. Each file is an inode with its bytes and how many of them were
//! synced; each directory has two name tables, the *live* one every operation
//! sees and the *durable* one a power cut falls back to. `sync` on a file
//! makes its bytes so far durable; `sync_dir` copies the live names of that
//! directory into the durable table. [`FaultEnv::crash`] truncates every inode
//! to its synced length, replaces the live names with the durable ones, drops
//! what no durable name reaches, releases every lock and turns every handle
//! opened before the cut into one that fails. This is the weakest file system
//! POSIX allows, so a store that survives it survives a real one.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{Env, RandomAccessFile, WritableFile};

#[derive(Default)]
struct Inode {
    data: Vec<u8>,
    synced_len: usize,
}

type InodeRef = Arc<Mutex<Inode>>;

#[derive(Default)]
struct State {
    live: BTreeMap<PathBuf, InodeRef>,
    durable: BTreeMap<PathBuf, InodeRef>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
    /// Bumped by every crash; handles of an older generation fail.
    generation: u64,
    /// Mutating operations attempted so far (create, append, sync, rename,
    /// remove, sync_dir).
    mutations: u64,
    /// Mutation indices that fail.
    fail_at: BTreeSet<u64>,
    /// Fail every mutation from this index on.
    fail_from: Option<u64>,
    /// Cut the power when this mutation is attempted.
    crash_at: Option<u64>,
    /// Mutations that failed so far.
    failures: u64,
}

impl State {
    fn power_cut(&mut self) {
        self.generation += 1;
        self.locks.clear();
        self.live = self.durable.clone();
        for inode in self.live.values() {
            let mut i = inode.lock().unwrap_or_else(|e| e.into_inner());
            let keep = i.synced_len;
            i.data.truncate(keep);
        }
    }

    /// Counts one mutation and says whether it must fail.
    fn mutation(&mut self) -> io::Result<()> {
        let i = self.mutations;
        self.mutations += 1;
        if self.crash_at == Some(i) {
            self.crash_at = None;
            self.power_cut();
            // The machine is off: nothing more reaches the disk.
            self.fail_from = Some(i);
        }
        if self.fail_at.contains(&i) || self.fail_from.is_some_and(|f| i >= f) {
            self.failures += 1;
            return Err(io::Error::other(format!("injected fault at mutation {i}")));
        }
        Ok(())
    }
}

/// An in-memory file system that fails chosen operations and cuts the power
/// on demand. Clones share one file system.
///
/// ```
/// use std::path::Path;
/// use amq_lsm::env::{Env, FaultEnv};
/// let env = FaultEnv::new();
/// let dir = Path::new("/db");
/// env.create_dir_all(dir).unwrap();
/// let mut f = env.create(&dir.join("a")).unwrap();
/// f.append(b"synced").unwrap();
/// f.sync().unwrap();
/// env.sync_dir(dir).unwrap();
/// f.append(b" lost").unwrap();
/// env.crash();
/// assert_eq!(env.read_all(&dir.join("a")).unwrap(), b"synced");
/// ```
#[derive(Clone, Default)]
pub struct FaultEnv {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for FaultEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("FaultEnv")
            .field("files", &s.live.len())
            .field("mutations", &s.mutations)
            .finish()
    }
}

impl FaultEnv {
    /// An empty file system with no faults planned.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic in a test while holding the lock must not hide the state
        // from the assertions that follow.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Mutating operations attempted so far.
    pub fn mutations(&self) -> u64 {
        self.lock().mutations
    }

    /// Injected failures so far.
    pub fn failures(&self) -> u64 {
        self.lock().failures
    }

    /// Makes the mutation with index `i` (counted from the creation of this
    /// file system) fail. A failed append writes the first half of its bytes.
    pub fn fail_at(&self, i: u64) {
        self.lock().fail_at.insert(i);
    }

    /// Makes every mutation from index `i` on fail (a disk that went away).
    pub fn fail_from(&self, i: u64) {
        self.lock().fail_from = Some(i);
    }

    /// Removes every planned fault.
    pub fn clear_faults(&self) {
        let mut s = self.lock();
        s.fail_at.clear();
        s.fail_from = None;
        s.crash_at = None;
    }

    /// Simulates a power cut: drops every byte and name not made durable by a
    /// sync, releases locks, and makes every handle opened before it fail.
    pub fn crash(&self) {
        self.lock().power_cut();
    }

    /// Cuts the power when mutation `i` is attempted (it and every later
    /// mutation fail, as on a machine that lost power mid-operation), so a
    /// test can crash inside any step of a flush, compaction or manifest
    /// update. [`clear_faults`](Self::clear_faults) "reboots".
    pub fn crash_at(&self, i: u64) {
        self.lock().crash_at = Some(i);
    }

    /// Changes a file's bytes in place (durably): for corruption tests.
    pub fn corrupt(&self, path: &Path, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let s = self.lock();
        let inode = s.live.get(path).ok_or_else(|| not_found(path))?;
        let mut i = inode.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut i.data);
        i.synced_len = i.data.len();
        Ok(())
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{} not found", path.display()))
}

struct MemWritable {
    env: FaultEnv,
    inode: InodeRef,
    generation: u64,
}

impl MemWritable {
    fn check(&self, s: &mut State) -> io::Result<()> {
        if s.generation != self.generation {
            return Err(io::Error::other("handle from before a crash"));
        }
        s.mutation()
    }
}

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        let mut s = self.env.lock();
        let r = self.check(&mut s);
        let mut i = self.inode.lock().unwrap_or_else(|e| e.into_inner());
        match r {
            Ok(()) => {
                i.data.extend_from_slice(data);
                Ok(())
            }
            Err(e) => {
                if s.generation == self.generation {
                    // A torn write: part of the bytes reached the file.
                    i.data.extend_from_slice(&data[..data.len() / 2]);
                }
                Err(e)
            }
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        let s = self.env.lock();
        if s.generation != self.generation {
            return Err(io::Error::other("handle from before a crash"));
        }
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        let mut s = self.env.lock();
        self.check(&mut s)?;
        let mut i = self.inode.lock().unwrap_or_else(|e| e.into_inner());
        i.synced_len = i.data.len();
        Ok(())
    }
}

struct MemReadable {
    inode: InodeRef,
}

impl RandomAccessFile for MemReadable {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let i = self.inode.lock().unwrap_or_else(|e| e.into_inner());
        let start = usize::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| i.data.get(start..end))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn len(&self) -> u64 {
        self.inode.lock().unwrap_or_else(|e| e.into_inner()).data.len() as u64
    }
}

struct MemLock {
    env: FaultEnv,
    path: PathBuf,
    generation: u64,
}

impl Drop for MemLock {
    fn drop(&mut self) {
        let mut s = self.env.lock();
        if s.generation == self.generation {
            s.locks.remove(&self.path);
        }
    }
}

fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}

impl Env for FaultEnv {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        // Directories themselves are durable at once (the store's directory
        // exists before the store runs).
        self.lock().dirs.insert(dir.to_path_buf());
        Ok(())
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let mut s = self.lock();
        if !s.dirs.contains(parent(path)) {
            return Err(not_found(parent(path)));
        }
        s.mutation()?;
        let inode = InodeRef::default();
        s.live.insert(path.to_path_buf(), inode.clone());
        Ok(Box::new(MemWritable {
            env: self.clone(),
            inode,
            generation: s.generation,
        }))
    }

    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let s = self.lock();
        let inode = s.live.get(path).ok_or_else(|| not_found(path))?.clone();
        Ok(Arc::new(MemReadable { inode }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.lock();
        if !s.live.contains_key(from) {
            return Err(not_found(from));
        }
        s.mutation()?;
        let inode = s.live.remove(from).ok_or_else(|| not_found(from))?;
        s.live.insert(to.to_path_buf(), inode);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut s = self.lock();
        if !s.live.contains_key(path) {
            return Err(not_found(path));
        }
        s.mutation()?;
        s.live.remove(path);
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.lock();
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        Ok(s.live
            .keys()
            .filter(|p| parent(p) == dir)
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.lock();
        s.mutation()?;
        let s = &mut *s;
        s.durable.retain(|p, _| parent(p) != dir);
        for (p, inode) in &s.live {
            if parent(p) == dir {
                s.durable.insert(p.clone(), inode.clone());
            }
        }
        Ok(())
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn Send + Sync>> {
        let mut s = self.lock();
        if !s.locks.insert(path.to_path_buf()) {
            return Err(io::Error::new(io::ErrorKind::WouldBlock, "locked"));
        }
        Ok(Box::new(MemLock {
            env: self.clone(),
            path: path.to_path_buf(),
            generation: s.generation,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (FaultEnv, PathBuf) {
        let env = FaultEnv::new();
        let dir = PathBuf::from("/d");
        env.create_dir_all(&dir).unwrap();
        (env, dir)
    }

    #[test]
    fn unsynced_names_and_bytes_are_lost_at_a_crash() {
        let (env, dir) = setup();
        let mut a = env.create(&dir.join("a")).unwrap();
        a.append(b"one").unwrap();
        a.sync().unwrap();
        // The name of `a` was never made durable.
        env.crash();
        assert!(env.list(&dir).unwrap().is_empty());

        let mut b = env.create(&dir.join("b")).unwrap();
        b.append(b"12").unwrap();
        b.sync().unwrap();
        env.sync_dir(&dir).unwrap();
        b.append(b"34").unwrap();
        env.rename(&dir.join("b"), &dir.join("c")).unwrap();
        env.crash();
        // The rename was not synced; the unsynced bytes are gone.
        assert_eq!(env.list(&dir).unwrap(), vec!["b".to_string()]);
        assert_eq!(env.read_all(&dir.join("b")).unwrap(), b"12");
        // Old handles fail after the crash.
        assert!(b.append(b"x").is_err());
    }

    #[test]
    fn a_planned_fault_fails_that_mutation_only() {
        let (env, dir) = setup();
        let mut a = env.create(&dir.join("a")).unwrap(); // mutation 0
        env.fail_at(2);
        a.append(b"abcd").unwrap(); // 1
        assert!(a.append(b"efgh").is_err()); // 2: torn, half written
        a.append(b"ij").unwrap(); // 3
        assert_eq!(env.read_all(&dir.join("a")).unwrap(), b"abcdefij");
        assert_eq!(env.failures(), 1);
        env.fail_from(4);
        assert!(a.sync().is_err());
        assert!(env.sync_dir(&dir).is_err());
        env.clear_faults();
        a.sync().unwrap();
    }

    #[test]
    fn a_planned_crash_cuts_the_power_mid_operation() {
        let (env, dir) = setup();
        let mut a = env.create(&dir.join("a")).unwrap(); // 0
        a.append(b"kept").unwrap(); // 1
        a.sync().unwrap(); // 2
        env.sync_dir(&dir).unwrap(); // 3
        env.crash_at(5);
        a.append(b"lost").unwrap(); // 4
        assert!(a.sync().is_err()); // 5: the power goes
        assert!(env.create(&dir.join("b")).is_err());
        env.clear_faults();
        assert_eq!(env.read_all(&dir.join("a")).unwrap(), b"kept");
        assert_eq!(env.list(&dir).unwrap(), vec!["a".to_string()]);
    }

    #[test]
    fn removal_is_durable_only_after_a_dir_sync() {
        let (env, dir) = setup();
        let mut a = env.create(&dir.join("a")).unwrap();
        a.sync().unwrap();
        env.sync_dir(&dir).unwrap();
        env.remove_file(&dir.join("a")).unwrap();
        env.crash();
        assert_eq!(env.list(&dir).unwrap(), vec!["a".to_string()]);
    }

    #[test]
    fn locks_are_exclusive_and_released_on_drop() {
        let (env, dir) = setup();
        let g = Env::lock(&env, &dir.join("LOCK")).unwrap();
        assert!(Env::lock(&env, &dir.join("LOCK")).is_err());
        drop(g);
        let _g = Env::lock(&env, &dir.join("LOCK")).unwrap();
    }
}
