use std::hint::black_box;
use amq::hash::remix;
use amq::{Filter, Ribbon, RibbonParams, StaticFilter};
fn main() {
    let n = 1_000_000usize;
    let keys: Vec<u64> = (0..n as u64).map(|i| remix(i, 42)).collect();
    let absent: Vec<u64> = (0..1_000_000u64).map(|i| remix(i, 43)).collect();
    let f = Ribbon::build(&keys, &RibbonParams::with_result_bits(7).unwrap()).unwrap();
    let mut c = 0;
    for _ in 0..50 { c += absent.iter().filter(|&&h| f.contains_hash(black_box(h))).count(); }
    println!("{c}");
}
