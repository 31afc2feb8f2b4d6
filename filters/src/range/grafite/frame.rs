//! The byte format of a Grafite filter (kind 12 of `docs/format.md`, key
//! scheme [`HashScheme::OrderedU64`](crate::HashScheme::OrderedU64)), shared
//! by the owned filter and the view.
//!
//! Parameters (little-endian): `u64` distinct keys, `u64` hash seed, then
//! the Elias–Fano code's: `u64` reduced universe `r` (`1..=2^62`), `u64`
//! values held (at most the keys, and 0 exactly when the keys are), `u8`
//! low bits (`0..=62`), `u8` select sample interval, log2 (`4..=24`).
//! Payload: the code's words (`succinct/layout.rs`): upper bits, lower
//! bits and a zero word, select samples, each `u64` little-endian. The hash
//! constants and block size follow from the seed and `r`
//! (`grafite/hash.rs`).

use alloc::vec::Vec;

use super::GrafiteRange;
use crate::format::{self, ByteWriter, Frame, Reader};
use crate::succinct::Layout;
use crate::{Error, FilterKind, FormatError};

/// What a frame's parameters say.
#[derive(Debug, Clone, Copy)]
pub(super) struct Parts {
    pub(super) num_keys: u64,
    pub(super) seed: u64,
    pub(super) layout: Layout,
}

impl GrafiteRange {
    /// The frame: parameters, then the code's words.
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(self.num_keys).u64(self.seed);
        self.ef.layout.write_params(&mut p);
        let words = &self.ef.words;
        format::encode(FilterKind::GrafiteRange, &p.into_vec(), words.len() * 8, |w| {
            w.u64s(words);
        })
    }

    /// Decodes a checked frame of this kind, every word checked.
    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        let (parts, payload) = parse_frame(frame)?;
        let ef = crate::succinct::EfCore::decode(parts.layout, payload)?;
        GrafiteRange::from_parts(ef, parts.num_keys, parts.seed)
    }
}

/// Checks a frame's parameters, and that the payload is exactly the words
/// they imply, in O(1); returns them and the payload.
pub(super) fn parse_frame(mut frame: Frame<'_>) -> Result<(Parts, Reader<'_>), Error> {
    let bad = |why| Err(Error::Format(FormatError::InvalidParameters(why)));
    if frame.version < 2 {
        return bad("Grafite filters exist from format version 2");
    }
    let num_keys = frame.params.u64()?;
    let seed = frame.params.u64()?;
    let layout = Layout::read_params(&mut frame.params)?;
    frame.params.finish()?;
    if layout.len > num_keys || (layout.len == 0) != (num_keys == 0) {
        return bad("Elias-Fano values must be at most the keys, and none exactly without keys");
    }
    layout.check_payload_len(&frame.payload)?;
    Ok((
        Parts {
            num_keys,
            seed,
            layout,
        },
        frame.payload,
    ))
}
