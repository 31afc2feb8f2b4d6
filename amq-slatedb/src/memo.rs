//! One key hash per `get`, however many tables it asks.
//!
//! SlateDB asks each table's filter about a `get`'s key in turn, with the
//! same key bytes (a fresh copy per table). Each thread keeps the last key
//! it hashed and its prepared hash ([`amq::PreparedHash`]: for a blocked
//! Bloom filter, the key's probe mask too), compared by bytes: a filter
//! asked about that key again takes the hash from here instead of hashing
//! the key again. Equal bytes have equal hashes, so the memo can never
//! answer for another key; a `get` whose tables are asked from several
//! threads (SlateDB's reads are tasks) hashes once per thread.
//!
//! There is one memo per hash kind: whole keys ([`amq::hash_key`]) and
//! prefixes ([`amq::hash_prefix`]), which a prefix filter holds side by
//! side.

use std::cell::RefCell;

use amq::{KeyHash, PreparedHash};

/// The last key a thread hashed one way, and its prepared hash.
struct Memo {
    key: Vec<u8>,
    hash: Option<PreparedHash>,
}

impl Memo {
    const fn new() -> Self {
        Memo {
            key: Vec::new(),
            hash: None,
        }
    }

    /// `f` of `key`'s prepared hash: the memo's when `key` is the last key,
    /// else `hash(key)`'s, kept for the next call (`missed` is called then).
    #[inline]
    fn with<R>(
        &mut self,
        key: &[u8],
        hash: impl FnOnce(&[u8]) -> KeyHash,
        missed: impl FnOnce(),
        f: impl FnOnce(&mut PreparedHash) -> R,
    ) -> R {
        match &mut self.hash {
            Some(h) if self.key == key => f(h),
            slot => {
                missed();
                self.key.clear();
                self.key.extend_from_slice(key);
                f(slot.insert(PreparedHash::new(hash(key))))
            }
        }
    }
}

thread_local! {
    static KEYS: RefCell<Memo> = const { RefCell::new(Memo::new()) };
    static PREFIXES: RefCell<Memo> = const { RefCell::new(Memo::new()) };
}

/// `f` of `key`'s [`amq::hash_key`], prepared; `missed()` when it was
/// hashed here (not taken from the memo).
#[inline]
pub(crate) fn with_key_hash<R>(
    key: &[u8],
    missed: impl FnOnce(),
    f: impl FnOnce(&mut PreparedHash) -> R,
) -> R {
    KEYS.with(|m| match m.try_borrow_mut() {
        Ok(mut m) => m.with(key, amq::hash_key, missed, f),
        // Re-entered (a filter asked from inside another's query): no memo.
        Err(_) => {
            missed();
            f(&mut PreparedHash::new(amq::hash_key(key)))
        }
    })
}

/// [`with_key_hash`] for a prefix's [`amq::hash_prefix`].
#[inline]
pub(crate) fn with_prefix_hash<R>(
    prefix: &[u8],
    missed: impl FnOnce(),
    f: impl FnOnce(&mut PreparedHash) -> R,
) -> R {
    PREFIXES.with(|m| match m.try_borrow_mut() {
        Ok(mut m) => m.with(prefix, amq::hash_prefix, missed, f),
        Err(_) => {
            missed();
            f(&mut PreparedHash::new(amq::hash_prefix(prefix)))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The memo hashes a key once while it is asked about again, and gives
    /// each key its own hash: never another key's, whatever the order.
    #[test]
    fn a_key_is_hashed_once_and_gets_its_own_hash() {
        let misses = Cell::new(0);
        let keys: [&[u8]; 6] = [b"a", b"a", b"b", b"a", b"", b""];
        for k in keys {
            let h = with_key_hash(k, || misses.set(misses.get() + 1), |p| p.hash());
            assert_eq!(h, amq::hash_key(k));
            let p = with_prefix_hash(k, || {}, |p| p.hash());
            assert_eq!(p, amq::hash_prefix(k));
        }
        // "a" (twice), "b", "a", "" (twice): four hashes.
        assert_eq!(misses.get(), 4);
    }
}
