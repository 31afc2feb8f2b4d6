//! Turns a crashing input of a decoder target into the bytes the decoder
//! saw, for a regression test in the main workspace
//! (`filters/tests/fuzz_regressions/`).
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example regression_bytes -- \
//!     TARGET ARTIFACT OUT
//! ```

use amq::FilterKind;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, artifact, out] = &args[..] else {
        eprintln!("usage: regression_bytes TARGET ARTIFACT OUT");
        std::process::exit(2);
    };
    let kind = FilterKind::ALL.iter().copied().find(|k| {
        target.trim_start_matches("decode_").replace('_', "")
            == format!("{k:?}").to_lowercase().replace("filter", "")
    });
    let data = std::fs::read(artifact).expect("read the artifact");
    let bytes = match target.as_str() {
        "decode_key_map" => amq_fuzz::keymap::effective_bytes(&data),
        _ => amq_fuzz::decode::effective_bytes(&data, kind),
    }
    .expect("a non-empty input");
    std::fs::write(out, bytes).expect("write");
}
