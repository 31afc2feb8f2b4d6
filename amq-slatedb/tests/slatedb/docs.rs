//! `docs/slatedb.md` shows the quickstart program: it must be the one that
//! compiles and runs (`examples/quickstart.rs`), from its first `use` on.

#[test]
fn the_docs_show_the_quickstart_program() {
    let docs = include_str!("../../../docs/slatedb.md");
    let program = include_str!("../../examples/quickstart.rs");
    let program = &program[program.find("use std::sync::Arc;").unwrap()..];
    let start = docs.find("```rust\n").expect("a Rust block") + "```rust\n".len();
    let shown = &docs[start..start + docs[start..].find("```").unwrap()];
    assert_eq!(
        shown, program,
        "docs/slatedb.md and examples/quickstart.rs differ"
    );
}
