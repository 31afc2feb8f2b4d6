//! The cuckoo filter (Fan, Andersen, Kaminsky & Mitzenmacher 2014, "Cuckoo
//! Filter: Practically Better Than Bloom", CoNEXT '14): a deletable filter
//! that stores a short fingerprint of each key in one of two buckets.
//!
//! # Design
//!
//! The table has `m` buckets of `b = 4` slots; each slot holds an `f`-bit
//! fingerprint, `f ∈ {8, 12, 16}`, or 0 for empty. Buckets are packed back to
//! back into `u64` words (module `table`): a 12-bit table costs 12 bits per slot,
//! not 16.
//!
//! **One key hash, independent bits.** From the 64-bit [`hash_key`](crate::hash_key)
//! value:
//!
//! * the fingerprint is taken from the low 32 bits by multiply-shift onto
//!   `1 ..= 2^f - 1`: `fp = ((lo32 · (2^f - 1)) >> 32) + 1`. It is never 0
//!   (0 marks an empty slot), and it is uniform over the `2^f - 1` non-zero
//!   values, so no value is twice as likely, as it would be with "map 0 to 1";
//! * the primary bucket is taken from the high 32 bits, `i₁ = (hi32 · m) >> 32`.
//!
//! The two never share a bit, so a key's fingerprint tells nothing about its
//! bucket. (Taking both from the same bits is what makes the FPR of some other
//! implementations miss the formula: keys in one bucket then share
//! fingerprint bits.) Bucket indices are 32 bits, so a table has at most
//! `2^32` buckets (`2^34` slots); larger requests get [`Error::TooLarge`].
//!
//! **Partial-key cuckoo hashing, for any bucket count.** The alternate bucket
//! must be computable from a bucket and the fingerprint alone, since the key
//! is gone when a fingerprint is moved. The paper uses `i₂ = i₁ ⊕ h(fp)`, which
//! needs `m` to be a power of two, so a table sized for `n` keys can be almost
//! twice too big. We use the involution
//!
//! ```text
//! alt(i, fp) = (h(fp) - i) mod m,   h(fp) = ((fp · 0x9E3779B9 mod 2^32) · m) >> 32
//! ```
//!
//! (`alt(alt(i)) = i` for every `m`; the `mod` is one conditional add, no
//! division). `h` is Fibonacci hashing of the fingerprint reduced onto `0..m`,
//! uniform like the XOR scheme's offset, and as there only `2^f - 1` distinct
//! offsets exist. Its effect on space: `m` is exactly `⌈n / (4 · 0.95)⌉`, so a
//! filter filled to its capacity uses `f / 0.95` bits per key (plus at most
//! one bucket of rounding) for *every* `n`, where the power-of-two scheme
//! costs between `f / 0.95` and `2f / 0.95`.
//!
//! **Insert** puts `fp` into a free slot of `i₁` or `i₂`. If both are full
//! it walks a chain of evictions, at most [`MAX_KICKS`] (1000) steps. Each
//! step first looks one move ahead: if one of the four fingerprints in the
//! current bucket has room in *its* other bucket, it moves there and the
//! homeless fingerprint takes its slot. Otherwise a random one is evicted
//! (the paper's random walk) and the walk continues from its other bucket.
//! Random choices come from an xorshift generator seeded by the key hash, so
//! inserts are deterministic and nothing random is stored. The look-ahead
//! and the longer walk (the paper uses 500 plain steps) raise the load at
//! the first failure to about 97.3–97.5% at 1M keys (`docs/cuckoo.md`).
//!
//! # A full table never loses a key
//!
//! If the kicks run out, some fingerprint (the last victim) is homeless.
//! Dropping it would turn a key inserted earlier into a false negative. Like
//! the authors' reference code, we keep it in a one-entry **stash**, so the
//! insert that got there succeeded and every key is still found (queries also
//! check the stash). While the stash is occupied the table counts as full:
//! every further insert returns [`Error::Full`] and changes
//! nothing. Removing any key frees a slot; the stashed fingerprint is then
//! moved back into the table (with kicks; if those fail again the last victim
//! takes the stash, still losing nothing).
//!
//! Measured over 100 tables of 1M keys (`cargo run --release -p amq-bench
//! --example cuckoo_load`, `docs/cuckoo.md`), the first failed insert comes
//! at a load of at least 96.4% of the slots for every width (median 97.1% for
//! `f = 8`, 97.5% for 12 and 16). [`CuckooFilter::new`] sizes the table
//! for its capacity at 95% load, so a filter filled to capacity has room to
//! spare.
//!
//! # Removal
//!
//! `remove` deletes one copy of the key's fingerprint from `i₁`, `i₂` or the
//! stash. If there is none the key is definitely absent: [`Error::NotPresent`]
//! and nothing changes. Removing a key that was never inserted but is a false
//! positive (another key has the same fingerprint and bucket pair) removes the
//! *other* key's fingerprint, which can make that key a false negative. This
//! is inherent to every filter that forgets keys: only remove keys you
//! inserted. One key can be inserted at most `2b = 8` times (its two buckets
//! hold 8 slots; 4 if they coincide): a further copy is refused with
//! [`Error::TooManyCopies`] without touching the stash, so a hot
//! duplicate never blocks other keys.
//!
//! # False-positive rate
//!
//! A query for an absent key compares its fingerprint with every occupied slot
//! of its two buckets, on average `2b·α` of them at load `α`, and each matches
//! with probability `1 / (2^f - 1)`. So (Fan et al., section 4.2, with
//! `2^f - 1` non-zero values instead of `2^f`)
//!
//! ```text
//! FPR = 1 - (1 - 1/(2^f - 1))^(2b·α)  ≈  2b·α / 2^f
//! ```
//!
//! ([`cuckoo_fpr`]). At 95% load: 2.94% for `f = 8`, 0.185% for 12 and
//! 0.0116% for 16. Bits per key are `f / α`.
//!
//! # Invariants
//!
//! * Every key inserted (with `Ok`) more times than removed has a copy of its
//!   fingerprint in `i₁`, `i₂` or the stash.
//! * `num_keys` = occupied table slots + (1 if the stash is occupied).
//! * An empty stash holds fingerprint 0; an occupied one holds a fingerprint
//!   and one of its two buckets.

mod codec;
mod filter;
pub(crate) mod table;

pub use filter::CuckooFilter;
pub use table::SLOTS;

use crate::cost::{CostModel, Knob, Params, QueryCost, Shape, Traits};
use crate::error::invalid;
use crate::Error;
use table::{BucketTable, Lanes};

/// Longest chain of evictions one insert tries before parking the last
/// victim in the stash. The paper and its reference code use 500 plain
/// random-walk steps; 1000 look-ahead steps reach a higher load (measured in
/// `docs/cuckoo.md`) and still bound an insert to about 5,000 bucket reads.
pub const MAX_KICKS: u32 = 1000;

/// Load (fraction of slots holding a key) that [`CuckooFilter::new`] and
/// [`CuckooFilter::with_fingerprint_bits`] size a table for: at this load the
/// first failed insert is still ahead (measured, see the module docs).
pub const DESIGN_LOAD: f64 = 0.95;

/// The fingerprint widths a [`CuckooFilter`] supports.
pub const FINGERPRINT_BITS: [u32; 3] = [8, 12, 16];

/// Expected FPR of a cuckoo filter with `fingerprint_bits`-bit fingerprints,
/// [`SLOTS`]-slot buckets and `load` (fraction of slots occupied):
/// `1 - (1 - 1/(2^f - 1))^(2b·load)` (Fan et al. 2014, section 4.2); 1 for
/// no fingerprint bits at any load.
///
/// ```
/// use amq::cuckoo::cuckoo_fpr;
/// assert!((cuckoo_fpr(8, 0.95) - 0.0294).abs() < 0.0001);
/// assert!((cuckoo_fpr(12, 0.95) - 0.001855).abs() < 0.000001);
/// // The familiar approximation 2b·α / 2^f:
/// assert!((cuckoo_fpr(16, 1.0) / (8.0 / 65536.0) - 1.0).abs() < 0.001);
/// assert_eq!(cuckoo_fpr(12, 0.0), 0.0);
/// ```
pub fn cuckoo_fpr(fingerprint_bits: u32, load: f64) -> f64 {
    if fingerprint_bits == 0 {
        return 1.0;
    }
    let values = libm::pow(2.0, fingerprint_bits as f64) - 1.0;
    let probed = 2.0 * SLOTS as f64 * load;
    1.0 - libm::exp(probed * libm::log1p(-1.0 / values))
}

/// The narrowest fingerprint width whose FPR at [`DESIGN_LOAD`] is at most
/// `fpr` (what [`CuckooFilter::new`] uses).
pub(crate) fn fingerprint_bits_for_fpr(fpr: f64) -> Result<u32, Error> {
    if !(fpr > 0.0 && fpr < 1.0) {
        return Err(invalid("fpr", "must be strictly between 0 and 1"));
    }
    FINGERPRINT_BITS
        .into_iter()
        .find(|&f| cuckoo_fpr(f, DESIGN_LOAD) <= fpr)
        .ok_or(invalid("fpr", "below the 0.0116% that 16-bit fingerprints reach"))
}

/// The widest fingerprint width whose `f / DESIGN_LOAD` bits per key fit in
/// `bits_per_key`, if one does.
pub(crate) fn fingerprint_bits_for_budget(bits_per_key: f64) -> Option<u32> {
    FINGERPRINT_BITS
        .into_iter()
        .rev()
        .find(|&f| f as f64 / DESIGN_LOAD <= bits_per_key)
}

/// The fingerprint width for `sizing`: the narrowest that meets an FPR; for
/// bits per key, the widest whose cost at the design load (`f / 0.95` bits
/// per key) fits, or the narrowest if none does.
pub(crate) fn fingerprint_bits_for_sizing(sizing: crate::FilterSizing) -> Result<u32, Error> {
    match sizing.validate()? {
        crate::FilterSizing::BitsPerKey(b) => {
            Ok(fingerprint_bits_for_budget(b).unwrap_or(FINGERPRINT_BITS[0]))
        }
        crate::FilterSizing::Fpr(p) => fingerprint_bits_for_fpr(p),
    }
}

/// The table of a filter for `expected_keys` keys with `bits`-bit
/// fingerprints: its lanes and `⌈expected_keys / (SLOTS · DESIGN_LOAD)⌉`
/// buckets, checked to be addressable.
pub(crate) fn shape(expected_keys: usize, bits: u32) -> Result<(Lanes, u32), Error> {
    if !FINGERPRINT_BITS.contains(&bits) {
        return Err(invalid("fingerprint_bits", "must be 8, 12 or 16"));
    }
    if expected_keys == 0 {
        return Err(invalid("expected_keys", "must be at least 1"));
    }
    // ⌈expected_keys / (SLOTS · DESIGN_LOAD)⌉ in exact integer arithmetic
    // (DESIGN_LOAD is 95%, pinned by a test).
    let buckets = (expected_keys as u128 * 100).div_ceil(SLOTS as u128 * 95);
    let buckets = u32::try_from(buckets).map_err(|_| Error::TooLarge)?;
    let lanes = Lanes::new(bits);
    // Every byte must be addressable (matters on 32-bit targets).
    BucketTable::bytes_for(lanes, buckets)?;
    Ok((lanes, buckets))
}

/// Heap bytes ([`Filter::size_in_bytes`](crate::Filter::size_in_bytes)) and
/// buckets of a filter made by
/// [`CuckooFilter::with_fingerprint_bits`]`(expected_keys, bits)`, computed
/// without allocating it.
pub(crate) fn table_size(expected_keys: usize, bits: u32) -> Result<(usize, u32), Error> {
    let (lanes, buckets) = shape(expected_keys, bits)?;
    Ok((BucketTable::bytes_for(lanes, buckets)?, buckets))
}

impl CostModel for CuckooFilter {
    const TRAITS: Traits = Traits {
        is_static: false,
        removes: true,
        knob: Knob::BitsPerKey {
            min: 8.0 / DESIGN_LOAD,
            max: 1000.0,
        },
        cost: QueryCost::Medium,
        reason: "inserts and removes in two buckets; refuses inserts (Error::Full) a few percent past n keys",
        ..Traits::FIXED
    };

    fn shape(n: usize, sizing: crate::FilterSizing) -> Result<Shape, Error> {
        let fingerprint_bits = fingerprint_bits_for_sizing(sizing)?;
        let (bytes, buckets) = table_size(n, fingerprint_bits)?;
        let load = n as f64 / (buckets as f64 * SLOTS as f64);
        Ok(Shape {
            bytes: bytes as u64,
            fpr: cuckoo_fpr(fingerprint_bits, load),
            fpr_floor: 0.0,
            params: Params::Cuckoo { fingerprint_bits },
        })
    }
}
