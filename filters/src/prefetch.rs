//! Cache prefetch hints for batched queries.
//!
//! A prefetch is only a hint: the CPU may ignore it, and it never faults, even
//! for an address that is not mapped. So the one `unsafe` block here cannot
//! cause undefined behaviour; it exists because the intrinsic is declared
//! `unsafe` on older compilers. On targets without a stable prefetch
//! intrinsic this is a no-op and batched queries fall back to plain loads.
#![allow(unsafe_code)]

/// Asks the CPU to bring the cache line holding `*value` into L1.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse", not(amq_portable)))]
    #[allow(unused_unsafe)]
    // SAFETY: `_mm_prefetch` reads nothing architecturally visible and cannot
    // fault for any address; `value` is moreover a live reference. SSE is
    // enabled (checked by the `cfg` above), as the intrinsic requires.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse", not(amq_portable))))]
    let _ = value;
}

/// A batched query as a software pipeline: `prepare` computes where a key's
/// answer lives and starts loading it (prefetch), `answer` reads it; key
/// `i + DEPTH` is prepared just before key `i` is answered, so `DEPTH` keys'
/// loads are always in flight and none waits for a whole batch to be
/// prefetched first.
///
/// The depth is the number of keys ahead, so the lines in flight are `DEPTH`
/// times the lines a key reads: about as many as the CPU tracks at once (its
/// outstanding-miss buffers, 20–30 on current cores) is the most that helps;
/// prefetching a whole batch of 32 keys of three or four lines each asked
/// for more than that, and the prefetches past it waited
/// (`docs/results-amq.md`, "Batched queries"). `DEPTH` must be a power of
/// two (the ring of prepared keys is indexed by a mask).
///
/// `out[i] = answer(prepare(hashes[i]))` for every `i`.
///
/// # Panics
/// If `hashes.len() != out.len()`.
#[inline(always)]
pub(crate) fn pipelined<P: Copy + Default, const DEPTH: usize>(
    hashes: &[u64],
    out: &mut [bool],
    mut prepare: impl FnMut(u64) -> P,
    mut answer: impl FnMut(P) -> bool,
) {
    const { assert!(DEPTH.is_power_of_two()) };
    assert_eq!(hashes.len(), out.len(), "contains_many: length mismatch");
    let mut ring = [P::default(); DEPTH];
    let lead = hashes.len().min(DEPTH);
    for (slot, &h) in ring.iter_mut().zip(&hashes[..lead]) {
        *slot = prepare(h);
    }
    // While keys are left to prepare: answer key `i`, whose slot then takes
    // key `i + DEPTH`.
    let steady = hashes.len() - lead;
    for (i, (o, &ahead)) in out[..steady].iter_mut().zip(&hashes[lead..]).enumerate() {
        let slot = &mut ring[i & (DEPTH - 1)];
        let ready = *slot;
        *slot = prepare(ahead);
        *o = answer(ready);
    }
    // The last `lead` keys, already prepared.
    for (i, o) in out.iter_mut().enumerate().skip(steady) {
        *o = answer(ring[i & (DEPTH - 1)]);
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    /// What the pipeline is for: key `i + DEPTH` is prepared (its line
    /// prefetched) before key `i` is answered, so `DEPTH` keys' loads are in
    /// flight; and no key is answered before it was prepared. A pipeline
    /// that prepared each key just before answering it (no overlap) fails.
    #[test]
    fn pipelined_prepares_depth_keys_ahead() {
        const DEPTH: usize = 8;
        for len in [0usize, 1, 7, 8, 9, 25, 64] {
            let hashes: Vec<u64> = (0..len as u64).collect();
            let mut out = alloc::vec![false; len];
            let events = core::cell::RefCell::new(Vec::new());
            super::pipelined::<u64, DEPTH>(
                &hashes,
                &mut out,
                |h| {
                    events.borrow_mut().push((true, h));
                    super::prefetch(&h);
                    h
                },
                |p| {
                    events.borrow_mut().push((false, p));
                    true
                },
            );
            let events = events.into_inner();
            let at = |prepared: bool, key: u64| events.iter().position(|&e| e == (prepared, key)).unwrap();
            let answers: Vec<u64> = events.iter().filter(|e| !e.0).map(|e| e.1).collect();
            assert_eq!(answers, hashes, "answered in order, once each");
            for i in 0..len {
                assert!(
                    at(true, i as u64) < at(false, i as u64),
                    "len {len}: key {i} answered unprepared"
                );
                if i + DEPTH < len {
                    assert!(
                        at(true, (i + DEPTH) as u64) < at(false, i as u64),
                        "len {len}: key {} not prepared before key {i} was answered",
                        i + DEPTH
                    );
                }
            }
        }
    }

    /// The pipeline answers every key in order, for every length around the
    /// depth (shorter, equal, longer, and not a multiple of it).
    #[test]
    fn pipelined_answers_every_key_in_order() {
        for len in 0..40usize {
            let hashes: alloc::vec::Vec<u64> = (0..len as u64).map(|i| i * 7 + 3).collect();
            let mut out = alloc::vec![false; len];
            let mut prepared = 0;
            super::pipelined::<u64, 8>(
                &hashes,
                &mut out,
                |h| {
                    prepared += 1;
                    h * 2
                },
                |p| (p / 2).is_multiple_of(3),
            );
            assert_eq!(prepared, len);
            let want: alloc::vec::Vec<bool> = hashes.iter().map(|h| h.is_multiple_of(3)).collect();
            assert_eq!(out, want, "len {len}");
        }
    }
}
