//! What the fuzz targets share: a counting allocator, the decoder check, the
//! filter operation models, and the store's checks. Each target in
//! `fuzz_targets/` is one line calling into here, so the checks are written
//! once and every crash found is reproduced by the regression tests in the
//! main workspace with the same logic.

pub mod alloc;
pub mod decode;
pub mod infix;
pub mod keymap;
pub mod lsm;
pub mod memento;
pub mod ops;
pub mod parquet;
pub mod range;
pub mod view;
