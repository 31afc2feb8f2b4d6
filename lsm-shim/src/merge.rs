//! Merging sorted sources into one, newest version of each key first: what a
//! scan and a compaction both do.
//!
//! Sources are given newest first, all ascending or all descending. A heap
//! orders their heads by key (least first, or greatest first for a backward
//! merge), then by source index, so of several sources holding one key the
//! newest is popped first and the older versions are skipped. An error from
//! any source ends the merge with that error.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::block::Direction;
use crate::error::Result;
use crate::memtable::Entry;

/// A sorted stream of entries.
pub(crate) type Source<'a> = Box<dyn Iterator<Item = Result<(Vec<u8>, Entry)>> + Send + 'a>;

/// A source's head in the heap: `BinaryHeap` pops its greatest element, so
/// "greatest" here is the head to pop first.
#[derive(PartialEq, Eq)]
struct Head {
    key: Vec<u8>,
    source: usize,
    direction: Direction,
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        let keys = match self.direction {
            Direction::Forward => other.key.cmp(&self.key),
            Direction::Backward => self.key.cmp(&other.key),
        };
        // Of equal keys, the newest (lowest index) first.
        keys.then_with(|| other.source.cmp(&self.source))
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

pub(crate) struct MergeIter<'a> {
    sources: Vec<Source<'a>>,
    heads: Vec<Option<Entry>>,
    heap: BinaryHeap<Head>,
    direction: Direction,
    /// An error read while filling the heap, returned next.
    pending_error: Option<crate::Error>,
    done: bool,
}

impl<'a> MergeIter<'a> {
    /// Merges ascending `sources`, newest first.
    pub(crate) fn new(sources: Vec<Source<'a>>) -> Self {
        Self::with_direction(sources, Direction::Forward)
    }

    /// Merges `sources`, newest first, each in `direction` order.
    pub(crate) fn with_direction(sources: Vec<Source<'a>>, direction: Direction) -> Self {
        let n = sources.len();
        let mut m = MergeIter {
            sources,
            heads: vec![None; n],
            heap: BinaryHeap::with_capacity(n),
            direction,
            pending_error: None,
            done: false,
        };
        for i in 0..n {
            m.advance(i);
        }
        m
    }

    /// Pulls the next entry of source `i` into the heap.
    fn advance(&mut self, i: usize) {
        match self.sources[i].next() {
            Some(Ok((key, e))) => {
                self.heads[i] = Some(e);
                self.heap.push(Head {
                    key,
                    source: i,
                    direction: self.direction,
                });
            }
            Some(Err(e)) if self.pending_error.is_none() => self.pending_error = Some(e),
            Some(Err(_)) => {}
            None => {}
        }
    }
}

impl Iterator for MergeIter<'_> {
    type Item = Result<(Vec<u8>, Entry)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.pending_error.take() {
            self.done = true;
            return Some(Err(e));
        }
        let Head { key, source: i, .. } = self.heap.pop()?;
        let entry = self.heads[i].take()?;
        self.advance(i);
        // Older versions of the same key.
        while self.heap.peek().is_some_and(|h| h.key == key) {
            let Some(Head { source: j, .. }) = self.heap.pop() else {
                break;
            };
            self.heads[j] = None;
            self.advance(j);
        }
        // An error met while advancing is returned by the next call: the
        // entry popped here is correct, since its sources were all read.
        Some(Ok((key, entry)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn source(entries: &BTreeMap<Vec<u8>, Option<u8>>) -> Source<'static> {
        let v: Vec<_> = entries
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.map_or(Entry::Tombstone, |b| Entry::Value(vec![b])))))
            .collect();
        Box::new(v.into_iter())
    }

    fn reversed(entries: &BTreeMap<Vec<u8>, Option<u8>>) -> Source<'static> {
        let v: Vec<_> = source(entries).collect();
        Box::new(v.into_iter().rev())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, rng_seed: proptest::test_runner::RngSeed::Fixed(2), ..ProptestConfig::default() })]
        #[test]
        fn newest_version_of_every_key_in_order(
            runs in proptest::collection::vec(
                proptest::collection::btree_map(proptest::collection::vec(0u8..3, 0..3), proptest::option::of(any::<u8>()), 0..10),
                0..5)
        ) {
            // The model: apply runs oldest first, so newer ones overwrite.
            let mut model = BTreeMap::new();
            for r in runs.iter().rev() {
                for (k, v) in r {
                    model.insert(k.clone(), *v);
                }
            }
            let merged: Vec<_> = MergeIter::new(runs.iter().map(source).collect()).map(|r| r.unwrap()).collect();
            let expect: Vec<_> = model
                .into_iter()
                .map(|(k, v)| (k, v.map_or(Entry::Tombstone, |b| Entry::Value(vec![b]))))
                .collect();
            // Backward: the same entries, greatest key first.
            let backward: Vec<_> = MergeIter::with_direction(runs.iter().map(reversed).collect(), Direction::Backward)
                .map(|r| r.unwrap())
                .collect();
            let mut expect_backward = expect.clone();
            expect_backward.reverse();
            prop_assert_eq!(merged, expect);
            prop_assert_eq!(backward, expect_backward);
        }
    }

    #[test]
    fn an_error_ends_the_merge() {
        let bad: Source = Box::new(
            vec![
                Ok((b"a".to_vec(), Entry::Tombstone)),
                Err(crate::Error::corruption("t", "x")),
            ]
            .into_iter(),
        );
        let out: Vec<_> = MergeIter::new(vec![bad]).collect();
        assert_eq!(out.len(), 2);
        assert!(out[1].is_err());
    }
}
