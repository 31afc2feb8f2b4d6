//! amq's `ParquetBloom` against the `parquet` crate (arrow-rs) itself:
//!
//! 1. built from the same values at the same size, amq and `parquet`'s `Sbbf`
//!    write identical bytes (header and bitset), and each reads the other's
//!    (including amq's sizes that are not a power of two);
//! 2. a Parquet file written by `parquet` with column Bloom filters enabled
//!    is opened, each column chunk's filter bytes are read at its
//!    `bloom_filter_offset` with amq, and every written value is found;
//! 3. the format's fixed vectors (the hash of the empty string, the
//!    parquet-mr fixture holding "a0".."a9") read the same in both.
//!
//! These live in `amq-bench`, which depends on `parquet` for the benchmark
//! anyway, so amq's own dev-dependencies stay light. `parquet` is built
//! without default features: no arrow, no codecs, no C code.

use std::fs::File;
use std::sync::Arc;

use amq::hash::ParquetHash;
use amq::parquet::{ParquetHeader, ParquetValue};
use amq::{FilterSizing, ParquetBloom};
use parquet::basic::Compression;
use parquet::bloom_filter::Sbbf;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::{BloomFilterPosition, ReaderProperties, WriterProperties};
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

/// The values of four columns, one per physical type amq hashes.
struct Columns {
    ids: Vec<i64>,
    names: Vec<String>,
    small: Vec<i32>,
    scores: Vec<f64>,
}

fn columns(n: usize, offset: usize) -> Columns {
    let r = |i: usize| amq::hash::remix((i + offset) as u64, 0x0a11);
    Columns {
        ids: (0..n).map(|i| r(i) as i64).collect(),
        names: (0..n).map(|i| format!("name-{}", r(i) % 1_000_000_007)).collect(),
        small: (0..n).map(|i| (r(i) >> 40) as i32 - (1 << 23)).collect(),
        scores: (0..n)
            .map(|i| (r(i) >> 11) as f64 / (1u64 << 53) as f64)
            .collect(),
    }
}

/// Inserts every value of `c` into both filters.
fn insert_both(c: &Columns, ours: &mut ParquetBloom, theirs: &mut Sbbf) {
    for v in &c.ids {
        ours.insert(v).unwrap();
        theirs.insert(v);
    }
    for v in &c.names {
        ours.insert(v.as_str()).unwrap();
        theirs.insert(v.as_str());
    }
    for v in &c.small {
        ours.insert(v).unwrap();
        theirs.insert(v);
    }
    for v in &c.scores {
        ours.insert(v).unwrap();
        theirs.insert(v);
    }
}

/// Every value of `c` is found by both, and values never inserted get the
/// same answer from both.
fn assert_same_answers(ours: &ParquetBloom, theirs: &Sbbf, present: &Columns, absent: &Columns) {
    for (c, must) in [(present, true), (absent, false)] {
        for v in &c.ids {
            assert_eq!(ours.contains(v), theirs.check(v));
            assert!(!must || ours.contains(v));
        }
        for v in &c.names {
            assert_eq!(ours.contains(v.as_str()), theirs.check(v.as_str()));
            assert!(!must || ours.contains(v.as_str()));
        }
        for v in &c.small {
            assert_eq!(ours.contains(v), theirs.check(v));
            assert!(!must || ours.contains(v));
        }
        for v in &c.scores {
            assert_eq!(ours.contains(v), theirs.check(v));
            assert!(!must || ours.contains(v));
        }
    }
}

fn sbbf_bytes(s: &Sbbf) -> Vec<u8> {
    let mut out = Vec::new();
    s.write(&mut out).unwrap();
    out
}

// ---------------------------------------------------------------------------
// 1. The same values at the same size: the same bytes.

#[test]
fn same_values_same_size_give_identical_bytes_and_each_reads_the_other() {
    let present = columns(5_000, 0);
    let absent = columns(20_000, 1_000_000);
    for num_bytes in [32, 1024, 16 * 1024, 256 * 1024] {
        let mut theirs = Sbbf::new_with_num_of_bytes(num_bytes);
        let mut ours = ParquetBloom::with_num_bytes(num_bytes).unwrap();
        assert_eq!(ours.num_blocks(), theirs.num_blocks());
        insert_both(&present, &mut ours, &mut theirs);
        let their_bytes = sbbf_bytes(&theirs);
        assert_eq!(ours.to_parquet_bytes(), their_bytes, "{num_bytes} bytes");
        // Each reads the other's.
        let read_by_us = ParquetBloom::from_parquet_bytes(&their_bytes).unwrap();
        assert_eq!(read_by_us.parquet_bitset(), ours.parquet_bitset());
        let read_by_them = Sbbf::from_bytes(&ours.to_parquet_bytes()).unwrap();
        assert_same_answers(&read_by_us, &read_by_them, &present, &absent);
        assert_same_answers(&ours, &theirs, &present, &absent);
    }
}

/// amq's own sizes (any number of blocks, e.g. 10.53 bits per value for 1%)
/// are read by `parquet` with the same answers.
#[test]
fn amq_sizes_that_are_not_a_power_of_two_are_read_by_parquet() {
    let present = columns(30_000, 7);
    let absent = columns(30_000, 2_000_000);
    let n = 4 * present.ids.len();
    let mut ours = ParquetBloom::new(n, FilterSizing::Fpr(0.01)).unwrap();
    assert!(!ours.num_blocks().is_power_of_two(), "{}", ours.num_blocks());
    let mut theirs_sized = Sbbf::new_with_ndv_fpp(n as u64, 0.01).unwrap();
    insert_both(&present, &mut ours, &mut theirs_sized);
    // arrow-rs's sizing for the same target is a power of two, and larger.
    assert!(theirs_sized.num_blocks().is_power_of_two());
    assert!(theirs_sized.num_blocks() > ours.num_blocks());
    let theirs = Sbbf::from_bytes(&ours.to_parquet_bytes()).unwrap();
    assert_eq!(theirs.num_blocks(), ours.num_blocks());
    assert_same_answers(&ours, &theirs, &present, &absent);
    // A union of two partitions' filters reads the same way.
    let mut left = ParquetBloom::new(n, FilterSizing::Fpr(0.01)).unwrap();
    let mut right = left.clone();
    left.insert_values(&present.ids[..15_000]).unwrap();
    right.insert_values(&present.ids[15_000..]).unwrap();
    left.union(&right).unwrap();
    let merged = Sbbf::from_bytes(&left.to_parquet_bytes()).unwrap();
    assert!(present.ids.iter().all(|v| merged.check(v)));
}

// ---------------------------------------------------------------------------
// 2. A Parquet file written by `parquet`, its filters read by amq.

/// Writes `groups` row groups of the four columns with Bloom filters on
/// every column, and returns the file's bytes.
fn write_file(groups: &[Columns], position: BloomFilterPosition) -> Vec<u8> {
    let schema = Arc::new(
        parse_message_type(
            "message amq_interop {
                REQUIRED INT64 id;
                REQUIRED BYTE_ARRAY name (UTF8);
                REQUIRED INT32 small;
                REQUIRED DOUBLE score;
            }",
        )
        .unwrap(),
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_bloom_filter_enabled(true)
            .set_bloom_filter_fpp(0.01)
            .set_bloom_filter_max_ndv(groups[0].ids.len() as u64)
            .set_bloom_filter_position(position)
            .build(),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("interop.parquet");
    let mut writer = SerializedFileWriter::new(File::create(&path).unwrap(), schema, props).unwrap();
    for c in groups {
        let mut rg = writer.next_row_group().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<Int64Type>().write_batch(&c.ids, None, None).unwrap();
        col.close().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        let names: Vec<ByteArray> = c.names.iter().map(|s| ByteArray::from(s.as_str())).collect();
        col.typed::<ByteArrayType>()
            .write_batch(&names, None, None)
            .unwrap();
        col.close().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<Int32Type>()
            .write_batch(&c.small, None, None)
            .unwrap();
        col.close().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<DoubleType>()
            .write_batch(&c.scores, None, None)
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
    }
    writer.close().unwrap();
    std::fs::read(&path).unwrap()
}

#[test]
fn filters_in_a_parquet_file_written_by_parquet_are_read_by_amq() {
    let groups = [columns(3_000, 0), columns(2_000, 500_000)];
    let absent = columns(20_000, 9_000_000);
    for position in [BloomFilterPosition::AfterRowGroup, BloomFilterPosition::End] {
        let file = write_file(&groups, position);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.parquet");
        std::fs::write(&path, &file).unwrap();
        let options = ReadOptionsBuilder::new()
            .with_reader_properties(ReaderProperties::builder().set_read_bloom_filter(true).build())
            .build();
        let reader = SerializedFileReader::new_with_options(File::open(&path).unwrap(), options).unwrap();
        assert_eq!(reader.num_row_groups(), groups.len());
        for (g, c) in groups.iter().enumerate() {
            let rg = reader.get_row_group(g).unwrap();
            let meta = reader.metadata().row_group(g);
            let mut filters = Vec::new();
            for col in 0..4 {
                let cm = meta.column(col);
                let offset = cm.bloom_filter_offset().expect("a Bloom filter was written") as usize;
                // With the recorded length: exactly header + bitset.
                let len = cm.bloom_filter_length().expect("parquet records the length") as usize;
                let ours = ParquetBloom::from_parquet_bytes(&file[offset..offset + len]).unwrap();
                // Without it: the header says how long the bitset is.
                let (prefix, used) = ParquetBloom::read_parquet(&file[offset..]).unwrap();
                assert_eq!(used, len);
                assert_eq!(prefix.parquet_bitset(), ours.parquet_bitset());
                let header = ParquetHeader::parse(&file[offset..]).unwrap();
                assert_eq!(header.header_len() + header.bitset_len(), len);
                // The same bits parquet's own reader found.
                let theirs = rg.get_column_bloom_filter(col).expect("parquet reads its filter");
                assert_eq!(ours.num_blocks(), theirs.num_blocks());
                assert_eq!(ours.to_parquet_bytes(), sbbf_bytes(theirs));
                filters.push(ours);
            }
            // Every written value is found, by the single and batch paths.
            let mut out = vec![false; c.ids.len()];
            filters[0].contains_values(&c.ids, &mut out);
            assert!(out.iter().all(|&o| o), "an id was missed");
            assert!(c.names.iter().all(|v| filters[1].contains(v.as_str())));
            assert!(c.small.iter().all(|v| filters[2].contains(v)));
            assert!(c.scores.iter().all(|v| filters[3].contains(v)));
            // And values never written mostly are not (the writer targeted
            // 1%; its folding may land a little above).
            let fp = absent.ids.iter().filter(|v| filters[0].contains(*v)).count();
            assert!(fp < absent.ids.len() / 20, "{fp} false positives");
            let hashes: Vec<ParquetHash> = c.names.iter().map(|v| v.as_str().parquet_hash()).collect();
            let mut out = vec![false; hashes.len()];
            filters[1].contains_hashes(&hashes, &mut out);
            assert!(out.iter().all(|&o| o));
        }
    }
}

// ---------------------------------------------------------------------------
// 3. The format's fixed vectors, in both.

#[test]
fn the_fixed_vectors_read_the_same_in_both() {
    assert_eq!("".parquet_hash().get(), 17_241_709_254_077_376_921);
    // parquet-mr's one-block filter of "a0".."a9" (arrow-rs's fixture).
    let fixture: [u8; 32] = [
        200, 1, 80, 20, 64, 68, 8, 109, 6, 37, 4, 67, 144, 80, 96, 32, 8, 132, 43, 33, 0, 5, 99, 65, 2, 0,
        224, 44, 64, 78, 96, 4,
    ];
    let theirs = Sbbf::new(&fixture);
    let ours = ParquetBloom::from_parquet_bitset(&fixture).unwrap();
    for i in 0..10 {
        let v = format!("a{i}");
        assert!(theirs.check(v.as_str()) && ours.contains(v.as_str()), "{v}");
    }
    let mut built = ParquetBloom::with_num_bytes(32).unwrap();
    let mut theirs_built = Sbbf::new_with_num_of_bytes(32);
    for i in 0..10 {
        let v = format!("a{i}");
        built.insert(v.as_str()).unwrap();
        theirs_built.insert(v.as_str());
    }
    assert_eq!(built.parquet_bitset(), fixture);
    assert_eq!(built.to_parquet_bytes(), sbbf_bytes(&theirs_built));
}
