//! The module's layers point one way: each file names only the files
//! listed before it in `mod.rs`'s "The module's files, lowest first" (and
//! `mod.rs`'s own types), so the list a newcomer reads is the import order.

use alloc::vec::Vec;

/// Every file of the module but `mod.rs` and the tests, with its source.
const FILES: &[(&str, &str)] = &[
    ("banding", include_str!("banding.rs")),
    ("blocked", include_str!("blocked.rs")),
    ("build", include_str!("build.rs")),
    ("bumped", include_str!("bumped.rs")),
    ("bumped_build", include_str!("bumped_build.rs")),
    ("bumped_lines", include_str!("bumped_lines.rs")),
    ("config", include_str!("config.rs")),
    ("frame", include_str!("frame.rs")),
    ("kernel", include_str!("kernel.rs")),
    ("layout", include_str!("layout.rs")),
    ("legacy", include_str!("legacy.rs")),
    ("line_filter", include_str!("line_filter.rs")),
    ("lines", include_str!("lines.rs")),
    ("order", include_str!("order.rs")),
    ("predict", include_str!("predict.rs")),
    ("query", include_str!("query.rs")),
    ("row", include_str!("row.rs")),
    ("runs", include_str!("runs.rs")),
    ("shard", include_str!("shard.rs")),
    ("solution", include_str!("solution.rs")),
    ("table", include_str!("table.rs")),
    ("view", include_str!("view.rs")),
];

/// The files in the order `mod.rs` documents, lowest first.
fn documented_order() -> Vec<&'static str> {
    let docs = include_str!("mod.rs");
    let from = docs
        .find("# The module's files, lowest first")
        .expect("the section");
    let section = &docs[from..];
    let section = &section[..section.find("holds the type they all work on").expect("its end")];
    section
        .split('`')
        .filter_map(|s| s.strip_suffix(".rs"))
        .filter(|name| FILES.iter().any(|(f, _)| f == name))
        .collect()
}

/// The module names a file refers to as `super::name` or inside a
/// `super::{..}` group (the tests at its end left out: they may reach
/// anywhere).
fn refers_to(source: &str) -> Vec<&'static str> {
    let code = source.split("#[cfg(test)]").next().unwrap_or("");
    let mut paths: Vec<&str> = Vec::new();
    for (i, _) in code.match_indices("super::") {
        let rest = &code[i + "super::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => paths.extend(group[..group.find('}').unwrap_or(group.len())].split(',')),
            None => paths.push(rest),
        }
    }
    FILES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| {
            paths.iter().any(|path| {
                path.trim_start()
                    .strip_prefix(*name)
                    .is_some_and(|after| !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
            })
        })
        .collect()
}

#[test]
fn the_documented_list_names_every_file_once() {
    let order = documented_order();
    for (name, _) in FILES {
        assert_eq!(
            order.iter().filter(|n| *n == name).count(),
            1,
            "{name}.rs in the list"
        );
    }
    assert_eq!(order.len(), FILES.len());
}

#[test]
fn each_file_imports_only_files_before_it() {
    let order = documented_order();
    let rank = |name: &str| order.iter().position(|n| *n == name).unwrap();
    for (name, source) in FILES {
        for used in refers_to(source) {
            assert!(
                rank(used) < rank(name),
                "{name}.rs names {used}.rs, which the list puts after it"
            );
        }
    }
}

/// The check can fail: a file naming a later one is caught.
#[test]
fn a_reference_upwards_is_seen() {
    assert_eq!(
        refers_to("use super::lines::Line;\nuse super::line_filter::X;"),
        ["line_filter", "lines"]
    );
    assert!(refers_to("use super::linesx::Y;").is_empty());
    assert_eq!(
        refers_to("use super::{Kernel, view, lines::Line};"),
        ["lines", "view"]
    );
    assert!(refers_to("#[cfg(test)]\nuse super::lines::Line;").is_empty());
}
