//! The record log under the write-ahead log and the manifest: an append-only
//! file of checksummed records.
//!
//! ```text
//! record = length: u32 LE  length_check: u32 LE  payload_check: u32 LE  payload
//! length_check  = checksum(length bytes)
//! payload_check = checksum(payload)
//! ```
//!
//! The length carries its own check so a damaged length is told apart from a
//! record cut short by a crash: only a record whose header is intact and whose
//! payload runs past the end of the file, or the file's last record, or a tail
//! of zeros (what some file systems leave after a crash), is a *torn tail*.
//! A torn tail is the write that was in flight at the crash, never
//! acknowledged as durable, and is dropped. Anything else is corruption: an
//! error in [`Recovery::TolerateTornTail`] mode, or the end of what is
//! recovered in [`Recovery::PointInTime`] mode.

use crate::coding::{checksum, put_u32, Cursor};

/// Bytes before each payload.
pub(crate) const HEADER_LEN: usize = 12;

/// How a log with a damaged record is recovered.
///
/// ```
/// use amq_lsm::Recovery;
/// assert_eq!(Recovery::default(), Recovery::TolerateTornTail);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Recovery {
    /// Drop a torn last record; any other damaged record is an error
    /// ([`Error::Corruption`](crate::Error::Corruption)). Nothing that was
    /// acknowledged is ever silently dropped.
    #[default]
    TolerateTornTail,
    /// Keep every record before the first damaged one and drop the rest (the
    /// store opens at the last consistent point, losing later writes).
    PointInTime,
}

/// Frames `payload` as one record.
pub(crate) fn encode_record(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    let len = payload.len() as u32;
    put_u32(&mut out, len);
    put_u32(&mut out, checksum(&[&len.to_le_bytes()]));
    put_u32(&mut out, checksum(&[payload]));
    out.extend_from_slice(payload);
    out
}

/// What reading a log found.
#[derive(Debug, Default)]
pub(crate) struct Records<'a> {
    pub records: Vec<&'a [u8]>,
    /// Bytes dropped at the end (a torn tail, or everything after the first
    /// damaged record in point-in-time mode).
    pub dropped_bytes: usize,
}

/// Splits a whole log file into its records. `Err` names what is damaged.
pub(crate) fn read_records(bytes: &[u8], mode: Recovery) -> Result<Records<'_>, &'static str> {
    let mut out = Records::default();
    let mut pos = 0;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        let torn = |out: &mut Records| out.dropped_bytes = rest.len();
        if rest.len() < HEADER_LEN || rest.iter().all(|&b| b == 0) {
            torn(&mut out);
            break;
        }
        // In bounds: rest holds at least HEADER_LEN bytes.
        let le32 = |i: usize| u32::from_le_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
        let (len, len_check, payload_check) = (le32(0), le32(4), le32(8));
        let mut c = Cursor::new(&rest[HEADER_LEN..]);
        let damaged = if checksum(&[&len.to_le_bytes()]) != len_check {
            Some("log record length check")
        } else {
            match c.take(len as usize) {
                // The header is intact but the payload runs past the end.
                None => {
                    torn(&mut out);
                    break;
                }
                Some(payload) if checksum(&[payload]) == payload_check => {
                    out.records.push(payload);
                    pos += HEADER_LEN + payload.len();
                    continue;
                }
                Some(payload) if HEADER_LEN + payload.len() == rest.len() => {
                    // The last record, damaged: the write in flight.
                    torn(&mut out);
                    break;
                }
                Some(_) => Some("log record payload checksum"),
            }
        };
        if let Some(what) = damaged {
            match mode {
                Recovery::TolerateTornTail => return Err(what),
                Recovery::PointInTime => {
                    torn(&mut out);
                    break;
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(payloads: &[&[u8]]) -> Vec<u8> {
        payloads.iter().flat_map(|p| encode_record(p)).collect()
    }

    #[test]
    fn records_round_trip() {
        let bytes = log(&[b"a", b"", b"ccc"]);
        let r = read_records(&bytes, Recovery::TolerateTornTail).unwrap();
        assert_eq!(r.records, vec![&b"a"[..], b"", b"ccc"]);
        assert_eq!(r.dropped_bytes, 0);
    }

    #[test]
    fn every_truncation_drops_only_the_torn_record() {
        let bytes = log(&[b"first", b"second", b"third"]);
        let full = read_records(&bytes, Recovery::TolerateTornTail).unwrap().records;
        for cut in 0..bytes.len() {
            let r = read_records(&bytes[..cut], Recovery::TolerateTornTail).unwrap();
            // Every complete record before the cut survives.
            let complete = (0..=3).rev().find(|&n| log(&full[..n]).len() <= cut).unwrap();
            assert_eq!(r.records, full[..complete].to_vec(), "cut at {cut}");
        }
    }

    #[test]
    fn a_zero_tail_is_torn() {
        let mut bytes = log(&[b"kept"]);
        bytes.extend_from_slice(&[0; 40]);
        let r = read_records(&bytes, Recovery::TolerateTornTail).unwrap();
        assert_eq!(r.records, vec![&b"kept"[..]]);
        assert_eq!(r.dropped_bytes, 40);
    }

    #[test]
    fn damage_in_the_middle_is_an_error_or_a_cut() {
        let mut bytes = log(&[b"first", b"second", b"third"]);
        let second_payload = HEADER_LEN + 5 + HEADER_LEN;
        bytes[second_payload] ^= 1;
        assert!(read_records(&bytes, Recovery::TolerateTornTail).is_err());
        let r = read_records(&bytes, Recovery::PointInTime).unwrap();
        assert_eq!(r.records, vec![&b"first"[..]]);

        // A damaged length is never mistaken for a torn tail.
        let mut bytes = log(&[b"first", b"second", b"third"]);
        bytes[HEADER_LEN + 5] ^= 0x40;
        assert!(read_records(&bytes, Recovery::TolerateTornTail).is_err());
    }

    #[test]
    fn damaged_last_record_is_torn() {
        let mut bytes = log(&[b"first", b"second"]);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let r = read_records(&bytes, Recovery::TolerateTornTail).unwrap();
        assert_eq!(r.records, vec![&b"first"[..]]);
    }
}
