//! Typed errors of the store. Every failure names what failed and, for a
//! damaged or unreadable file, which file.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why an operation on the store failed.
///
/// ```
/// use amq_lsm::Error;
/// let e = Error::Corruption { file: "000007.sst".into(), what: "data block checksum" };
/// assert_eq!(e.to_string(), "corruption in 000007.sst: data block checksum");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file operation failed.
    Io {
        /// What the store was doing (`"append to WAL"`, `"sync table"`, ...).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// A file's bytes are damaged: a checksum does not match, a length points
    /// outside the file, a field cannot be decoded.
    Corruption {
        /// The file's name (inside the store's directory).
        file: String,
        /// Which part of it.
        what: &'static str,
    },
    /// A table's filter block is damaged, of an unknown kind or undecodable,
    /// and [`Options::strict_filters`](crate::Options::strict_filters) is set.
    /// Without that option the table is used with no filter instead.
    UntrustedFilter {
        /// The table file's name.
        file: String,
        /// Why the filter was not trusted.
        reason: String,
    },
    /// An option is out of range.
    InvalidOptions(&'static str),
    /// Building a table's filter failed (parameters the filter kind rejects).
    Filter(amq::Error),
    /// An earlier write-path I/O error stopped all writes; reads still work.
    /// Reopen the store to recover.
    WritesStopped,
    /// Another `Db` (in this or another process) holds the directory's lock.
    Locked(PathBuf),
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { op, path, source }
    }

    pub(crate) fn corruption(file: impl Into<String>, what: &'static str) -> Error {
        Error::Corruption {
            file: file.into(),
            what,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { op, path, .. } => write!(f, "I/O error: {op} {}", path.display()),
            Error::Corruption { file, what } => write!(f, "corruption in {file}: {what}"),
            Error::UntrustedFilter { file, reason } => {
                write!(f, "untrusted filter block in {file}: {reason}")
            }
            Error::InvalidOptions(why) => write!(f, "invalid options: {why}"),
            Error::Filter(_) => write!(f, "building a filter failed"),
            Error::WritesStopped => write!(f, "writes stopped after an earlier I/O error; reopen the store"),
            Error::Locked(p) => write!(f, "{} is locked by another open store", p.display()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Filter(e) => Some(e),
            _ => None,
        }
    }
}

impl From<amq::Error> for Error {
    fn from(e: amq::Error) -> Self {
        Error::Filter(e)
    }
}

/// `Result` with the store's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
