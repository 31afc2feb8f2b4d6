//! Byte-string bounds: where the keys that start with a prefix end, and
//! the complete prefix every key of a range starts with.

use std::ops::Bound;

/// The least byte string greater than every string that starts with
/// `prefix`: its last byte below `0xff` incremented, the rest dropped;
/// `None` when every byte is `0xff` (or none is there): no upper bound.
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut end = prefix[..=last].to_vec();
    end[last] += 1;
    Some(end)
}

/// Whether every key in `lo..hi` starts with `prefix`, given that `lo`
/// does (its start bound is `prefix` or past it): the end bound does not
/// pass the prefix's last key.
pub(crate) fn ends_within(prefix: &[u8], hi: Bound<&[u8]>) -> bool {
    match hi {
        Bound::Included(h) => h.starts_with(prefix),
        Bound::Excluded(h) => h.starts_with(prefix) || prefix_end(prefix).as_deref() == Some(h),
        // Every key at or past a prefix of `0xff` bytes starts with it.
        Bound::Unbounded => prefix.iter().all(|&b| b == 0xff),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff"), None);
        assert_eq!(prefix_end(b""), None);
        assert!(ends_within(b"a:", Bound::Excluded(b"a;")));
        assert!(ends_within(b"a:", Bound::Included(b"a:zz")));
        assert!(!ends_within(b"a:", Bound::Included(b"b")));
        assert!(!ends_within(b"a:", Bound::Unbounded));
        assert!(ends_within(b"\xff", Bound::Unbounded));
    }
}
