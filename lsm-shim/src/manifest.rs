//! The manifest: which tables are live, on which level and run, as an
//! append-only log of edits (LevelDB's `VersionEdit` log).
//!
//! A manifest file starts with one edit holding the whole state (a
//! snapshot); every flush and compaction appends one edit and syncs it before
//! the change is used, so an edit is the atomic step of the tree. `CURRENT`
//! names the live manifest; a new one is installed by writing a temporary
//! file, syncing it, renaming it over `CURRENT` and syncing the directory.
//!
//! ```text
//! edit  = field*
//! field = 1 next_file: varint
//!       | 2 log_number: varint          oldest WAL still needed
//!       | 3 level: varint  run: varint  number: varint  file_bytes: varint
//!           entries: varint  smallest: bytes  largest: bytes     (add table)
//!       | 4 number: varint                                       (remove table)
//! ```
//!
//! Edits use the record framing of [`crate::log`]: a torn last edit (the one
//! being written at a crash, whose change was never used) is dropped; any
//! other damage is an [`Error::Corruption`] naming the manifest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::coding::{put_bytes, put_varint, Cursor};
use crate::env::{Env, WritableFile};
use crate::error::{Error, Result};
use crate::filenames;
use crate::log::{encode_record, read_records, Recovery};

/// A live table as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableRecord {
    pub level: u32,
    pub run: u64,
    pub number: u64,
    pub file_bytes: u64,
    pub entries: u64,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
}

/// One atomic change of the tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Edit {
    pub next_file: Option<u64>,
    pub log_number: Option<u64>,
    pub added: Vec<TableRecord>,
    pub removed: Vec<u64>,
}

const NEXT_FILE: u8 = 1;
const LOG_NUMBER: u8 = 2;
const ADD: u8 = 3;
const REMOVE: u8 = 4;

impl Edit {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(n) = self.next_file {
            out.push(NEXT_FILE);
            put_varint(&mut out, n);
        }
        if let Some(n) = self.log_number {
            out.push(LOG_NUMBER);
            put_varint(&mut out, n);
        }
        for t in &self.added {
            out.push(ADD);
            for v in [u64::from(t.level), t.run, t.number, t.file_bytes, t.entries] {
                put_varint(&mut out, v);
            }
            put_bytes(&mut out, &t.smallest);
            put_bytes(&mut out, &t.largest);
        }
        for &n in &self.removed {
            out.push(REMOVE);
            put_varint(&mut out, n);
        }
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Option<Edit> {
        let mut c = Cursor::new(bytes);
        let mut e = Edit::default();
        while !c.is_empty() {
            match c.u8()? {
                NEXT_FILE => e.next_file = Some(c.varint()?),
                LOG_NUMBER => e.log_number = Some(c.varint()?),
                ADD => e.added.push(TableRecord {
                    level: u32::try_from(c.varint()?).ok()?,
                    run: c.varint()?,
                    number: c.varint()?,
                    file_bytes: c.varint()?,
                    entries: c.varint()?,
                    smallest: c.bytes()?.to_vec(),
                    largest: c.bytes()?.to_vec(),
                }),
                REMOVE => e.removed.push(c.varint()?),
                _ => return None,
            }
        }
        Some(e)
    }
}

/// The state the edits add up to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ManifestState {
    pub next_file: u64,
    pub log_number: u64,
    pub tables: BTreeMap<u64, TableRecord>,
}

/// Levels deeper than this are refused as corruption.
pub(crate) const MAX_LEVELS: u32 = 64;

impl ManifestState {
    /// Applies an edit; `Err` if it removes a table that is not live, adds
    /// one twice, or names an impossible level.
    pub(crate) fn apply(&mut self, e: &Edit) -> Result<(), &'static str> {
        for n in &e.removed {
            self.tables
                .remove(n)
                .ok_or("manifest removes a table that is not live")?;
        }
        for t in &e.added {
            if t.level >= MAX_LEVELS || t.smallest > t.largest {
                return Err("manifest table record");
            }
            if self.tables.insert(t.number, t.clone()).is_some() {
                return Err("manifest adds a live table twice");
            }
        }
        if let Some(n) = e.next_file {
            self.next_file = self.next_file.max(n);
        }
        if let Some(n) = e.log_number {
            self.log_number = n;
        }
        Ok(())
    }

    /// Takes the next file number.
    pub(crate) fn new_file_number(&mut self) -> u64 {
        let n = self.next_file;
        self.next_file += 1;
        n
    }

    /// The whole state as one edit: the first record of a new manifest.
    pub(crate) fn snapshot(&self) -> Edit {
        Edit {
            next_file: Some(self.next_file),
            log_number: Some(self.log_number),
            added: self.tables.values().cloned().collect(),
            removed: Vec::new(),
        }
    }
}

/// The open manifest, appended to by flushes and compactions.
pub(crate) struct ManifestWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    pub(crate) number: u64,
    pub(crate) bytes: u64,
}

impl ManifestWriter {
    /// Appends an edit and syncs it: the change is durable when this returns.
    pub(crate) fn append(&mut self, edit: &Edit) -> Result<()> {
        let record = encode_record(&edit.encode());
        self.file
            .append(&record)
            .map_err(Error::io("append to manifest", &self.path))?;
        self.file.sync().map_err(Error::io("sync manifest", &self.path))?;
        self.bytes += record.len() as u64;
        Ok(())
    }
}

/// Writes a new manifest numbered `number` holding `state`, and makes it the
/// live one (`CURRENT`). `temp_number` names the temporary file.
pub(crate) fn install_new(
    env: &dyn Env,
    dir: &Path,
    state: &ManifestState,
    number: u64,
    temp_number: u64,
) -> Result<ManifestWriter> {
    let path = dir.join(filenames::manifest(number));
    let file = env.create(&path).map_err(Error::io("create manifest", &path))?;
    let mut w = ManifestWriter {
        file,
        path,
        number,
        bytes: 0,
    };
    w.append(&state.snapshot())?;
    let temp = dir.join(filenames::temp(temp_number));
    let mut t = env.create(&temp).map_err(Error::io("create CURRENT", &temp))?;
    let contents = format!("{}\n", filenames::manifest(number));
    t.append(contents.as_bytes())
        .map_err(Error::io("write CURRENT", &temp))?;
    t.sync().map_err(Error::io("sync CURRENT", &temp))?;
    drop(t);
    let current = dir.join(filenames::CURRENT);
    env.rename(&temp, &current)
        .map_err(Error::io("rename CURRENT", &current))?;
    env.sync_dir(dir).map_err(Error::io("sync directory", dir))?;
    Ok(w)
}

/// Reads `CURRENT` and the manifest it names. `Ok(None)` if the directory
/// has no `CURRENT` (a new store).
pub(crate) fn recover(env: &dyn Env, dir: &Path) -> Result<Option<(ManifestState, u64)>> {
    let current = dir.join(filenames::CURRENT);
    let names = env.list(dir).map_err(Error::io("list directory", dir))?;
    if !names.iter().any(|n| n == filenames::CURRENT) {
        return Ok(None);
    }
    let text = env
        .read_all(&current)
        .map_err(Error::io("read CURRENT", &current))?;
    let name = std::str::from_utf8(&text)
        .ok()
        .and_then(|s| s.strip_suffix('\n'))
        .ok_or_else(|| Error::corruption(filenames::CURRENT, "not one line of text"))?;
    let Some(filenames::FileKind::Manifest(number)) = filenames::parse(name) else {
        return Err(Error::corruption(filenames::CURRENT, "does not name a manifest"));
    };
    let path = dir.join(name);
    let bytes = env.read_all(&path).map_err(Error::io("read manifest", &path))?;
    let records =
        read_records(&bytes, Recovery::TolerateTornTail).map_err(|what| Error::corruption(name, what))?;
    if records.records.is_empty() {
        // A manifest is synced with its snapshot before CURRENT names it.
        return Err(Error::corruption(name, "manifest has no snapshot record"));
    }
    let mut state = ManifestState::default();
    for r in records.records {
        let edit = Edit::decode(r).ok_or_else(|| Error::corruption(name, "manifest edit encoding"))?;
        state.apply(&edit).map_err(|what| Error::corruption(name, what))?;
    }
    Ok(Some((state, number)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::FaultEnv;

    fn record(number: u64, level: u32) -> TableRecord {
        TableRecord {
            level,
            run: number,
            number,
            file_bytes: 100,
            entries: 10,
            smallest: b"a".to_vec(),
            largest: b"m".to_vec(),
        }
    }

    #[test]
    fn edits_round_trip_and_garbage_is_refused() {
        let e = Edit {
            next_file: Some(9),
            log_number: Some(4),
            added: vec![record(5, 0), record(6, 2)],
            removed: vec![1, 2],
        };
        assert_eq!(Edit::decode(&e.encode()), Some(e.clone()));
        let bytes = e.encode();
        for cut in 1..bytes.len() {
            // Every strict prefix either fails or decodes to a different edit.
            assert_ne!(Edit::decode(&bytes[..cut]), Some(e.clone()));
        }
        assert_eq!(Edit::decode(&[9]), None);
    }

    #[test]
    fn state_applies_edits_and_refuses_impossible_ones() {
        let mut s = ManifestState::default();
        s.apply(&Edit {
            added: vec![record(1, 0)],
            ..Edit::default()
        })
        .unwrap();
        assert!(s
            .apply(&Edit {
                added: vec![record(1, 0)],
                ..Edit::default()
            })
            .is_err());
        assert!(s
            .apply(&Edit {
                removed: vec![7],
                ..Edit::default()
            })
            .is_err());
    }

    #[test]
    fn install_then_recover() {
        let env = FaultEnv::new();
        let dir = Path::new("/db");
        env.create_dir_all(dir).unwrap();
        assert_eq!(recover(&env, dir).unwrap(), None);
        let mut state = ManifestState {
            next_file: 10,
            log_number: 3,
            ..ManifestState::default()
        };
        state.tables.insert(5, record(5, 1));
        let mut w = install_new(&env, dir, &state, 8, 9).unwrap();
        let edit = Edit {
            removed: vec![5],
            added: vec![record(6, 2)],
            next_file: Some(11),
            ..Edit::default()
        };
        w.append(&edit).unwrap();
        state.apply(&edit).unwrap();
        env.crash();
        assert_eq!(recover(&env, dir).unwrap(), Some((state, 8)));
    }
}
