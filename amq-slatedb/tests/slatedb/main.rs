//! amq-slatedb's integration tests, in one binary (each binary links all
//! of SlateDB: one link instead of three keeps the test command fast).

mod docs;
mod model;
mod policies;
mod support;
