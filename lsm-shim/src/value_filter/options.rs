//! [`ValueIndexOptions`]: whether tables carry value filters, their shape,
//! the hierarchy's order, the term extractor and the default search method.
//!
//! **One shape per tree.** The bitwise OR of two Bloom filters is the filter
//! of the union of their sets only if both have the same bits `m`, probes
//! `k` and hash (Bloofi, Crainiceanu & Lemire 2015, §3; Macyna & Ordonez
//! §II-C). So the shape is fixed by the options, not by each table's count:
//! a table whose filter has another shape (written under other options) is
//! left out of the hierarchy and scanned.
//!
//! **Sizing.** `m` comes from the expected distinct values per table and bits
//! per value ([`ValueFilterSizing::BitsPerValue`]), or is fixed
//! ([`ValueFilterSizing::FixedBits`], the paper's experiments: 20k, 200k or
//! 2M bits). The probe count is chosen for the hierarchy, not for a lone
//! leaf: a node one level up holds the values of at least `d` leaves, and a
//! Bloom filter of `m` bits holding `n` values has the false-positive rate
//! `(1 - e^(-k n / m))^k`, minimal at `k = (m / n) ln 2` (Broder &
//! Mitzenmacher 2004). Taking `n = d · values_per_table` keeps the
//! lowest internal nodes selective; the leaf-optimal `k` (three times larger
//! at `d = 3`) fills them with ones, and then every leaf below is probed
//! (`docs/value-search.md` measures both).

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

/// Pulls the indexed terms out of a value, so a store can index one field of
/// a structured value (the paper's `user = 'Smith'`).
///
/// The extractor's [`name`](TermExtractor::name) is recorded in every value
/// filter it built; a filter recorded under another name holds other terms
/// and is not trusted (its table is scanned instead). Change the name
/// whenever the terms an extractor emits change.
///
/// ```
/// use amq_lsm::TermExtractor;
/// /// Indexes the first field of `user,text` values.
/// struct User;
/// impl TermExtractor for User {
///     fn name(&self) -> &str { "user-field-v1" }
///     fn terms(&self, value: &[u8], emit: &mut dyn FnMut(&[u8])) {
///         emit(value.split(|&b| b == b',').next().unwrap_or(value));
///     }
/// }
/// let mut got = Vec::new();
/// User.terms(b"smith,hello", &mut |t| got.push(t.to_vec()));
/// assert_eq!(got, vec![b"smith".to_vec()]);
/// ```
pub trait TermExtractor: Send + Sync {
    /// A stable name for the terms this extractor emits (at most 255 bytes).
    fn name(&self) -> &str;
    /// Calls `emit` with each term of `value` (repeats are harmless).
    fn terms(&self, value: &[u8], emit: &mut dyn FnMut(&[u8]));
}

/// The default extractor: the whole value is the one term, so
/// [`Db::find_by_value`](crate::Db::find_by_value) matches whole values.
///
/// ```
/// use amq_lsm::{TermExtractor, WholeValue};
/// let mut n = 0;
/// WholeValue.terms(b"abc", &mut |t| { assert_eq!(t, b"abc"); n += 1 });
/// assert_eq!((n, WholeValue.name()), (1, ""));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct WholeValue;

impl TermExtractor for WholeValue {
    fn name(&self) -> &str {
        ""
    }
    fn terms(&self, value: &[u8], emit: &mut dyn FnMut(&[u8])) {
        emit(value)
    }
}

/// How many bits every value filter of the tree has.
///
/// ```
/// use amq_lsm::ValueFilterSizing;
/// let s = ValueFilterSizing::BitsPerValue { expected_values: 1000, bits_per_value: 10.0 };
/// assert_eq!(s.num_bits(), 10_048); // rounded up to whole 64-bit words
/// assert_eq!(ValueFilterSizing::FixedBits { bits: 2_000_000, expected_values: 1 }.num_bits(), 2_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueFilterSizing {
    /// `expected_values · bits_per_value` bits: sized from the distinct
    /// values a table is expected to hold.
    BitsPerValue {
        /// Distinct values (terms) expected per table.
        expected_values: u64,
        /// Bits per expected value.
        bits_per_value: f64,
    },
    /// Exactly `bits` bits (rounded up to a multiple of 64): the paper's
    /// fixed-`m` mode. `expected_values` only chooses the probe count.
    FixedBits {
        /// Bits per filter.
        bits: u64,
        /// Distinct values (terms) expected per table.
        expected_values: u64,
    },
}

impl ValueFilterSizing {
    /// The filter size in bits, a multiple of 64 (at least 64).
    ///
    /// ```
    /// use amq_lsm::ValueFilterSizing;
    /// assert_eq!(ValueFilterSizing::FixedBits { bits: 100, expected_values: 9 }.num_bits(), 128);
    /// ```
    pub fn num_bits(&self) -> u64 {
        let bits = match *self {
            ValueFilterSizing::BitsPerValue {
                expected_values,
                bits_per_value,
            } => (expected_values as f64 * bits_per_value).ceil().max(64.0) as u64,
            ValueFilterSizing::FixedBits { bits, .. } => bits.max(64),
        };
        bits.div_ceil(64) * 64
    }

    /// The expected distinct values per table.
    ///
    /// ```
    /// use amq_lsm::ValueFilterSizing;
    /// assert_eq!(ValueFilterSizing::FixedBits { bits: 100, expected_values: 9 }.expected_values(), 9);
    /// ```
    pub fn expected_values(&self) -> u64 {
        match *self {
            ValueFilterSizing::BitsPerValue { expected_values, .. }
            | ValueFilterSizing::FixedBits { expected_values, .. } => expected_values,
        }
    }
}

/// Which candidate tables a value search reads.
///
/// ```
/// use amq_lsm::SearchMethod;
/// assert_eq!(SearchMethod::default(), SearchMethod::Flat);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum SearchMethod {
    /// Scan every table (no filter consulted).
    Scan,
    /// Probe every table's value filter; scan those that say "maybe".
    Leaves,
    /// Descend the Bloom filter hierarchy (Algorithm 1); scan the tables of
    /// the leaves that say "maybe".
    Hierarchy,
    /// Probe the bit-sliced leaf filters, 64 tables per word (Bloofi's flat
    /// variant); scan the tables whose bit survives. The slices are kept
    /// only when [`ValueIndexOptions::method`] is `Flat` (they cost ten
    /// times the hierarchy's upkeep); otherwise this is [`Leaves`](Self::Leaves).
    #[default]
    Flat,
}

/// How a hierarchy is brought up to date when tables come and go.
///
/// ```
/// use amq_lsm::UpdateStrategy;
/// assert_eq!(UpdateStrategy::default(), UpdateStrategy::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpdateStrategy {
    /// Whichever the cost model says touches fewer filter words.
    #[default]
    Auto,
    /// Insert and delete leaves one by one, updating their paths (Bloofi).
    PathUpdate,
    /// Rebuild the hierarchy from its leaves.
    Rebuild,
}

/// Options of the value index ([`Options::value_index`](crate::Options::value_index)):
/// start from [`ValueIndexOptions::default`] and change what differs with
/// the setters, each of which takes and returns the options.
///
/// ```
/// use amq_lsm::{SearchMethod, ValueFilterSizing, ValueIndexOptions};
/// let v = ValueIndexOptions::default()
///     .sizing(ValueFilterSizing::FixedBits { bits: 2_000_000, expected_values: 50_000 })
///     .order(3)
///     .method(SearchMethod::Hierarchy);
/// // k = round(ln 2 · m / (d · n)) = round(0.693 · 2e6 / 150e3) = 9.
/// assert_eq!(v.num_probes(), 9);
/// assert!(v.validate().is_ok());
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ValueIndexOptions {
    /// Bits per value filter (default: 50,000 expected values per table at
    /// 20 bits each, about 122 KiB per table). Every table's value filter
    /// has this size, whatever it holds, so that filters can be OR-ed.
    pub sizing: ValueFilterSizing,
    /// Probes per term; `None`, the default, chooses
    /// `round(ln 2 · m / (order · n))`. Each probe is a memory access per
    /// filter a search asks.
    pub probes: Option<u32>,
    /// The hierarchy's order `d`: every internal node but the root has `d`
    /// to `2d` children, the root 2 to `2d` (default 3, at least 2). Larger:
    /// a shallower hierarchy of fuller filters.
    pub order: usize,
    /// What [`Db::find_by_value`](crate::Db::find_by_value) uses (default
    /// [`SearchMethod::Flat`]). The bit-sliced filters are kept only for
    /// `Flat` (about ten times the hierarchy's upkeep per flush or
    /// compaction); the hierarchy always.
    pub method: SearchMethod,
    /// `find_by_value` scans every table instead when the leaf filters'
    /// mean estimated false-positive rate (`fill^k`) is above this: filters
    /// that full cannot prune (default 0.5).
    pub fallback_fpr: f64,
    /// How the hierarchy follows compactions (default
    /// [`UpdateStrategy::Auto`]).
    pub update: UpdateStrategy,
    /// The terms indexed per value (default [`WholeValue`]: the whole value
    /// is the one term).
    pub extractor: Arc<dyn TermExtractor>,
}

impl Default for ValueIndexOptions {
    fn default() -> Self {
        ValueIndexOptions {
            sizing: ValueFilterSizing::BitsPerValue {
                expected_values: 50_000,
                bits_per_value: 20.0,
            },
            probes: None,
            order: 3,
            method: SearchMethod::default(),
            fallback_fpr: 0.5,
            update: UpdateStrategy::default(),
            extractor: Arc::new(WholeValue),
        }
    }
}

impl fmt::Debug for ValueIndexOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValueIndexOptions")
            .field("sizing", &self.sizing)
            .field("probes", &self.probes)
            .field("order", &self.order)
            .field("method", &self.method)
            .field("fallback_fpr", &self.fallback_fpr)
            .field("update", &self.update)
            .field("extractor", &self.extractor.name())
            .finish()
    }
}

impl ValueIndexOptions {
    /// Sets [`sizing`](Self::sizing).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn sizing(mut self, sizing: ValueFilterSizing) -> Self {
        self.sizing = sizing;
        self
    }

    /// Sets [`probes`](Self::probes) (default `None`: chosen from the size).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn probes(mut self, probes: Option<u32>) -> Self {
        self.probes = probes;
        self
    }

    /// Sets [`order`](Self::order) (default 3).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn order(mut self, order: usize) -> Self {
        self.order = order;
        self
    }

    /// Sets [`method`](Self::method) (default [`SearchMethod::Flat`]).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn method(mut self, method: SearchMethod) -> Self {
        self.method = method;
        self
    }

    /// Sets [`fallback_fpr`](Self::fallback_fpr) (default 0.5).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn fallback_fpr(mut self, fpr: f64) -> Self {
        self.fallback_fpr = fpr;
        self
    }

    /// Sets [`update`](Self::update) (default [`UpdateStrategy::Auto`]).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn update(mut self, update: UpdateStrategy) -> Self {
        self.update = update;
        self
    }

    /// Sets [`extractor`](Self::extractor) (default [`WholeValue`]).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn extractor(mut self, extractor: Arc<dyn TermExtractor>) -> Self {
        self.extractor = extractor;
        self
    }

    /// The probe count every value filter uses: [`probes`](Self::probes),
    /// or `round(ln 2 · m / (order · n))` clamped to `1..=30`.
    ///
    /// ```
    /// use amq_lsm::{ValueFilterSizing, ValueIndexOptions};
    /// let v = ValueIndexOptions::default()
    ///     .sizing(ValueFilterSizing::BitsPerValue { expected_values: 1000, bits_per_value: 30.0 });
    /// assert_eq!(v.num_probes(), 7); // round(0.693 · 30 / 3)
    /// assert_eq!(v.probes(Some(4)).num_probes(), 4);
    /// ```
    pub fn num_probes(&self) -> u32 {
        self.probes.unwrap_or_else(|| {
            let n = (self.sizing.expected_values().max(1) as f64) * self.order.max(1) as f64;
            amq::math::optimal_bloom_probes(self.sizing.num_bits() as f64 / n)
        })
    }

    /// Checks the options: order ≥ 2, probes in `1..=30`, at most 2^34
    /// bits, an expected count ≥ 1, a fallback rate in `[0, 1]`, an
    /// extractor name of at most 255 bytes.
    ///
    /// ```
    /// use amq_lsm::ValueIndexOptions;
    /// assert!(ValueIndexOptions::default().validate().is_ok());
    /// assert!(ValueIndexOptions::default().order(1).validate().is_err());
    /// assert!(ValueIndexOptions::default().probes(Some(31)).validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        if self.order < 2 {
            return Err(Error::InvalidOptions("value_index.order must be at least 2"));
        }
        if self.probes.is_some_and(|k| !(1..=30).contains(&k)) {
            return Err(Error::InvalidOptions("value_index.probes must be in 1..=30"));
        }
        let bad_bpv = matches!(self.sizing, ValueFilterSizing::BitsPerValue { bits_per_value, .. }
            if !(bits_per_value.is_finite() && bits_per_value > 0.0));
        if bad_bpv || self.sizing.expected_values() == 0 || self.sizing.num_bits() > 1 << 34 {
            return Err(Error::InvalidOptions(
                "value_index.sizing: expected_values ≥ 1, bits_per_value > 0, at most 2^34 bits",
            ));
        }
        if !(0.0..=1.0).contains(&self.fallback_fpr) {
            return Err(Error::InvalidOptions(
                "value_index.fallback_fpr must be in [0, 1]",
            ));
        }
        if self.extractor.name().len() > 255 {
            return Err(Error::InvalidOptions("value_index.extractor name over 255 bytes"));
        }
        Ok(())
    }
}
