//! [`WriteBatch`]: several puts and deletes applied atomically, as one
//! write-ahead-log record.
//!
//! ```text
//! batch = count: varint  op*
//! op    = 1 key: bytes value: bytes    (put)
//!       | 0 key: bytes                 (delete)
//! bytes = length: varint  byte*
//! ```

use crate::coding::{put_bytes, put_varint, Cursor};
use crate::memtable::Entry;

/// Puts and deletes that [`Db::write`](crate::Db::write) applies all or
/// nothing: they share one log record, so a crash keeps all of them or none.
///
/// ```
/// use amq_lsm::WriteBatch;
/// let mut b = WriteBatch::new();
/// b.put(b"k1", b"v1");
/// b.delete(b"k0");
/// assert_eq!(b.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    ops: Vec<(Vec<u8>, Entry)>,
}

const OP_DELETE: u8 = 0;
const OP_PUT: u8 = 1;

impl WriteBatch {
    /// An empty batch.
    ///
    /// ```
    /// assert!(amq_lsm::WriteBatch::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a put of `key` to `value` (anything that is bytes: `&[u8]`,
    /// `Vec<u8>`, `&str`, `String`, byte arrays).
    ///
    /// ```
    /// use amq_lsm::WriteBatch;
    /// let mut b = WriteBatch::new();
    /// b.put("k", "v").put(b"k2", vec![1u8, 2]);
    /// assert_eq!(b.len(), 2);
    /// ```
    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) -> &mut Self {
        self.ops
            .push((key.as_ref().to_vec(), Entry::Value(value.as_ref().to_vec())));
        self
    }

    /// Adds a delete of `key` (a tombstone).
    ///
    /// ```
    /// use amq_lsm::WriteBatch;
    /// let mut b = WriteBatch::new();
    /// b.delete("k");
    /// assert!(!b.is_empty());
    /// ```
    pub fn delete<K: AsRef<[u8]>>(&mut self, key: K) -> &mut Self {
        self.ops.push((key.as_ref().to_vec(), Entry::Tombstone));
        self
    }

    /// Number of operations.
    ///
    /// ```
    /// assert_eq!(amq_lsm::WriteBatch::new().put("a", "1").len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the batch has no operations.
    ///
    /// ```
    /// assert!(amq_lsm::WriteBatch::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub(crate) fn into_ops(self) -> Vec<(Vec<u8>, Entry)> {
        self.ops
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, self.ops.len() as u64);
        for (k, e) in &self.ops {
            match e {
                Entry::Value(v) => {
                    out.push(OP_PUT);
                    put_bytes(&mut out, k);
                    put_bytes(&mut out, v);
                }
                Entry::Tombstone => {
                    out.push(OP_DELETE);
                    put_bytes(&mut out, k);
                }
            }
        }
        out
    }

    /// Decodes a batch; `None` if the bytes are not one whole batch.
    pub(crate) fn decode(payload: &[u8]) -> Option<WriteBatch> {
        let mut c = Cursor::new(payload);
        let count = c.len()?;
        // Each op takes at least 2 bytes: never reserve more than that implies.
        let mut ops = Vec::with_capacity(count.min(payload.len() / 2));
        for _ in 0..count {
            let op = c.u8()?;
            let key = c.bytes()?.to_vec();
            let entry = match op {
                OP_PUT => Entry::Value(c.bytes()?.to_vec()),
                OP_DELETE => Entry::Tombstone,
                _ => return None,
            };
            ops.push((key, entry));
        }
        c.is_empty().then_some(WriteBatch { ops })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn batches_round_trip() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").delete(b"b").put(b"", b"");
        assert_eq!(WriteBatch::decode(&b.encode()), Some(b));
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes: Vec<u8>) {
            let _ = WriteBatch::decode(&bytes);
        }
    }

    #[test]
    fn trailing_bytes_and_unknown_ops_are_rejected() {
        let mut bytes = WriteBatch::new().put(b"a", b"1").encode();
        bytes.push(0);
        assert_eq!(WriteBatch::decode(&bytes), None);
        assert_eq!(WriteBatch::decode(&[1, 7, 0]), None);
        assert_eq!(WriteBatch::decode(&[0xff, 0xff, 0xff, 0xff, 0x0f]), None);
    }
}
