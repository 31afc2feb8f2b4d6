//! [`Subject`](crate::Subject) implementations: ours in [`ours`], the other
//! crates' in [`competitors`], and a safe owner for `sbbf-rs` in [`sbbf`].

pub mod competitors;
pub mod ours;
pub mod sbbf;
