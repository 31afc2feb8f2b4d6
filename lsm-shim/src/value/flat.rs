//! The flat, bit-sliced variant (from Bloofi's code, Crainiceanu & Lemire
//! 2015): the leaf filters transposed 64 at a time. Group `g` holds one
//! `u64` per filter bit `p`, whose bit `j` is bit `p` of the filter in slot
//! `64g + j`. A term's `k` probe positions then select `k` words per group,
//! and their AND has a one exactly for the tables whose filters have all
//! `k` bits: 64 filters answered with `k` loads and ANDs, against `k` loads
//! per filter for probing the leaves one by one.
//!
//! Invariant (checked by [`Flat::check`]): `group[g][p] >> j & 1` equals bit
//! `p` of the filter in slot `64g + j`, and is 0 for an empty slot.
//!
//! Memory equals the leaves' own (`m` words per 64 filters). An update
//! touches only the set bits of the filter added or removed; groups are
//! behind `Arc` so readers keep their copy while one is updated.

use std::sync::Arc;

use amq::StandardBloom;

use super::hierarchy::Slot;

#[derive(Debug, Clone)]
pub(crate) struct Flat {
    bits: usize,
    groups: Vec<Arc<Vec<u64>>>,
    /// Per group, the slots holding a filter.
    occupied: Vec<u64>,
}

/// Calls `f` with the position of every set bit of `words`.
fn for_each_set_bit(words: &[u64], mut f: impl FnMut(usize)) {
    for (i, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            f(i * 64 + w.trailing_zeros() as usize);
            w &= w - 1;
        }
    }
}

impl Flat {
    pub(crate) fn new(bits: u64) -> Self {
        Flat {
            bits: bits as usize,
            groups: Vec::new(),
            occupied: Vec::new(),
        }
    }

    /// Puts `filter` in the empty `slot`'s column.
    pub(crate) fn set(&mut self, slot: Slot, filter: &StandardBloom) {
        let (g, mask) = ((slot >> 6) as usize, 1u64 << (slot & 63));
        while self.groups.len() <= g {
            self.groups.push(Arc::new(vec![0; self.bits]));
            self.occupied.push(0);
        }
        debug_assert_eq!(self.occupied[g] & mask, 0, "slot {slot} occupied");
        self.occupied[g] |= mask;
        let column = Arc::make_mut(&mut self.groups[g]);
        for_each_set_bit(filter.words(), |p| column[p] |= mask);
    }

    /// Empties `slot`'s column, which holds `filter`.
    pub(crate) fn clear(&mut self, slot: Slot, filter: &StandardBloom) {
        let (g, mask) = ((slot >> 6) as usize, 1u64 << (slot & 63));
        self.occupied[g] &= !mask;
        let column = Arc::make_mut(&mut self.groups[g]);
        for_each_set_bit(filter.words(), |p| column[p] &= !mask);
        while self.occupied.last() == Some(&0) {
            self.occupied.pop();
            self.groups.pop();
        }
    }

    /// The slots whose filters have every bit at `positions`; returns the
    /// number of groups probed.
    pub(crate) fn search(&self, positions: &[u64], out: &mut Vec<Slot>) -> u64 {
        let mut probed = 0;
        for (g, column) in self.groups.iter().enumerate() {
            let mut acc = self.occupied[g];
            if acc == 0 {
                continue;
            }
            probed += 1;
            for &p in positions {
                acc &= column[p as usize];
                if acc == 0 {
                    break;
                }
            }
            while acc != 0 {
                out.push(((g as u32) << 6) | acc.trailing_zeros());
                acc &= acc - 1;
            }
        }
        probed
    }

    /// Checks that the slices are the leaves transposed: `leaves[s]` is the
    /// filter in slot `s` (`None` for an empty slot). For tests.
    #[cfg(test)]
    pub(crate) fn check(&self, leaves: &[Option<&StandardBloom>]) -> Result<(), String> {
        let slots = self.groups.len() * 64;
        for s in 0..slots.max(leaves.len()) {
            let (g, j) = (s >> 6, s & 63);
            let leaf = leaves.get(s).copied().flatten();
            let occupied = self.occupied.get(g).is_some_and(|o| o >> j & 1 == 1);
            if occupied != leaf.is_some() {
                return Err(format!("slot {s}: occupied {occupied}, leaf {}", leaf.is_some()));
            }
            for p in 0..self.bits {
                let sliced = self.groups.get(g).is_some_and(|c| c[p] >> j & 1 == 1);
                let bit = leaf.is_some_and(|f| f.words()[p >> 6] >> (p & 63) & 1 == 1);
                if sliced != bit {
                    return Err(format!("slot {s} bit {p}: sliced {sliced}, leaf {bit}"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn leaf(i: u32) -> StandardBloom {
        let mut f = StandardBloom::with_shape(128, 2).unwrap();
        for j in 0..4 {
            amq::Insert::insert(&mut f, format!("t{i}-{j}").as_bytes()).unwrap();
        }
        f
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 100, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]
        /// After any sets and clears the slices are the leaves transposed,
        /// and a search returns exactly the slots whose own filter matches.
        #[test]
        fn slices_are_the_leaves_transposed(ops in proptest::collection::vec((any::<bool>(), 0u32..150), 1..100)) {
            let mut flat = Flat::new(128);
            let mut leaves: Vec<Option<StandardBloom>> = vec![None; 150];
            for (add, s) in ops {
                match (add, leaves[s as usize].is_some()) {
                    (true, false) => {
                        let f = leaf(s);
                        flat.set(s, &f);
                        leaves[s as usize] = Some(f);
                    }
                    (false, true) => {
                        let f = leaves[s as usize].take().unwrap();
                        flat.clear(s, &f);
                    }
                    _ => {}
                }
                let refs: Vec<Option<&StandardBloom>> = leaves.iter().map(Option::as_ref).collect();
                if let Err(e) = flat.check(&refs) {
                    return Err(TestCaseError::fail(e));
                }
            }
            for term in ["t3-1", "t77-0", "nothing"] {
                let pos: Vec<u64> = leaf(0).probe_positions(amq::hash_key(term.as_bytes())).collect();
                let mut out = Vec::new();
                flat.search(&pos, &mut out);
                let expected: Vec<u32> = (0..150u32)
                    .filter(|&s| leaves[s as usize].as_ref().is_some_and(|f| super::super::hierarchy::has_all(f, &pos)))
                    .collect();
                prop_assert_eq!(out, expected);
            }
        }
    }
}
