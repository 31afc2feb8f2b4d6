//! Writes the seed corpus: valid encodings of every filter kind for the
//! decoder targets, and key maps for `decode_key_map` (with the mode byte
//! each expects first).
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example seed_corpus
//! ```

use std::fs;
use std::path::Path;

use amq::range::{GrafiteRange, KeyMap, MementoFilter, MementoOptions, RangeFilter, RangeSizing};
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
        FilterKind::QuotientFilter => "decode_quotient",
        FilterKind::ExpandingQuotientFilter => "decode_expanding",
        FilterKind::MementoFilter => "decode_memento",
        FilterKind::SplitBlockBloom => "decode_split_block_bloom",
        FilterKind::PackedBinaryFuse => "decode_packed_binary_fuse",
        _ => "decode_any",
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for &kind in FilterKind::ALL.iter() {
        for n in [0u32, 1, 5, 40] {
            // 1% and 2^-7: Ribbon's two-line layout (lines of 6 and 7
            // columns, of 7), 0.1%: its blocked one.
            for sizing in [
                FilterSizing::Fpr(0.01),
                FilterSizing::BitsPerKey(20.0),
                FilterSizing::Fpr(1.0 / 128.0),
                FilterSizing::Fpr(0.001),
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
    // Bumped Ribbon frames (layouts 2 and 3), built from `BUMPED_MIN_KEYS`
    // keys on: the blocked layout at 0.1%, the two-line one at 1% (lines of
    // 6 and 7 columns), 2^-7 and 2^-8.
    for sizing in [
        FilterSizing::Fpr(0.001),
        FilterSizing::Fpr(0.01),
        FilterSizing::Fpr(1.0 / 128.0),
        FilterSizing::Fpr(1.0 / 256.0),
    ] {
        let hashes: Vec<KeyHash> = (0..amq::ribbon::BUMPED_MIN_KEYS as u32)
            .map(|i| hash_key(&i.to_le_bytes()))
            .collect();
        let f = amq::Ribbon::build(&hashes, sizing).unwrap();
        assert!(f.is_bumped_layout());
        let bytes = f.to_bytes();
        let mut input = vec![0u8];
        input.extend_from_slice(&bytes);
        let tag = format!("Ribbon-bumped-{sizing:?}-{}", bytes.len());
        for target in ["decode_ribbon", "decode_any"] {
            let dir = root.join(target);
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(&tag), &input).unwrap();
        }
    }
    // A sharded binary fuse frame (2 shards; only builds of more than 2^23
    // keys shard, too large for a seed), the golden frame of
    // `filters/src/xor/sharded.rs`.
    let sharded = concat!(
        "414d5146020007012d000000800000000000000000000000000000000310000000020000002800000000000000020000",
        "00efba76d7bf8ca3faefba76d7bf8ca3fa00000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "595c003800e5a4000000000000000000c80000a477a49e0000940030a800032900000000000000003700002be4940000",
        "81000000000000000000000000005200a7009aa30c8d0000d300000000000000075000606c00000000b60331e300e500",
        "f70000000000000000a300d30000008de581cd34671f7010",
    );
    let bytes: Vec<u8> = (0..sharded.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&sharded[i..i + 2], 16).unwrap())
        .collect();
    let mut input = vec![0u8];
    input.extend_from_slice(&bytes);
    for target in ["decode_binary_fuse8", "decode_any"] {
        let dir = root.join(target);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("BinaryFuse8-sharded-{}", bytes.len())), &input).unwrap();
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
    // MementoFilter takes ordered u64 keys too, inserted one at a time
    // (some expansions, some dense partitions).
    for n in [0u64, 1, 5, 40, 300] {
        for (fpr, len) in [(0.25, 1), (0.01, 64), (0.001, 1 << 20)] {
            let mut o = MementoOptions::new(fpr, len);
            o.initial_keys = 8;
            let mut f = MementoFilter::new(o).unwrap();
            for i in 0..n {
                f.insert(if i % 2 == 0 { i } else { amq::hash::remix(i, 2) })
                    .unwrap();
            }
            let bytes = f.to_bytes();
            let mut input = vec![0u8];
            input.extend_from_slice(&bytes);
            for target in ["decode_memento", "decode_any"] {
                let dir = root.join(target);
                fs::create_dir_all(&dir).unwrap();
                fs::write(
                    dir.join(format!("Memento-{n}-{fpr}-{len}-{}", bytes.len())),
                    &input,
                )
                .unwrap();
            }
        }
    }
    forged_seeds(&root);
    // Key maps, fitted to the key shapes amq-lsm's tables hold.
    let dir = root.join("decode_key_map");
    fs::create_dir_all(&dir).unwrap();
    for (name, keys) in key_sets() {
        let bytes = KeyMap::from_keys(keys.iter().map(Vec::as_slice)).to_bytes();
        assert_eq!(
            bytes[4] == 2,
            name == "random-ids",
            "{name}: a run where one is meant"
        );
        let mut input = vec![0u8];
        input.extend_from_slice(&bytes);
        fs::write(dir.join(format!("KeyMap-{name}-{}", bytes.len())), &input).unwrap();
        // The same map coarsened (version 3, as fit_to_scans writes it).
        let map = KeyMap::from_keys(keys.iter().map(Vec::as_slice));
        if let Ok(coarse) = map.coarsened(9) {
            let bytes = coarse.to_bytes();
            assert_eq!(bytes[4], 3, "{name}: a coarsened map is version 3");
            let mut input = vec![0u8];
            input.extend_from_slice(&bytes);
            fs::write(dir.join(format!("KeyMap-{name}-shift9-{}", bytes.len())), &input).unwrap();
        }
    }
    // Infix range filters of the same key sets, at two sizes.
    let dir = root.join("decode_infix_range");
    fs::create_dir_all(&dir).unwrap();
    for (name, keys) in key_sets() {
        for fpr in [0.3, 0.001] {
            let sizing = RangeSizing::Fpr {
                fpr,
                max_range_len: 1,
            };
            let bytes = amq::range::InfixRange::build(&keys, sizing).unwrap().to_bytes();
            let mut input = vec![0u8];
            input.extend_from_slice(&bytes);
            fs::write(dir.join(format!("Infix-{name}-{fpr}-{}", bytes.len())), &input).unwrap();
        }
    }
    println!("seed corpus written under {}", root.display());
}

/// Key sets for the key map's seeds: composite random ids (a map with a
/// run), composite, decimal (20 digits, and 25 whose differences pass 64
/// bits), dense big-endian, mixed lengths, one key and none.
fn key_sets() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let text = |keys: Vec<String>| keys.into_iter().map(String::into_bytes).collect::<Vec<_>>();
    let composite = (0..40u64)
        .map(|i| format!("t{:06}:{:08}", [2, 3, 5, 8][i as usize % 4], i / 4 * 10 + i % 3))
        .collect();
    let decimal = (0..40u64)
        .map(|i| {
            format!(
                "ev:{:020}",
                1_700_000_000_000_000_000 + i * 1_000_000_000 + i * i * 7_919
            )
        })
        .collect();
    let wide = (0..40u64)
        .map(|i| format!("n:{:020}{:05}", amq::hash::remix(i / 4, 2), i % 4 * 12_345))
        .collect();
    let dense = (0..40u64)
        .map(|i| (0x0187_4a00_0000 + 4 * i).to_be_bytes().to_vec())
        .collect();
    let mut mixed: Vec<Vec<u8>> = vec![
        b"m/".to_vec(),
        b"m/a".to_vec(),
        b"m/ab".to_vec(),
        b"m/ab\0".to_vec(),
    ];
    mixed.extend((0..8u8).map(|i| [&[b'H'; 44][..], &[b'0' + i]].concat()));
    mixed.extend([vec![b'q', 0], vec![b'q', 0, 0], vec![b'q', 0xff]]);
    // Twenty random 8-byte ids, then random 8-byte ids: a map with a run
    // (version 2).
    let random_ids = (0..320u64)
        .map(|i| {
            let id = amq::hash::remix(i % 20, 4).to_be_bytes();
            [&b"o/"[..], &id, &amq::hash::remix(i, 5).to_be_bytes()].concat()
        })
        .collect();
    vec![
        ("random-ids", random_ids),
        ("composite", text(composite)),
        ("decimal", text(decimal)),
        ("wide", text(wide)),
        ("dense", dense),
        ("mixed", mixed),
        ("one", vec![b"only".to_vec()]),
        ("none", Vec::new()),
    ]
}

/// Writes `bytes` as a seed of each target, behind mode byte `mode` (1:
/// the decoder target reseals the checksum first).
fn seed(root: &Path, targets: &[&str], tag: &str, mode: u8, bytes: &[u8]) {
    let mut input = vec![mode];
    input.extend_from_slice(bytes);
    for target in targets {
        let dir = root.join(target);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("{tag}-{}", bytes.len())), &input).unwrap();
    }
}

/// The version-1 form of a version-2 frame (no padding; checksum left to
/// the target's reseal).
fn version_1(v2: &[u8]) -> Vec<u8> {
    let params_end = 20 + u32::from_le_bytes(v2[8..12].try_into().unwrap()) as usize;
    let mut v1 = v2[..params_end].to_vec();
    v1[4] = 1;
    v1.extend_from_slice(&v2[params_end.div_ceil(64) * 64..]);
    v1
}

/// Seeds for the decoders' cross-field checks: sharded binary fuse frames
/// with shard counts that are not powers of two, expanding and Memento
/// frames with void copies and with forged expansion counts, and
/// version-1 frames of the kinds that exist from version 2.
fn forged_seeds(root: &Path) {
    use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
    use amq::Insert;
    // Kind 7, seed 0, arity 3, L = 16, c = 3, 40 keys, S shards of zeros.
    for shards in [3u32, 4, 5, 6] {
        let mut params = 0u64.to_le_bytes().to_vec();
        params.push(3);
        params.extend_from_slice(&16u32.to_le_bytes());
        params.extend_from_slice(&3u32.to_le_bytes());
        params.extend_from_slice(&40u64.to_le_bytes());
        params.extend_from_slice(&shards.to_le_bytes());
        for s in 1..=u64::from(shards) {
            params.extend_from_slice(&s.to_le_bytes());
        }
        let payload = vec![0u8; shards as usize * 80];
        let mut b = b"AMQF\x02\x00\x07\x01".to_vec();
        b.extend_from_slice(&(params.len() as u32).to_le_bytes());
        b.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        b.extend_from_slice(&params);
        b.resize(b.len().next_multiple_of(64), 0);
        b.extend_from_slice(&payload);
        b.extend_from_slice(&[0; 8]);
        seed(
            root,
            &["decode_binary_fuse8", "decode_any"],
            &format!("BinaryFuse8-{shards}-shards"),
            1,
            &b,
        );
    }
    // Void copies: keys inserted three times whose entries went void.
    let mut o = ExpandingOptions::new(0.1);
    o.initial_keys = 3;
    o.horizon = 0;
    let mut f = ExpandingQuotientFilter::new(o).unwrap();
    for i in 0..40u32 {
        for _ in 0..if i < 4 { 3 } else { 1 } {
            f.insert(&i.to_le_bytes()).unwrap();
        }
    }
    let copies = f.to_bytes();
    assert_eq!(copies[8], 29, "the void-copy count is written");
    seed(
        root,
        &["decode_expanding", "decode_any"],
        "Expanding-void-copies",
        0,
        &copies,
    );
    // Horizon 64: the width stays valid at any expansion count.
    o.horizon = 64;
    let mut g = ExpandingQuotientFilter::new(o).unwrap();
    g.insert(b"apple").unwrap();
    let mut forged = g.to_bytes();
    forged[24] = 40;
    seed(
        root,
        &["decode_expanding", "decode_any"],
        "Expanding-forged-expansions",
        1,
        &forged,
    );
    let mut m = MementoFilter::new({
        let mut o = MementoOptions::new(0.25, 8);
        o.initial_keys = 4;
        o.horizon = 0;
        o
    })
    .unwrap();
    for i in 0..300u64 {
        for _ in 0..if i < 4 { 3 } else { 1 } {
            m.insert(amq::hash::remix(i, 3)).unwrap();
        }
    }
    let memento = m.to_bytes();
    assert_eq!(memento[8], 37, "the void-copy count is written");
    seed(root, &["decode_memento"], "Memento-void-copies", 0, &memento);
    let mut forged = memento.clone();
    forged[32] = 50;
    seed(root, &["decode_memento"], "Memento-forged-expansions", 1, &forged);
    // Version 1 of the kinds of version 2.
    let hashes: Vec<KeyHash> = (0..40u32).map(|i| hash_key(&i.to_le_bytes())).collect();
    for kind in [
        FilterKind::QuotientFilter,
        FilterKind::SplitBlockBloom,
        FilterKind::PackedBinaryFuse,
    ] {
        let bytes = AnyFilter::build(kind, &hashes, FilterSizing::Fpr(0.01))
            .unwrap()
            .to_bytes();
        seed(
            root,
            &[target_name(kind), "decode_any"],
            &format!("{kind:?}-version-1"),
            1,
            &version_1(&bytes),
        );
    }
    seed(
        root,
        &["decode_expanding", "decode_any"],
        "Expanding-version-1",
        1,
        &version_1(&copies),
    );
    seed(
        root,
        &["decode_memento"],
        "Memento-version-1",
        1,
        &version_1(&memento),
    );
    let grafite = GrafiteRange::build(&[1, 5, 900], RangeSizing::BitsPerKey(12.0))
        .unwrap()
        .to_bytes();
    seed(
        root,
        &["decode_grafite_range"],
        "GrafiteRange-version-1",
        1,
        &version_1(&grafite),
    );
}
