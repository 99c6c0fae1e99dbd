//! The README's option tables and `js/option-types.d.ts` must say what the schema says.
//!
//! `cargo test --lib options::docs` fails, with a diff, when either disagrees with
//! `catalog.rs`; `SPEND_SENTINEL_BLESS=1 cargo test --lib options::docs` rewrites them (the
//! README only between its `<!-- options:begin NAME -->` and `<!-- options:end NAME -->`
//! markers).

use std::path::{Path, PathBuf};

use super::catalog::README_TABLES;
use super::render;

const TYPINGS: &str = "js/option-types.d.ts";
const README: &str = "README.md";
const BLESS: &str = "SPEND_SENTINEL_BLESS";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn readme_tables_and_typings_follow_the_option_schema() {
    let bless = std::env::var(BLESS).is_ok_and(|v| v == "1");
    let readme = std::fs::read_to_string(root().join(README)).expect("README.md is readable");
    let mut expected_readme = readme.clone();
    for table in README_TABLES {
        expected_readme = splice(&expected_readme, table.name, &render::readme_table(table))
            .unwrap_or_else(|e| panic!("{README}: {e}"));
    }
    let targets = [
        (
            TYPINGS,
            read_or_empty(&root().join(TYPINGS)),
            render::typescript(),
        ),
        (README, readme, expected_readme),
    ];
    let mut stale = Vec::new();
    for (name, actual, expected) in targets {
        if actual == expected {
            continue;
        }
        if bless {
            std::fs::write(root().join(name), &expected).expect("the file is writable");
        } else {
            stale.push(format!("{name}:\n{}", diff(&actual, &expected)));
        }
    }
    assert!(
        stale.is_empty(),
        "these files disagree with the option schema (src/options/catalog.rs); to rewrite them \
         run `{BLESS}=1 cargo test --lib options::docs`\n\n{}",
        stale.join("\n")
    );
}

fn read_or_empty(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn markers(name: &str) -> (String, String) {
    (
        format!("<!-- options:begin {name} -->\n"),
        format!("<!-- options:end {name} -->"),
    )
}

/// `text` with what is between the markers of `name` replaced by `table`.
fn splice(text: &str, name: &str, table: &str) -> Result<String, String> {
    let (begin, end) = markers(name);
    let missing = || format!("no `{}` … `{end}` pair", begin.trim_end());
    let start = text.find(&begin).ok_or_else(missing)? + begin.len();
    let stop = text[start..].find(&end).ok_or_else(missing)? + start;
    Ok(format!("{}{table}{}", &text[..start], &text[stop..]))
}

/// The lines that differ, between the common head and tail: `-` as it is, `+` as it should be.
fn diff(actual: &str, expected: &str) -> String {
    let a: Vec<&str> = actual.lines().collect();
    let e: Vec<&str> = expected.lines().collect();
    let head = a.iter().zip(&e).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(e[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    const SHOWN: usize = 20;
    let mut out = format!("@@ line {} @@\n", head + 1);
    for (sign, lines) in [
        ("-", &a[head..a.len() - tail]),
        ("+", &e[head..e.len() - tail]),
    ] {
        for line in lines.iter().take(SHOWN) {
            out.push_str(&format!("{sign} {line}\n"));
        }
        if lines.len() > SHOWN {
            out.push_str(&format!("{sign} … ({} more lines)\n", lines.len() - SHOWN));
        }
    }
    out
}

#[test]
fn splice_replaces_only_between_the_markers() {
    let text = "a\n<!-- options:begin t -->\nold\n<!-- options:end t -->\nb\n";
    assert_eq!(
        splice(text, "t", "new\n").unwrap(),
        "a\n<!-- options:begin t -->\nnew\n<!-- options:end t -->\nb\n"
    );
    assert!(splice(text, "other", "x").is_err());
    assert!(splice("<!-- options:begin t -->\n", "t", "x").is_err());
}

#[test]
fn diff_shows_the_changed_lines_only() {
    assert_eq!(diff("a\nb\nc\n", "a\nB\nc\n"), "@@ line 2 @@\n- b\n+ B\n");
    assert_eq!(diff("a\n", "a\nb\n"), "@@ line 2 @@\n+ b\n");
}
