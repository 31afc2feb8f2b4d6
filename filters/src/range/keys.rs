//! Byte-string keys as `u64`s for the range filters, in their order.

use core::cmp::Ordering;

/// The `u64` of a byte-string key for a range filter: the eight bytes after
/// `common_prefix`, big-endian, zero-padded; 0 for a key before every key
/// that starts with `common_prefix`, `u64::MAX` for one after them.
///
/// The map never decreases in the keys' lexicographic (`memcmp`) order, for
/// every byte string, so a stored key `k` in `lo..=hi` always has
/// `key_to_u64(k)` in `key_to_u64(lo)..=key_to_u64(hi)`: build the filter
/// from the stored keys' `u64`s, map both ends of a query the same way, and
/// the filter has no false negatives. It is conservative, not exact: keys
/// that share the eight bytes after the prefix (or lie outside it) become
/// one `u64`, and such a key answers for all of them, which only adds false
/// positives. Take the longest prefix every stored key shares
/// ([`common_prefix`]) so the eight bytes are the ones that vary.
///
/// ```
/// use amq::range::{key_to_u64, GrafiteRange, RangeFilter, RangeSizing};
///
/// let prefix = b"user:";
/// assert_eq!(key_to_u64(b"user:\x00\x00\x00\x00\x00\x00\x01\x00", prefix), 256);
/// assert_eq!(key_to_u64(b"user:a", prefix), 0x61 << 56);
/// assert_eq!(key_to_u64(b"admin", prefix), 0); // before every "user:" key
/// assert_eq!(key_to_u64(b"zebra", prefix), u64::MAX); // after them
///
/// let stored: [&[u8]; 3] = [b"user:alice", b"user:bob", b"user:carol"];
/// let keys: Vec<u64> = stored.iter().map(|k| key_to_u64(k, prefix)).collect();
/// let f = GrafiteRange::build(&keys, RangeSizing::BitsPerKey(20.0))?;
/// let range = |lo: &[u8], hi: &[u8]| f.may_contain_range(key_to_u64(lo, prefix), key_to_u64(hi, prefix));
/// assert!(range(b"user:b", b"user:c")); // holds user:bob
/// assert!(range(b"a", b"user:alice")); // a query end outside the prefix
/// # Ok::<(), amq::Error>(())
/// ```
pub fn key_to_u64(key: &[u8], common_prefix: &[u8]) -> u64 {
    let p = common_prefix.len();
    // A key shorter than the prefix is compared whole: a proper prefix of
    // `common_prefix` sorts before every key that starts with it.
    match key[..key.len().min(p)].cmp(common_prefix) {
        Ordering::Less => 0,
        Ordering::Greater => u64::MAX,
        Ordering::Equal => {
            let tail = &key[p..];
            let mut bytes = [0u8; 8];
            let n = tail.len().min(8);
            bytes[..n].copy_from_slice(&tail[..n]);
            u64::from_be_bytes(bytes)
        }
    }
}

/// The longest prefix every key starts with (empty for no keys), for
/// [`key_to_u64`].
///
/// ```
/// use amq::range::common_prefix;
/// let keys: [&[u8]; 3] = [b"order:2024:17", b"order:2024:3", b"order:2025:1"];
/// assert_eq!(common_prefix(keys), b"order:202");
/// assert_eq!(common_prefix(Vec::<&[u8]>::new()), b"");
/// ```
pub fn common_prefix<'a>(keys: impl IntoIterator<Item = &'a [u8]>) -> &'a [u8] {
    let mut keys = keys.into_iter();
    let Some(mut prefix) = keys.next() else {
        return &[];
    };
    for k in keys {
        let same = prefix.iter().zip(k).take_while(|(a, b)| a == b).count();
        prefix = &prefix[..same];
    }
    prefix
}
