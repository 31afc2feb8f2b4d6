//! The files of a store's directory and their names.
//!
//! | file | name | what |
//! |------|------|------|
//! | table | `000012.sst` | an SSTable |
//! | log | `000013.wal` | a write-ahead log |
//! | manifest | `MANIFEST-000011` | the edit log of live tables |
//! | current | `CURRENT` | the name of the live manifest |
//! | lock | `LOCK` | held while the store is open |
//! | temporary | `000014.tmp` | a `CURRENT` being replaced |
//!
//! Numbers come from one counter recorded in the manifest, so no two files
//! ever share one.

use std::path::Path;

pub(crate) const CURRENT: &str = "CURRENT";
pub(crate) const LOCK: &str = "LOCK";
const MANIFEST_PREFIX: &str = "MANIFEST-";

/// What a file in the directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Table(u64),
    Wal(u64),
    Manifest(u64),
    Temp(u64),
    Current,
    Lock,
}

pub(crate) fn table(number: u64) -> String {
    format!("{number:06}.sst")
}

pub(crate) fn wal(number: u64) -> String {
    format!("{number:06}.wal")
}

pub(crate) fn manifest(number: u64) -> String {
    format!("{MANIFEST_PREFIX}{number:06}")
}

pub(crate) fn temp(number: u64) -> String {
    format!("{number:06}.tmp")
}

/// Parses a name of this module's forms; `None` for anything else (which
/// the store leaves alone).
pub(crate) fn parse(name: &str) -> Option<FileKind> {
    match name {
        CURRENT => return Some(FileKind::Current),
        LOCK => return Some(FileKind::Lock),
        _ => {}
    }
    if let Some(n) = name.strip_prefix(MANIFEST_PREFIX) {
        return number(n).map(FileKind::Manifest);
    }
    let (stem, ext) = name.split_once('.')?;
    let n = number(stem)?;
    match ext {
        "sst" => Some(FileKind::Table(n)),
        "wal" => Some(FileKind::Wal(n)),
        "tmp" => Some(FileKind::Temp(n)),
        _ => None,
    }
}

fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The last component of `path`, for error messages.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        assert_eq!(parse(&table(7)), Some(FileKind::Table(7)));
        assert_eq!(parse(&wal(1234567)), Some(FileKind::Wal(1234567)));
        assert_eq!(parse(&manifest(3)), Some(FileKind::Manifest(3)));
        assert_eq!(parse(&temp(9)), Some(FileKind::Temp(9)));
        assert_eq!(parse("CURRENT"), Some(FileKind::Current));
        for other in ["x.sst", "1.txt", "MANIFEST-", "+1.sst", "notes", ".sst"] {
            assert_eq!(parse(other), None, "{other}");
        }
    }
}
