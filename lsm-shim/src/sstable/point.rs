//! Point lookups in one table: [`Table::get_given`] for `Db::get` and
//! [`Table::get_many`] for `Db::multi_get`: the filter (whole, a partition,
//! or the key's prefix), then the index, then one data block.

use amq::{Filter, KeyHash};

use super::partitions::PartitionedFilter;
use super::prefixes::KeyPrefix;
use super::reader::FilterState;
use super::Table;
use crate::block::Block;
use crate::error::{Error, Result};
use crate::memtable::Entry;
use crate::stats::ReadCounts;

impl Table {
    /// Looks `key` up in a table whose range covers it, given its whole
    /// filter's answer (`None` when it has no whole trusted filter of whole
    /// keys): the filter first (a partitioned filter's partition for the
    /// key, probed with `hash`; a filter of prefixes only, probed with the
    /// key's prefix), then the index, then one data block. `None` if the
    /// table does not hold the key.
    #[inline]
    pub(crate) fn get_given(
        &self,
        key: &[u8],
        hash: KeyHash,
        answer: Option<bool>,
        prefix: &mut KeyPrefix<'_>,
        counts: &mut ReadCounts,
    ) -> Result<Option<Entry>> {
        let answer = match (answer, &self.filter) {
            (None, FilterState::Partitioned(f)) if self.contents.whole_keys => {
                match self.partition_for(f, key) {
                    Some(i) => self.partition_answer(f, i, hash, counts)?,
                    // Past the table's last key.
                    None => return Ok(None),
                }
            }
            (None, _) if self.wants_key_prefix() => self.key_prefix_answer(key, prefix, counts)?,
            _ => answer,
        };
        let filtered = match answer {
            Some(maybe) => {
                counts.filter_probes += 1;
                if !maybe {
                    counts.filter_negatives += 1;
                    return Ok(None);
                }
                true
            }
            None => false,
        };
        let found = self.get_in_block(key, self.block_for(key), counts)?;
        if filtered {
            match found {
                Some(_) => counts.filter_true_positives += 1,
                None => counts.filter_false_positives += 1,
            }
        }
        Ok(found)
    }

    /// The data block that holds `key` if the table does (the index's
    /// length if it lies past the last one).
    #[inline]
    fn block_for(&self, key: &[u8]) -> usize {
        self.index.partition_point(|(last, _)| last.as_slice() < key)
    }

    fn get_in_block(&self, key: &[u8], block: usize, counts: &mut ReadCounts) -> Result<Option<Entry>> {
        let Some(&(_, handle)) = self.index.get(block) else {
            return Ok(None);
        };
        counts.data_blocks_read += 1;
        let data = self.read_data_block(handle)?;
        let block = Block::new(&data).map_err(|what| Error::corruption(self.name(), what))?;
        let e = block
            .get(key)
            .map_err(|what| Error::corruption(self.name(), what))?;
        Ok(e.map(|e| e.to_entry()))
    }

    /// Looks up several keys at once, each in this table's range (`hashes`
    /// their [`amq::hash_key`] values): one batch probe of the filter
    /// (`contains_many`: every line prefetched, then probed; for a
    /// partitioned filter, one batch per partition, each partition read
    /// once), then each data block the surviving keys need, read once for
    /// all of them. Calls `found(i, entry)` for every key `i` the table
    /// holds.
    pub(crate) fn get_many(
        &self,
        keys: &[&[u8]],
        hashes: &[KeyHash],
        prefixes: &[Option<KeyHash>],
        counts: &mut ReadCounts,
        mut found: impl FnMut(usize, Entry),
    ) -> Result<()> {
        // Per key: the filter's answer, `None` where no filter was usable.
        let mut answers: Vec<Option<bool>> = vec![None; keys.len()];
        if self.contents.whole_keys {
            self.filter_answers(keys, hashes, &mut answers, counts)?;
        } else if self.wants_key_prefix() && prefixes.len() == keys.len() {
            // A filter of prefixes only: each key in the extractor's domain
            // is asked by its prefix, in its own partition.
            let (asked, asked_hashes): (Vec<usize>, Vec<KeyHash>) =
                (0..keys.len()).filter_map(|i| Some((i, prefixes[i]?))).unzip();
            let asked_keys: Vec<&[u8]> = asked.iter().map(|&i| keys[i]).collect();
            let mut got = vec![None; asked.len()];
            self.filter_answers(&asked_keys, &asked_hashes, &mut got, counts)?;
            for (&i, a) in asked.iter().zip(got) {
                answers[i] = a;
            }
        }
        counts.filter_probes += answers.iter().filter(|a| a.is_some()).count() as u64;
        counts.filter_negatives += answers.iter().filter(|&&a| a == Some(false)).count() as u64;
        // (data block, key) for every key the filter lets through.
        let mut wanted: Vec<(usize, usize)> = (0..keys.len())
            .filter(|&i| answers[i] != Some(false))
            .map(|i| (self.block_for(keys[i]), i))
            .collect();
        wanted.sort_unstable();
        for group in wanted.chunk_by(|a, b| a.0 == b.0) {
            let data = match self.index.get(group[0].0) {
                Some(&(_, handle)) => {
                    counts.data_blocks_read += 1;
                    Some(self.read_data_block(handle)?)
                }
                None => None,
            };
            let block = match &data {
                Some(d) => Some(Block::new(d).map_err(|what| Error::corruption(self.name(), what))?),
                None => None,
            };
            for &(_, i) in group {
                let e = match &block {
                    Some(b) => b
                        .get(keys[i])
                        .map_err(|what| Error::corruption(self.name(), what))?
                        .map(|e| e.to_entry()),
                    None => None,
                };
                if answers[i] == Some(true) {
                    match e {
                        Some(_) => counts.filter_true_positives += 1,
                        None => counts.filter_false_positives += 1,
                    }
                }
                if let Some(e) = e {
                    found(i, e);
                }
            }
        }
        Ok(())
    }

    /// The filter's answers for `keys`, asked with `hashes`: one batch for a
    /// whole filter; per partition for a partitioned one.
    fn filter_answers(
        &self,
        keys: &[&[u8]],
        hashes: &[KeyHash],
        answers: &mut [Option<bool>],
        counts: &mut ReadCounts,
    ) -> Result<()> {
        match &self.filter {
            FilterState::Trusted(f) => {
                let mut maybe = vec![true; keys.len()];
                f.contains_hashes(hashes, &mut maybe);
                for (a, m) in answers.iter_mut().zip(maybe) {
                    *a = Some(m);
                }
            }
            FilterState::Partitioned(f) => self.partition_answers(f, keys, hashes, answers, counts)?,
            FilterState::Absent | FilterState::Untrusted(_) => {}
        }
        Ok(())
    }

    /// A partitioned filter's answers for `keys`: the keys grouped by
    /// partition, each partition read once and probed for its group in one
    /// batch. (Keys past the table's last key get none.)
    fn partition_answers(
        &self,
        f: &PartitionedFilter,
        keys: &[&[u8]],
        hashes: &[KeyHash],
        answers: &mut [Option<bool>],
        counts: &mut ReadCounts,
    ) -> Result<()> {
        let mut by_part: Vec<(usize, usize)> = (0..keys.len())
            .filter_map(|i| Some((self.partition_for(f, keys[i])?, i)))
            .collect();
        by_part.sort_unstable();
        let mut group_hashes = Vec::new();
        for group in by_part.chunk_by(|a, b| a.0 == b.0) {
            group_hashes.clear();
            group_hashes.extend(group.iter().map(|&(_, i)| hashes[i]));
            let maybe = self.with_partition(f, group[0].0, counts, |filter| {
                let mut maybe = vec![true; group_hashes.len()];
                filter.contains_hashes(&group_hashes, &mut maybe);
                maybe
            })?;
            if let Some(maybe) = maybe {
                for (&(_, i), m) in group.iter().zip(maybe) {
                    answers[i] = Some(m);
                }
            }
        }
        Ok(())
    }
}
