//! All file I/O of the store goes through [`Env`], as in LevelDB: the real
//! file system ([`StdEnv`]) in use, and an in-memory file system that can fail
//! any operation or cut the power ([`FaultEnv`]) in tests.
//!
//! The durability contract the store relies on is the POSIX minimum, which
//! [`FaultEnv`] enforces exactly:
//! - bytes appended to a file survive a power cut only after
//!   [`WritableFile::sync`] on that file;
//! - a file's *name* (its creation, a rename or a removal) survives only after
//!   [`Env::sync_dir`] on its directory.
//!
//! So the store syncs a new file's contents, then its directory, before it
//! counts on the file; and it installs a new `CURRENT` by writing a temporary
//! file, syncing it, renaming it and syncing the directory.

mod fault;
mod lock;

pub use fault::FaultEnv;

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

/// A file opened for appending.
pub trait WritableFile: Send {
    /// Appends `data`. It may sit in a buffer until [`flush`](Self::flush).
    fn append(&mut self, data: &[u8]) -> io::Result<()>;
    /// Hands buffered bytes to the operating system, so they survive the
    /// process (not a power cut).
    fn flush(&mut self) -> io::Result<()>;
    /// Flushes, then makes the file's contents durable (`fsync`).
    fn sync(&mut self) -> io::Result<()>;
}

/// A file opened for positional reads.
pub trait RandomAccessFile: Send + Sync {
    /// Fills `buf` from byte `offset`; an error if the file is shorter.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// The file's length in bytes.
    fn len(&self) -> u64;
    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The store's view of a file system.
pub trait Env: Send + Sync {
    /// Creates `dir` and its parents if missing.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Creates `path` empty (truncating an existing file) for appending.
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Opens `path` for positional reads.
    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>>;
    /// Renames `from` to `to`, replacing `to` if it exists.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the file at `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// The names of the files in `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Makes the directory's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Takes an exclusive lock on `path` (creating it), held until the
    /// returned guard is dropped. Fails if it is already held.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn Send + Sync>>;

    /// Reads the whole file.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let f = self.open_read(path)?;
        let len = usize::try_from(f.len()).map_err(|_| io::Error::other("file too large"))?;
        let mut buf = vec![0; len];
        f.read_exact_at(0, &mut buf)?;
        Ok(buf)
    }
}

/// The real file system, through `std::fs`.
///
/// ```
/// use amq_lsm::env::{Env, StdEnv};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f");
/// let mut f = StdEnv.create(&path).unwrap();
/// f.append(b"hello").unwrap();
/// f.sync().unwrap();
/// assert_eq!(StdEnv.read_all(&path).unwrap(), b"hello");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct StdEnv;

struct StdWritable(BufWriter<File>);

impl WritableFile for StdWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.0.write_all(data)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
    fn sync(&mut self) -> io::Result<()> {
        self.0.flush()?;
        self.0.get_ref().sync_data()
    }
}

struct StdReadable {
    file: File,
    len: u64,
}

impl RandomAccessFile for StdReadable {
    #[cfg(unix)]
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }
    #[cfg(windows)]
    fn read_exact_at(&self, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            match self.file.seek_read(buf, offset)? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }
    fn len(&self) -> u64 {
        self.len
    }
}

impl Env for StdEnv {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(StdWritable(BufWriter::with_capacity(64 << 10, f))))
    }
    fn open_read(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(Arc::new(StdReadable { file, len }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        // Directories cannot be opened for syncing on every platform; where
        // they can (Unix), an fsync makes the entries durable.
        #[cfg(unix)]
        File::open(dir)?.sync_all()?;
        #[cfg(not(unix))]
        let _ = dir;
        Ok(())
    }
    /// A POSIX record lock on Unix, not inherited by forked children
    /// (`env/lock.rs`).
    fn lock(&self, path: &Path) -> io::Result<Box<dyn Send + Sync>> {
        Ok(Box::new(lock::lock(path)?))
    }
}
