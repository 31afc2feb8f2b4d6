//! Writes the seed corpus: valid encodings of every filter kind for the
//! decoder targets (with the mode byte each expects first).
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example seed_corpus
//! ```

use std::fs;
use std::path::Path;

use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
use amq::{hash_key, AnyFilter, Filter, FilterKind, FilterSizing, KeyHash, ParquetBloom};

fn target_name(kind: FilterKind) -> &'static str {
    match kind {
        FilterKind::StandardBloom => "decode_standard_bloom",
        FilterKind::BlockedBloom => "decode_blocked_bloom",
        FilterKind::CountingBloom => "decode_counting_bloom",
        FilterKind::CuckooFilter => "decode_cuckoo",
        FilterKind::Xor8 => "decode_xor8",
        FilterKind::Xor16 => "decode_xor16",
        FilterKind::BinaryFuse8 => "decode_binary_fuse8",
        FilterKind::BinaryFuse16 => "decode_binary_fuse16",
        FilterKind::BinaryFuse32 => "decode_binary_fuse32",
        FilterKind::Ribbon => "decode_ribbon",
        FilterKind::ParquetBloom => "decode_parquet_bloom",
        FilterKind::GrafiteRange => "decode_grafite_range",
        _ => "decode_any",
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for &kind in FilterKind::ALL.iter() {
        for n in [0u32, 1, 5, 40] {
            // 2^-7: Ribbon's two-line layout (its default at 7 result bits).
            for sizing in [
                FilterSizing::Fpr(0.01),
                FilterSizing::BitsPerKey(20.0),
                FilterSizing::Fpr(1.0 / 128.0),
            ] {
                let hashes: Vec<KeyHash> = (0..n).map(|i| hash_key(&i.to_le_bytes())).collect();
                let Ok(f) = AnyFilter::build(kind, &hashes, sizing) else {
                    continue;
                };
                let bytes = f.to_bytes();
                // Mode 0: the bytes as they are (checksum intact).
                let mut input = vec![0u8];
                input.extend_from_slice(&bytes);
                let tag = format!("{kind:?}-{n}-{sizing:?}-{}", bytes.len());
                for target in [target_name(kind), "decode_any"] {
                    let dir = root.join(target);
                    fs::create_dir_all(&dir).unwrap();
                    fs::write(dir.join(&tag), &input).unwrap();
                }
            }
        }
    }
    // ParquetBloom is not built from key hashes: its seeds come from values,
    // for its amq-frame decoder and for the Parquet framing decoder.
    for n in [0u32, 1, 5, 40] {
        for fpr in [0.1, 0.001] {
            let mut f = ParquetBloom::new(n.max(1) as usize, FilterSizing::Fpr(fpr)).unwrap();
            for i in 0..n {
                f.insert(&i).unwrap();
            }
            for (target, bytes) in [
                ("decode_parquet_bloom", f.to_bytes()),
                ("decode_any", f.to_bytes()),
                ("decode_parquet_framed", f.to_parquet_bytes()),
            ] {
                let mut input = vec![0u8];
                input.extend_from_slice(&bytes);
                let dir = root.join(target);
                fs::create_dir_all(&dir).unwrap();
                fs::write(dir.join(format!("ParquetBloom-{n}-{}", bytes.len())), &input).unwrap();
            }
        }
    }
    // GrafiteRange takes ordered u64 keys, not key hashes: its seeds come
    // from keys and range sizings.
    for n in [0u64, 1, 5, 40, 300] {
        for sizing in [
            RangeSizing::BitsPerKey(12.0),
            RangeSizing::BitsPerKey(30.0),
            RangeSizing::Fpr {
                fpr: 0.01,
                max_range_len: 64,
            },
        ] {
            let keys: Vec<u64> = (0..n).map(|i| amq::hash::remix(i, 1) >> (i % 40)).collect();
            let bytes = GrafiteRange::build(&keys, sizing).unwrap().to_bytes();
            let mut input = vec![0u8];
            input.extend_from_slice(&bytes);
            for target in ["decode_grafite_range", "decode_any"] {
                let dir = root.join(target);
                fs::create_dir_all(&dir).unwrap();
                fs::write(
                    dir.join(format!("GrafiteRange-{n}-{sizing:?}-{}", bytes.len())),
                    &input,
                )
                .unwrap();
            }
        }
    }
    println!("seed corpus written under {}", root.display());
}
