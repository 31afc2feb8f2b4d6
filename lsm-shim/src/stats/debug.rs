//! `Debug` for the stats that hold keys: each key as an escaped byte string
//! (`b"user:42\x00"`), as a reader writes it in Rust, not as an array of
//! decimal bytes.

use std::fmt;

use super::TableStats;

/// A key, printed as a byte string literal: printable ASCII as it is, every
/// other byte escaped ([`core::ascii::escape_default`]: `\n`, `\"`, `\x00`).
struct Key<'a>(&'a [u8]);

impl fmt::Debug for Key<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

impl fmt::Debug for TableStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Every field named, so a new one cannot be left out of the output.
        let TableStats {
            run,
            smallest,
            largest,
            entries,
            expected_fpr,
        } = self;
        f.debug_struct("TableStats")
            .field("run", run)
            .field("smallest", &Key(smallest))
            .field("largest", &Key(largest))
            .field("entries", entries)
            .field("expected_fpr", expected_fpr)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::stats::{LevelStats, Stats, TableStats};

    fn table(smallest: &[u8], largest: &[u8]) -> TableStats {
        TableStats {
            run: 0,
            smallest: smallest.to_vec(),
            largest: largest.to_vec(),
            entries: 2,
            expected_fpr: 0.01,
        }
    }

    #[test]
    fn keys_print_as_escaped_byte_strings() {
        let t = table(b"user:42\x00", b"\"q\"\\\n\xff~");
        assert_eq!(
            format!("{t:?}"),
            r#"TableStats { run: 0, smallest: b"user:42\x00", largest: b"\"q\"\\\n\xff~", entries: 2, expected_fpr: 0.01 }"#
        );
        assert_eq!(format!("{:?}", table(b"", b"")).matches(r#"b"""#).count(), 2);
    }

    #[test]
    fn stats_print_their_tables_keys_as_byte_strings_one_field_a_line() {
        let s = Stats {
            levels: vec![LevelStats {
                table_stats: vec![table(b"a\x01", b"z")],
                ..LevelStats::default()
            }],
            ..Stats::default()
        };
        let pretty = format!("{s:#?}");
        let line = |text: &str| pretty.lines().any(|l| l.trim() == text);
        assert!(line(r#"smallest: b"a\x01","#), "{pretty}");
        assert!(line("prefix_scans_unfiltered: 0,"), "{pretty}");
        // No key printed as a list of numbers.
        assert!(!pretty.contains("97,"), "{pretty}");
        assert!(format!("{s:?}").contains(r#"largest: b"z""#));
    }
}
