//! Simulates Ribbon shard construction with 64-slot and 128-slot rows:
//! the feasibility check of the two-line layout (`docs/ribbon.md`).
//!
//! `cargo run --release -p amq --example ribbon_overhead64 -- WIDTH KEYS TRIALS MIN_EXTRA RATIO...`
//!
//! For each ratio, builds TRIALS shards of KEYS random equations (random
//! start, WIDTH random coefficient bits with the first set, 7 random result
//! bits) by the same on-the-fly elimination as `ribbon/banding.rs`, and
//! prints the share of attempts that hit a contradiction and the bits per
//! key at r = 7. A shard has `KEYS + max(KEYS·(RATIO − 1), MIN_EXTRA)`
//! slots rounded to whole units: 64-slot blocks of 7 words (56 bytes) for
//! WIDTH 128 (today's layout), 73-slot lines of 8 words (64 bytes: seven
//! column words for 64 slots and a word with 9 more slots of 7 bits) for
//! WIDTH 64, where every 64-slot row lies within two lines. The bits per
//! key include 5 bytes of shard table per shard (a `u32` start and a seed).
//!
//! Self-contained (its own generator), so it needs nothing of the crate.

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One attempt: `true` when every equation was added without contradiction.
fn attempt(width: usize, keys: usize, slots: usize, seed: u64, band: &mut Vec<(u128, u8)>) -> bool {
    let mut s = seed;
    let starts = (slots - width + 1) as u64;
    let mut rows: Vec<(usize, u128, u8)> = (0..keys)
        .map(|_| {
            let start = ((splitmix(&mut s) as u128 * starts as u128) >> 64) as usize;
            let c = ((splitmix(&mut s) as u128) << 64 | splitmix(&mut s) as u128) | 1;
            let c = if width == 64 { c as u64 as u128 } else { c };
            (start, c, splitmix(&mut s) as u8 & 0x7f)
        })
        .collect();
    rows.sort_unstable_by_key(|r| r.0);
    band.clear();
    band.resize(slots, (0, 0));
    for (mut start, mut c, mut r) in rows {
        loop {
            let slot = &mut band[start];
            if slot.0 == 0 {
                *slot = (c, r);
                break;
            }
            c ^= slot.0;
            r ^= slot.1;
            if c == 0 {
                if r != 0 {
                    return false;
                }
                break;
            }
            let skip = c.trailing_zeros();
            start += skip as usize;
            c >>= skip;
        }
    }
    true
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: f64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let width = arg(0, 64.0) as usize;
    let keys = arg(1, 8192.0) as usize;
    let trials = arg(2, 300.0) as u64;
    let min_extra = arg(3, 64.0);
    let ratios: Vec<f64> = args[4.min(args.len())..]
        .iter()
        .filter_map(|a| a.parse().ok())
        .collect();
    assert!(width == 64 || width == 128, "WIDTH is 64 or 128");
    // Slots and bits of one storage unit at r = 7.
    let (unit_slots, unit_bits) = if width == 64 { (73, 512) } else { (64, 7 * 64) };
    let mut band = Vec::new();
    for ratio in ratios {
        let (mut failed, mut total_keys, mut total_bits, mut total_slots) = (0u64, 0usize, 0usize, 0usize);
        for t in 0..trials {
            // Keys per shard are binomial around KEYS (the shard is picked
            // by the hash): a normal draw with standard deviation √KEYS.
            let mut g = 0x9a55_0000 + t;
            let (u1, u2) = (
                (splitmix(&mut g) >> 11) as f64 / (1u64 << 53) as f64,
                (splitmix(&mut g) >> 11) as f64 / (1u64 << 53) as f64,
            );
            let normal = (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * core::f64::consts::PI * u2).cos();
            let k = (keys as f64 + normal * (keys as f64).sqrt()).round().max(1.0) as usize;
            let extra = (k as f64 * (ratio - 1.0)).max(min_extra);
            let units = (((k as f64 + extra) / unit_slots as f64).round() as usize)
                .max(width.div_ceil(unit_slots) + 1);
            let slots = units * unit_slots;
            failed += !attempt(width, k, slots, 0x5eed_0000 + t, &mut band) as u64;
            total_keys += k;
            total_slots += slots;
            total_bits += units * unit_bits + 40;
        }
        println!(
            "width={width} keys={keys} ratio={ratio:.4} slots/key={:.4} fail={failed}/{trials} ({:.1}%) bits/key(r=7)={:.3}",
            total_slots as f64 / total_keys as f64,
            100.0 * failed as f64 / trials as f64,
            total_bits as f64 / total_keys as f64,
        );
    }
}
