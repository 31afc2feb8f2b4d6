//! [`ValueIndex`]: the writer's value index. It follows the live table set
//! (every flush and compaction), loads each new table's value filter once,
//! keeps the trusted ones as leaves of the hierarchy and columns of the
//! flat variant (kept only when [`ValueIndexOptions::method`] is
//! [`SearchMethod::Flat`]: its upkeep is ten times the hierarchy's,
//! `docs/value-search.md`), and the others as tables to scan. Readers get an immutable
//! [`ValueSnapshot`], published with the version it matches.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use amq::StandardBloom;

use super::flat::Flat;
use super::hierarchy::{Hierarchy, Slot};
use super::stats::{ValueCounters, ValueStats};
use crate::sstable::{BlockType, Table};
use crate::value_filter::options::{SearchMethod, UpdateStrategy, ValueIndexOptions};
use crate::value_filter::{self as filter, Shape};

/// A table with a trusted value filter.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    pub table: Arc<Table>,
    pub filter: Arc<StandardBloom>,
    /// `fill^k`: the filter's false-positive rate estimated from its bits.
    fpr: f64,
}

/// What a value search reads: consistent with the version published with it.
#[derive(Debug, Clone)]
pub(crate) struct ValueSnapshot {
    pub shape: Shape,
    pub slots: Vec<Option<Leaf>>,
    pub unfiltered: Vec<Arc<Table>>,
    pub hierarchy: Hierarchy,
    /// The bit-sliced leaves, if kept (`None`: a search for `Flat` probes
    /// every leaf instead).
    pub flat: Option<Flat>,
    /// Mean estimated false-positive rate of the leaves (0 without leaves).
    pub mean_fpr: f64,
}

impl ValueSnapshot {
    /// The leaves, in slot order.
    pub(crate) fn leaves(&self) -> impl Iterator<Item = (Slot, &Leaf)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(s, l)| Some((s as Slot, l.as_ref()?)))
    }

    /// The shape of the index now, for [`ValueStats`].
    pub(crate) fn shape_stats(&self, s: &mut ValueStats) {
        let bytes = self.shape.bits / 8;
        s.leaf_filters = self.hierarchy.len();
        s.internal_filters = self.hierarchy.internal_nodes();
        s.hierarchy_height = self.hierarchy.height();
        s.unfiltered_tables = self.unfiltered.len();
        s.leaf_filter_bytes = s.leaf_filters as u64 * bytes;
        s.internal_filter_bytes = s.internal_filters as u64 * bytes;
    }

    /// Checks the hierarchy's invariants and that the flat slices are the
    /// leaves transposed.
    #[cfg(test)]
    pub(crate) fn check(&self) -> Result<(), String> {
        self.hierarchy.check()?;
        if self.hierarchy.len() != self.leaves().count() {
            return Err("hierarchy and slot table hold different leaves".into());
        }
        let leaves: Vec<Option<&StandardBloom>> = self
            .slots
            .iter()
            .map(|l| l.as_ref().map(|l| &*l.filter))
            .collect();
        match &self.flat {
            Some(flat) => flat.check(&leaves),
            None => Ok(()),
        }
    }
}

pub(crate) struct ValueIndex {
    opts: ValueIndexOptions,
    snap: ValueSnapshot,
    by_table: HashMap<u64, Slot>,
    unfiltered: BTreeMap<u64, Arc<Table>>,
    free: BTreeSet<Slot>,
}

impl ValueIndex {
    pub(crate) fn new(opts: &ValueIndexOptions) -> Self {
        let shape = Shape::of(opts);
        ValueIndex {
            opts: opts.clone(),
            snap: ValueSnapshot {
                shape,
                slots: Vec::new(),
                unfiltered: Vec::new(),
                hierarchy: Hierarchy::new(opts.order),
                flat: (opts.method == SearchMethod::Flat).then(|| Flat::new(shape.bits)),
                mean_fpr: 0.0,
            },
            by_table: HashMap::new(),
            unfiltered: BTreeMap::new(),
            free: BTreeSet::new(),
        }
    }

    /// Loads and checks a table's value filter; `Err` is why it is not
    /// trusted (the table is then scanned by every value search). A read
    /// error counts as untrusted too: the filter only ever saves work.
    fn load(&self, t: &Table) -> Result<Arc<StandardBloom>, String> {
        let Some((handle, terms)) = t.value_filter() else {
            return Err("no value filter block".into());
        };
        let bytes = t
            .read_block(handle, BlockType::ValueFilter)
            .map_err(|e| e.to_string())?;
        filter::decode(&bytes, terms, &self.opts)
    }

    /// Brings the index to the live table set `tables`: removed tables
    /// leave, new ones join (path update or rebuild, per the options and
    /// the cost model). Returns whether anything changed.
    pub(crate) fn sync(&mut self, tables: &BTreeMap<u64, Arc<Table>>, counters: &ValueCounters) -> bool {
        let removed: Vec<u64> = self
            .by_table
            .keys()
            .chain(self.unfiltered.keys())
            .filter(|n| !tables.contains_key(n))
            .copied()
            .collect();
        let added: Vec<&Arc<Table>> = tables
            .iter()
            .filter(|(n, _)| !self.by_table.contains_key(n) && !self.unfiltered.contains_key(n))
            .map(|(_, t)| t)
            .collect();
        if removed.is_empty() && added.is_empty() {
            return false;
        }
        let flat_start = Instant::now();
        let mut removed_slots = Vec::new();
        for n in removed {
            if self.unfiltered.remove(&n).is_some() {
                continue;
            }
            let slot = self.by_table.remove(&n).expect("known table");
            let leaf = self.snap.slots[slot as usize].take().expect("live slot");
            if let Some(flat) = &mut self.snap.flat {
                flat.clear(slot, &leaf.filter);
            }
            self.free.insert(slot);
            removed_slots.push(slot);
        }
        let mut added_slots = Vec::new();
        let mut untrusted = 0;
        for t in added {
            match self.load(t) {
                Ok(filter) => {
                    let slot = self.free.pop_first().unwrap_or(self.snap.slots.len() as Slot);
                    if self.snap.slots.len() <= slot as usize {
                        self.snap.slots.resize(slot as usize + 1, None);
                    }
                    if let Some(flat) = &mut self.snap.flat {
                        flat.set(slot, &filter);
                    }
                    self.snap.slots[slot as usize] = Some(Leaf {
                        table: t.clone(),
                        // The FPR these bits give (a fill of `f` and `k`
                        // probes: `f^k`), right for unions of overlapping
                        // key sets too.
                        fpr: filter.fill_ratio().powi(filter.num_probes() as i32),
                        filter: filter.clone(),
                    });
                    self.by_table.insert(t.number(), slot);
                    added_slots.push((slot, filter));
                }
                Err(_) => {
                    untrusted += 1;
                    self.unfiltered.insert(t.number(), t.clone());
                }
            }
        }
        while self.snap.slots.last().is_some_and(Option::is_none) {
            self.snap.slots.pop();
            self.free.remove(&(self.snap.slots.len() as Slot));
        }
        let flat_nanos = flat_start.elapsed().as_nanos() as u64;
        let h_start = Instant::now();
        let h = &mut self.snap.hierarchy;
        let path = match self.opts.update {
            UpdateStrategy::PathUpdate => true,
            UpdateStrategy::Rebuild => false,
            UpdateStrategy::Auto => h.path_update_is_cheaper(added_slots.len(), removed_slots.len()),
        };
        if path {
            for s in &removed_slots {
                h.remove(*s);
            }
            for (s, f) in added_slots {
                h.insert(s, f);
            }
        } else {
            let leaves = self
                .snap
                .slots
                .iter()
                .enumerate()
                .filter_map(|(s, l)| Some((s as Slot, l.as_ref()?.filter.clone())))
                .collect();
            h.rebuild(leaves);
        }
        let h_nanos = h_start.elapsed().as_nanos() as u64;
        self.snap.unfiltered = self.unfiltered.values().cloned().collect();
        let (sum, n) = self
            .snap
            .leaves()
            .fold((0.0, 0usize), |(s, n), (_, l)| (s + l.fpr, n + 1));
        self.snap.mean_fpr = if n == 0 { 0.0 } else { sum / n as f64 };
        counters.update(|c| {
            if path {
                c.path_updates += 1;
            } else {
                c.rebuilds += 1;
            }
            c.hierarchy_update_nanos += h_nanos;
            c.flat_update_nanos += flat_nanos;
            c.untrusted_value_filters += untrusted;
        });
        true
    }

    /// The state readers see until the next change.
    pub(crate) fn snapshot(&self) -> Arc<ValueSnapshot> {
        Arc::new(self.snap.clone())
    }
}
