//! The raw table against a multiset model.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::*;
use crate::hash::remix;

/// The model: a multiset of `(quotient, value)`.
fn model_entries(m: &BTreeMap<(usize, u64), usize>) -> Vec<(usize, u64)> {
    m.iter().flat_map(|(&e, &c)| core::iter::repeat_n(e, c)).collect()
}

/// Random inserts and removes against a multiset, with quotients drawn
/// from a narrow window (long clusters that cross blocks and spill into
/// the padding) or from everywhere; the table's entries, runs and
/// invariants checked after every step.
#[test]
fn inserts_and_removes_agree_with_a_multiset() {
    for (q, width, window, steps) in [
        (6u32, 5u32, 4usize, 400usize),
        (8, 3, 256, 600),
        (10, 9, 40, 1500),
        (12, 12, 4096, 3000),
        // One quotient's run of hundreds of entries: offset bytes saturate.
        (10, 6, 1, 2500),
    ] {
        let mut t = Table::new(q, width).unwrap();
        let mut model: BTreeMap<(usize, u64), usize> = BTreeMap::new();
        let base = (remix(q as u64, 1) as usize) % (1usize << q);
        for i in 0..steps as u64 {
            let r = remix(i, u64::from(q) * 100 + u64::from(width));
            let x = (base + (r as usize % window)) % (1usize << q);
            let v = (r >> 32) & low_mask(width);
            let remove = r % 5 < 2 && t.len() > 0;
            if remove {
                // Remove an entry that is there: one of the model's.
                let entries = model_entries(&model);
                let (x, v) = entries[(r >> 8) as usize % entries.len()];
                let run = t.run(x).expect("a quotient with entries has a run");
                let s = run.clone().find(|&s| t.value(s) == v).expect("value in its run");
                t.remove_at(x, s);
                let c = model.get_mut(&(x, v)).unwrap();
                *c -= 1;
                if *c == 0 {
                    model.remove(&(x, v));
                }
            } else {
                match t.insert(x, v) {
                    Ok(()) => *model.entry((x, v)).or_default() += 1,
                    Err(Error::Full) => {}
                    Err(e) => panic!("{e:?}"),
                }
            }
            t.check();
            assert_eq!(
                t.entries().collect::<Vec<_>>(),
                model_entries(&model),
                "q {q}, step {i}"
            );
        }
        // Rebuilt in one pass from the entries: the same table.
        let rebuilt = Table::from_sorted(q, width, t.entries()).unwrap();
        rebuilt.check();
        assert_eq!(rebuilt, t);
    }
}

/// A table fills to its last slot: every canonical and padding slot
/// taken, then `Full` with nothing changed; removing everything empties
/// it back to a new table.
#[test]
fn fills_every_slot_then_refuses() {
    let mut t = Table::new(4, 7).unwrap();
    let mut inserted = Vec::new();
    let mut i = 0u64;
    loop {
        let r = remix(i, 9);
        i += 1;
        let (x, v) = ((r % 16) as usize, (r >> 40) & 0x7f);
        let before = t.clone();
        match t.insert(x, v) {
            Ok(()) => inserted.push((x, v)),
            Err(Error::Full) => {
                assert_eq!(t, before, "a refused insert changes nothing");
                break;
            }
            Err(e) => panic!("{e:?}"),
        }
        t.check();
    }
    // Quotients 0..16 can reach every slot after them: the table is full.
    assert_eq!(t.len(), t.slots());
    for (x, v) in inserted {
        let s = t.run(x).unwrap().find(|&s| t.value(s) == v).unwrap();
        t.remove_at(x, s);
        t.check();
    }
    assert_eq!(t, Table::new(4, 7).unwrap());
}

#[test]
fn from_sorted_refuses_disorder_and_overflow() {
    assert!(Table::from_sorted(4, 8, [(3, 5), (2, 1)]).is_err());
    assert!(Table::from_sorted(4, 8, [(3, 5), (3, 4)]).is_err());
    assert!(Table::from_sorted(4, 8, [(16, 0)]).is_err());
    assert!(Table::from_sorted(4, 8, [(1, 256)]).is_err());
    let slots = Table::new(4, 8).unwrap().slots();
    // Quotient 15's run can take slots 15 on, to the last.
    assert_eq!(
        Table::from_sorted(4, 8, (0..=slots - 15).map(|_| (15, 0))).unwrap_err(),
        Error::Full
    );
    let full = Table::from_sorted(4, 8, (0..slots - 15).map(|_| (15, 0))).unwrap();
    full.check();
    assert_eq!(full.run(15), Some(15..=slots - 1));
    assert!(Table::new(MAX_QUOTIENT_BITS + 1, 8).is_err());
    assert!(Table::new(4, 0).is_err() && Table::new(4, 65).is_err());
}
