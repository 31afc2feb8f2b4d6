//! Prefix extractors: which prefix of a key a filter holds, so a filter can
//! answer "might any key with prefix `p` be here?" as well as "might key `k`
//! be here?".
//!
//! A storage engine puts the extracted prefix of each key of a table into
//! the table's filter, hashed with [`hash_prefix`](crate::hash_prefix) (apart
//! from whole keys, which may share the filter), and a seek or scan over one
//! prefix probes each table's filter once, skipping the tables that cannot
//! hold it. That is only correct when the prefix asked for is *complete*
//! ([`PrefixExtractor::is_complete`]): every key that starts with it has it
//! as its extracted prefix, so every such key put its prefix in the filter.
//! RocksDB calls the same property `SameResultWhenAppended`.
//!
//! Each extractor has an [`ExtractorId`] (its name and parameters as bytes)
//! that an engine stores beside every filter it builds and compares at query
//! time: a filter built with another extractor, or another version of one,
//! is never used to skip anything.
//!
//! The built-ins, after RocksDB's `NewFixedPrefixTransform` and
//! `NewCappedPrefixTransform`, and a delimiter rule for keys like
//! `tenant:row`:
//!
//! | extractor | prefix of `key` | outside the domain | complete prefixes |
//! |-----------|-----------------|--------------------|-------------------|
//! | [`FixedPrefix`]`::new(n)` | its first `n` bytes | keys shorter than `n` | those of length `n` |
//! | [`CappedPrefix`]`::new(n)` | its first `min(n, len)` bytes | none | those of length `n` |
//! | [`DelimitedPrefix`]`::new(d)` | up to and including its first `d` | keys without `d` | those ending in their only `d` |
//! | [`DelimitedPrefix`]`::capped(d, n)` | up to its first `d` within `n` bytes, else its first `min(n, len)` bytes | none | as `new(d)` within `n` bytes, or `n` bytes without a `d` |
//! | [`DelimitedPrefix`]`::nth(d, n)` | up to and including its `n`-th `d` | keys with fewer | those ending in their `n`-th `d` |
//!
//! Keys of several segments (`order:{customer}:{id}`) want the prefix that
//! tells tables apart: `DelimitedPrefix::new(b':')` gives every such key
//! `order:`, which rules nothing out; `DelimitedPrefix::nth(b':', 2)` gives
//! `order:{customer}:`. A store's stats show the prefixes each table's
//! filter holds (about one per table is the sign of a prefix cut too early).
//!
//! ```
//! use amq::{DelimitedPrefix, PrefixExtractor};
//! let tenants = DelimitedPrefix::new(b':');
//! assert_eq!(tenants.prefix(b"t42:row7"), Some(&b"t42:"[..]));
//! assert_eq!(tenants.prefix(b"no-delimiter"), None);
//! assert!(tenants.is_complete(b"t42:"));
//! assert!(!tenants.is_complete(b"t4")); // "t42:..." extracts "t42:", not "t4"
//! ```

use alloc::vec::Vec;
use core::fmt::Debug;
use core::ops::Bound;

use crate::error::invalid;
use crate::Error;

/// Which prefix of a key a filter holds.
///
/// Implementations must be deterministic, and their [`id`](Self::id) must
/// change whenever what they extract changes: an engine relies on both to
/// never lose a row. Three rules make an extractor correct:
///
/// * [`prefix`](Self::prefix) returns a prefix of the key (the engine treats
///   anything else as "outside the domain");
/// * [`is_complete`](Self::is_complete)`(p)` is `true` only if every key that
///   starts with `p` (`p` included) has `p` as its prefix;
/// * [`id`](Self::id) is the same exactly when the extractor behaves the same.
///
/// ```
/// use amq::{ExtractorId, PrefixExtractor};
///
/// /// The first byte, as a user's own extractor (a table id, say).
/// #[derive(Debug)]
/// struct FirstByte;
///
/// impl PrefixExtractor for FirstByte {
///     fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
///         key.get(..1)
///     }
///     fn is_complete(&self, prefix: &[u8]) -> bool {
///         prefix.len() == 1
///     }
///     fn id(&self) -> ExtractorId {
///         ExtractorId::new("my-app.first-byte", &[1]).unwrap()
///     }
/// }
/// assert_eq!(FirstByte.prefix(b"\x07row"), Some(&b"\x07"[..]));
/// ```
///
/// A reference, a `Box` or an `Arc` of an extractor (`dyn PrefixExtractor`
/// included) is an extractor too, with the same prefixes and identity, so a
/// shared extractor goes wherever one is asked for:
///
/// ```
/// use std::sync::Arc;
/// use amq::{DelimitedPrefix, PrefixExtractor};
/// let shared: Arc<dyn PrefixExtractor> = Arc::new(DelimitedPrefix::new(b':'));
/// fn tenant<E: PrefixExtractor>(e: E) -> Option<Vec<u8>> {
///     e.prefix(b"t1:row").map(<[u8]>::to_vec)
/// }
/// assert_eq!(tenant(Arc::clone(&shared)), Some(b"t1:".to_vec()));
/// assert_eq!(tenant(&DelimitedPrefix::new(b':')), tenant(Box::new(DelimitedPrefix::new(b':'))));
/// assert_eq!(shared.id(), DelimitedPrefix::new(b':').id());
/// ```
pub trait PrefixExtractor: Send + Sync + Debug {
    /// The prefix of `key` a filter holds, or `None` when `key` is outside
    /// the extractor's domain (RocksDB's `InDomain`): such a key puts no
    /// prefix in a filter.
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]>;

    /// Whether `prefix` is complete: every key that starts with it (itself
    /// included) has it as its prefix. Only a complete prefix can be asked of
    /// a filter, since only then did every key that matches it put it there.
    fn is_complete(&self, prefix: &[u8]) -> bool;

    /// The extractor's identity: its name and parameters.
    fn id(&self) -> ExtractorId;
}

/// `PrefixExtractor` for pointers to one, forwarding every method.
macro_rules! forward_extractor {
    ($($(#[$cfg:meta])* impl[$($g:tt)*] for $t:ty;)*) => {$(
        $(#[$cfg])*
        impl<$($g)*> PrefixExtractor for $t {
            #[inline]
            fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
                (**self).prefix(key)
            }
            fn is_complete(&self, prefix: &[u8]) -> bool {
                (**self).is_complete(prefix)
            }
            fn id(&self) -> ExtractorId {
                (**self).id()
            }
        }
    )*};
}

forward_extractor! {
    impl['a, E: PrefixExtractor + ?Sized] for &'a E;
    impl[E: PrefixExtractor + ?Sized] for alloc::boxed::Box<E>;
    #[cfg(target_has_atomic = "ptr")]
    impl[E: PrefixExtractor + ?Sized] for alloc::sync::Arc<E>;
}

/// An extractor's identity: a name and its parameters, as bytes an engine
/// stores beside every filter built with the extractor and compares at
/// query time.
///
/// ```
/// use amq::{ExtractorId, FixedPrefix, PrefixExtractor};
/// let id = FixedPrefix::new(8).id();
/// assert_eq!(id.name(), "amq.fixed");
/// assert_eq!(ExtractorId::from_bytes(id.as_bytes())?, id);
/// assert_ne!(id, FixedPrefix::new(9).id());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExtractorId {
    /// The name's UTF-8 bytes, a zero byte, then the parameters.
    bytes: Vec<u8>,
}

impl ExtractorId {
    /// The most bytes an identity takes (name, separator and parameters).
    pub const MAX_BYTES: usize = 255;

    /// The identity `name` (non-empty, without a zero byte) with `params`;
    /// [`Error::InvalidParameter`] if the name is empty or holds a zero byte,
    /// or the whole is over [`MAX_BYTES`](Self::MAX_BYTES).
    ///
    /// ```
    /// use amq::ExtractorId;
    /// let id = ExtractorId::new("my-app.tenant", &[3])?;
    /// assert_eq!((id.name(), id.params()), ("my-app.tenant", &[3u8][..]));
    /// assert!(ExtractorId::new("", &[]).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn new(name: &str, params: &[u8]) -> Result<ExtractorId, Error> {
        if name.is_empty() || name.as_bytes().contains(&0) {
            return Err(invalid("name", "must be non-empty, without a zero byte"));
        }
        if name.len() + 1 + params.len() > Self::MAX_BYTES {
            return Err(invalid("params", "name and parameters must fit in 255 bytes"));
        }
        let mut bytes = Vec::with_capacity(name.len() + 1 + params.len());
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(params);
        Ok(ExtractorId { bytes })
    }

    /// Reads back [`as_bytes`](Self::as_bytes): the checks of
    /// [`new`](Self::new), on untrusted bytes.
    ///
    /// ```
    /// assert!(amq::ExtractorId::from_bytes(b"no separator").is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<ExtractorId, Error> {
        let zero = bytes
            .iter()
            .position(|&b| b == 0)
            .ok_or(invalid("id", "no separator after the name"))?;
        let name = core::str::from_utf8(&bytes[..zero]).map_err(|_| invalid("id", "name is not UTF-8"))?;
        ExtractorId::new(name, &bytes[zero + 1..])
    }

    /// The identity as bytes: the name, a zero byte, the parameters.
    ///
    /// ```
    /// let id = amq::ExtractorId::new("x", &[7]).unwrap();
    /// assert_eq!(id.as_bytes(), b"x\0\x07");
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The name.
    ///
    /// ```
    /// assert_eq!(amq::ExtractorId::new("x", &[]).unwrap().name(), "x");
    /// ```
    pub fn name(&self) -> &str {
        let end = self
            .bytes
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.bytes.len());
        core::str::from_utf8(&self.bytes[..end]).unwrap_or("")
    }

    /// The parameters.
    ///
    /// ```
    /// assert_eq!(amq::ExtractorId::new("x", &[1, 2]).unwrap().params(), [1, 2]);
    /// ```
    pub fn params(&self) -> &[u8] {
        let start = self
            .bytes
            .iter()
            .position(|&b| b == 0)
            .map_or(self.bytes.len(), |z| z + 1);
        &self.bytes[start..]
    }
}

/// A length as the built-ins store it in their identity: 8 bytes, little-endian.
fn len_param(len: usize) -> [u8; 8] {
    (len as u64).to_le_bytes()
}

/// The first `len` bytes of a key; keys shorter than `len` are outside the
/// domain (RocksDB's `NewFixedPrefixTransform`).
///
/// ```
/// use amq::{FixedPrefix, PrefixExtractor};
/// let p = FixedPrefix::new(4);
/// assert_eq!(p.prefix(b"user1234"), Some(&b"user"[..]));
/// assert_eq!(p.prefix(b"usr"), None);
/// assert!(p.is_complete(b"user") && !p.is_complete(b"use"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedPrefix {
    len: usize,
}

impl FixedPrefix {
    /// The extractor of the first `len` bytes.
    ///
    /// ```
    /// assert_eq!(amq::FixedPrefix::new(3).len(), 3);
    /// ```
    pub const fn new(len: usize) -> FixedPrefix {
        FixedPrefix { len }
    }

    /// The prefix length.
    ///
    /// ```
    /// assert_eq!(amq::FixedPrefix::new(3).len(), 3);
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(&self) -> usize {
        self.len
    }
}

impl PrefixExtractor for FixedPrefix {
    #[inline]
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        key.get(..self.len)
    }

    fn is_complete(&self, prefix: &[u8]) -> bool {
        prefix.len() == self.len
    }

    fn id(&self) -> ExtractorId {
        ExtractorId::new("amq.fixed", &len_param(self.len)).unwrap_or_else(|_| unreachable_id())
    }
}

/// The first `min(len, key length)` bytes of a key: every key is in the
/// domain (RocksDB's `NewCappedPrefixTransform`); a key shorter than `len`
/// is its own prefix.
///
/// ```
/// use amq::{CappedPrefix, PrefixExtractor};
/// let p = CappedPrefix::new(4);
/// assert_eq!(p.prefix(b"user1234"), Some(&b"user"[..]));
/// assert_eq!(p.prefix(b"usr"), Some(&b"usr"[..]));
/// // "usr" is not complete: "usr9" extracts "usr9".
/// assert!(p.is_complete(b"user") && !p.is_complete(b"usr"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CappedPrefix {
    len: usize,
}

impl CappedPrefix {
    /// The extractor of at most the first `len` bytes.
    ///
    /// ```
    /// assert_eq!(amq::CappedPrefix::new(3).len(), 3);
    /// ```
    pub const fn new(len: usize) -> CappedPrefix {
        CappedPrefix { len }
    }

    /// The cap.
    ///
    /// ```
    /// assert_eq!(amq::CappedPrefix::new(3).len(), 3);
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(&self) -> usize {
        self.len
    }
}

impl PrefixExtractor for CappedPrefix {
    #[inline]
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        Some(&key[..key.len().min(self.len)])
    }

    fn is_complete(&self, prefix: &[u8]) -> bool {
        prefix.len() == self.len
    }

    fn id(&self) -> ExtractorId {
        ExtractorId::new("amq.capped", &len_param(self.len)).unwrap_or_else(|_| unreachable_id())
    }
}

/// A key up to and including its first delimiter byte (`tenant:` of
/// `tenant:row`), or its `n`-th ([`nth`](Self::nth): `order:c42:` of
/// `order:c42:17`). Plain ([`new`](Self::new)), keys without the delimiter
/// (or with fewer than `n`) are outside the domain. Capped ([`capped`](Self::capped)), the delimiter is
/// looked for in the first `cap` bytes only, and a key without one there has
/// its first `min(cap, len)` bytes as its prefix: every key is in the
/// domain, and no prefix is longer than `cap`.
///
/// ```
/// use amq::{DelimitedPrefix, PrefixExtractor};
/// let p = DelimitedPrefix::capped(b'/', 6);
/// assert_eq!(p.prefix(b"a/b/c"), Some(&b"a/"[..]));
/// assert_eq!(p.prefix(b"longname/x"), Some(&b"longna"[..]));
/// assert_eq!(p.prefix(b"ab"), Some(&b"ab"[..]));
/// assert!(p.is_complete(b"a/") && p.is_complete(b"longna") && !p.is_complete(b"ab"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelimitedPrefix {
    delimiter: u8,
    /// The delimiter that ends the prefix: the first, second, …
    nth: u8,
    cap: Option<usize>,
}

impl DelimitedPrefix {
    /// The extractor up to and including the first `delimiter`.
    ///
    /// ```
    /// use amq::{DelimitedPrefix, PrefixExtractor};
    /// assert_eq!(DelimitedPrefix::new(b':').prefix(b"a:b:c"), Some(&b"a:"[..]));
    /// ```
    pub const fn new(delimiter: u8) -> DelimitedPrefix {
        DelimitedPrefix {
            delimiter,
            nth: 1,
            cap: None,
        }
    }

    /// The extractor up to and including the `n`-th `delimiter` (1 to 255;
    /// 1 is [`new`](Self::new)), for keys of several segments.
    /// [`Error::InvalidParameter`] for `n = 0`.
    ///
    /// ```
    /// use amq::{DelimitedPrefix, PrefixExtractor};
    /// let customer = DelimitedPrefix::nth(b':', 2)?;
    /// assert_eq!(customer.prefix(b"order:c42:17"), Some(&b"order:c42:"[..]));
    /// assert_eq!(customer.prefix(b"order:c42"), None); // one delimiter only
    /// assert!(customer.is_complete(b"order:c42:") && !customer.is_complete(b"order:"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn nth(delimiter: u8, n: u8) -> Result<DelimitedPrefix, Error> {
        if n == 0 {
            return Err(invalid("n", "counts delimiters from 1"));
        }
        Ok(DelimitedPrefix {
            delimiter,
            nth: n,
            cap: None,
        })
    }

    /// The same, looking at the first `cap` bytes only (see the type's docs).
    ///
    /// ```
    /// use amq::{DelimitedPrefix, PrefixExtractor};
    /// assert_eq!(DelimitedPrefix::capped(b':', 2).prefix(b"abc:d"), Some(&b"ab"[..]));
    /// ```
    pub const fn capped(delimiter: u8, cap: usize) -> DelimitedPrefix {
        DelimitedPrefix {
            delimiter,
            nth: 1,
            cap: Some(cap),
        }
    }

    /// Where the prefix of `key` ends: just past its `nth` delimiter
    /// within the cap; for a capped extractor without one there, the cap or
    /// the key's end.
    #[inline]
    fn end(&self, key: &[u8]) -> Option<usize> {
        let window = &key[..self.cap.map_or(key.len(), |c| c.min(key.len()))];
        let mut delimiters = window.iter().enumerate().filter(|&(_, &b)| b == self.delimiter);
        match delimiters.nth(usize::from(self.nth) - 1) {
            Some((i, _)) => Some(i + 1),
            None => self.cap.map(|_| window.len()),
        }
    }
}

impl PrefixExtractor for DelimitedPrefix {
    #[inline]
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        self.end(key).map(|end| &key[..end])
    }

    fn is_complete(&self, prefix: &[u8]) -> bool {
        if self.nth > 1 {
            // Ends in its `nth` delimiter (no cap with `nth`).
            let count = prefix.iter().filter(|&&b| b == self.delimiter).count();
            return count == usize::from(self.nth) && prefix.last() == Some(&self.delimiter);
        }
        let first = prefix.iter().position(|&b| b == self.delimiter);
        match (first, self.cap) {
            // Ends in its only delimiter, within the cap if any.
            (Some(i), cap) => i + 1 == prefix.len() && cap.is_none_or(|c| prefix.len() <= c),
            // No delimiter: complete only as a whole cap's worth of bytes.
            (None, Some(c)) => prefix.len() == c,
            (None, None) => false,
        }
    }

    fn id(&self) -> ExtractorId {
        if self.nth > 1 {
            return ExtractorId::new("amq.delimited-nth", &[self.delimiter, self.nth])
                .unwrap_or_else(|_| unreachable_id());
        }
        let mut params = Vec::with_capacity(10);
        params.push(self.delimiter);
        if let Some(c) = self.cap {
            params.extend_from_slice(&len_param(c));
        }
        ExtractorId::new("amq.delimited", &params).unwrap_or_else(|_| unreachable_id())
    }
}

/// The least byte string above every string that starts with `prefix`: the
/// prefix with its last byte below `0xff` incremented and the bytes after
/// it dropped; `None` when there is none (a prefix of `0xff` bytes only, or
/// empty): the prefix's keys then run to the end of the key space. The keys
/// with a prefix are `prefix..prefix_end(prefix)`.
///
/// ```
/// use amq::prefix::prefix_end;
/// assert_eq!(prefix_end(b"user:"), Some(b"user;".to_vec()));
/// assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
/// assert_eq!(prefix_end(b"\xff"), None);
/// ```
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut end = prefix[..=last].to_vec();
    end[last] += 1;
    Some(end)
}

/// Whether `end` is [`prefix_end`]`(prefix)`, without building it.
///
/// ```
/// use amq::prefix::is_prefix_end;
/// assert!(is_prefix_end(b"user;", b"user:") && !is_prefix_end(b"user:", b"user:"));
/// ```
pub fn is_prefix_end(end: &[u8], prefix: &[u8]) -> bool {
    match prefix.iter().rposition(|&b| b != 0xff) {
        Some(last) => end.len() == last + 1 && end[..last] == prefix[..last] && end[last] == prefix[last] + 1,
        None => false,
    }
}

/// The length of the complete prefix of `extractor` that every key inside
/// `lo..hi` starts with, if there is one: the start bound's prefix, when it
/// is complete and the end bound does not pass the prefix's last key. A
/// scan of that range may then ask a filter of `extractor`'s prefixes about
/// it: a key in the range has it as its prefix. A prefix scan of `p` is the
/// range `p..prefix_end(p)`: this is `p` when `p` is complete, or the
/// complete prefix `p` extends.
///
/// ```
/// use std::ops::Bound::{Excluded, Included, Unbounded};
/// use amq::prefix::shared_prefix;
/// use amq::DelimitedPrefix;
/// let tenants = DelimitedPrefix::new(b':');
/// assert_eq!(shared_prefix(&tenants, Included(&b"t1:a"[..]), Included(&b"t1:z"[..])), Some(3));
/// assert_eq!(shared_prefix(&tenants, Included(&b"t1:4"[..]), Excluded(&b"t1:5"[..])), Some(3));
/// assert_eq!(shared_prefix(&tenants, Included(&b"t1:a"[..]), Included(&b"t2:a"[..])), None);
/// assert_eq!(shared_prefix(&tenants, Included(&b"t1:a"[..]), Unbounded), None);
/// ```
pub fn shared_prefix<E: PrefixExtractor + ?Sized>(
    extractor: &E,
    lo: Bound<&[u8]>,
    hi: Bound<&[u8]>,
) -> Option<usize> {
    let start = match lo {
        Bound::Included(k) | Bound::Excluded(k) => k,
        Bound::Unbounded => return None,
    };
    let p = extractor.prefix(start).filter(|p| start.starts_with(p))?;
    if !extractor.is_complete(p) {
        return None;
    }
    let inside = match hi {
        Bound::Included(h) => h.starts_with(p),
        Bound::Excluded(h) => h.starts_with(p) || is_prefix_end(h, p),
        // Every key at or past a prefix of `0xff` bytes starts with it.
        Bound::Unbounded => p.iter().all(|&b| b == 0xff),
    };
    inside.then_some(p.len())
}

/// The built-ins' names and parameters always fit: this is never reached.
#[cold]
fn unreachable_id() -> ExtractorId {
    ExtractorId {
        bytes: b"amq.invalid\0".to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use proptest::prelude::*;

    use super::*;

    fn built_ins() -> Vec<alloc::boxed::Box<dyn PrefixExtractor>> {
        vec![
            alloc::boxed::Box::new(FixedPrefix::new(0)),
            alloc::boxed::Box::new(FixedPrefix::new(3)),
            alloc::boxed::Box::new(CappedPrefix::new(3)),
            alloc::boxed::Box::new(DelimitedPrefix::new(b':')),
            alloc::boxed::Box::new(DelimitedPrefix::capped(b':', 4)),
            alloc::boxed::Box::new(DelimitedPrefix::capped(b':', 0)),
            alloc::boxed::Box::new(DelimitedPrefix::nth(b':', 2).unwrap()),
            alloc::boxed::Box::new(DelimitedPrefix::nth(b':', 3).unwrap()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x9f1c),
            ..ProptestConfig::default()
        })]

        /// The three rules of the trait, for every built-in, over short keys
        /// of a small alphabet (so delimiters and shared prefixes are
        /// common): a prefix is a prefix of its key; a complete prefix is
        /// the prefix of every key that extends it; and a key's own prefix
        /// is complete exactly when every extension keeps it.
        #[test]
        fn built_ins_keep_the_trait_rules(
            key in proptest::collection::vec(prop::sample::select(vec![b'a', b'b', b':']), 0..8),
            tail in proptest::collection::vec(prop::sample::select(vec![b'a', b':']), 0..4),
        ) {
            for x in built_ins() {
                if let Some(p) = x.prefix(&key) {
                    prop_assert!(key.starts_with(p), "{x:?}");
                    if x.is_complete(p) {
                        let mut longer = key.clone();
                        longer.extend_from_slice(&tail);
                        prop_assert_eq!(x.prefix(&longer), Some(p), "{:?}", x);
                        prop_assert_eq!(x.prefix(p), Some(p), "{:?}", x);
                    }
                }
                // Completeness never claimed for a string that is not its own prefix.
                if x.is_complete(&key) {
                    prop_assert_eq!(x.prefix(&key), Some(&key[..]), "{:?}", x);
                }
            }
        }
    }

    #[test]
    fn identities_differ_between_extractors_and_parameters() {
        let ids: Vec<ExtractorId> = built_ins().iter().map(|x| x.id()).collect();
        for (i, a) in ids.iter().enumerate() {
            for b in &ids[i + 1..] {
                assert_ne!(a, b);
            }
            assert_eq!(&ExtractorId::from_bytes(a.as_bytes()).unwrap(), a);
        }
        assert_ne!(DelimitedPrefix::new(b':').id(), DelimitedPrefix::new(b'/').id());
        // The first delimiter by `nth` is `new`, identity included.
        assert_eq!(DelimitedPrefix::nth(b':', 1).unwrap(), DelimitedPrefix::new(b':'));
        assert!(DelimitedPrefix::nth(b':', 0).is_err());
    }

    fn shared(e: &dyn PrefixExtractor, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Option<Vec<u8>> {
        let start = match lo {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => b"",
        };
        shared_prefix(e, lo, hi).map(|len| start[..len].to_vec())
    }

    #[test]
    fn a_range_uses_a_prefix_only_when_every_key_in_it_has_that_prefix() {
        use Bound::{Excluded as X, Included as I, Unbounded as U};
        let d = DelimitedPrefix::new(b':');
        let p = Some(b"t1:".to_vec());
        assert_eq!(shared(&d, I(b"t1:a"), I(b"t1:z")), p);
        assert_eq!(shared(&d, X(b"t1:"), X(b"t1;")), p); // up to the prefix's end
        assert_eq!(shared(&d, I(b"t1:a"), X(b"t1;a")), None); // past it
        assert_eq!(shared(&d, I(b"t1:a"), I(b"t2:a")), None);
        assert_eq!(shared(&d, I(b"t1:a"), U), None);
        assert_eq!(shared(&d, U, I(b"t1:a")), None);
        assert_eq!(shared(&d, I(b"t1"), I(b"t1:a")), None); // start outside the domain
        let f = FixedPrefix::new(2);
        assert_eq!(shared(&f, I(b"\xff\xffa"), U), Some(b"\xff\xff".to_vec()));
        assert_eq!(shared(&f, I(b"ab"), I(b"ab")), Some(b"ab".to_vec()));
        assert_eq!(prefix_end(b""), None);
        for p in [&b"ab"[..], b"a\xff", b"\xff\xff", b"", b"\x00"] {
            for h in [&b"ac"[..], b"b", b"ab", b"a\xff\x00", b"\x01", b"", b"\xff"] {
                assert_eq!(
                    is_prefix_end(h, p),
                    prefix_end(p).as_deref() == Some(h),
                    "{p:?} {h:?}"
                );
            }
        }
    }

    #[test]
    fn identities_refuse_bad_bytes() {
        assert!(ExtractorId::new("a\0b", &[]).is_err());
        assert!(ExtractorId::new("a", &[0; 254]).is_err());
        assert!(ExtractorId::new("a", &[0; 253]).is_ok());
        assert!(ExtractorId::from_bytes(b"").is_err());
        assert!(ExtractorId::from_bytes(b"\0x").is_err());
        assert!(ExtractorId::from_bytes(&[0xff, 0]).is_err());
    }
}
