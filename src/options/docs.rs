//! The option tables of docs/ and `js/option-types.d.ts` must say what the schema says.
//!
//! `cargo test --lib options::docs` fails, with a diff, when either disagrees with
//! `catalog.rs`, when a table's markers are missing from its page, or when markers of a table
//! appear on a page that is not its own (README.md or another page of docs/: a stale copy);
//! `SPEND_SENTINEL_BLESS=1 cargo test --lib options::docs` rewrites them (each page only between
//! its `<!-- options:begin NAME -->` and `<!-- options:end NAME -->` markers). The same command
//! rewrites the OpenTelemetry mapping table of docs/metrics.md from the metric catalog
//! (`metrics::catalog`, between `<!-- metrics:begin otel -->` and `<!-- metrics:end otel -->`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::catalog::DOC_TABLES;
use super::render;

const TYPINGS: &str = "js/option-types.d.ts";
const README: &str = "README.md";
const DOCS: &str = "docs";
const BLESS: &str = "SPEND_SENTINEL_BLESS";
const METRICS_PAGE: &str = "docs/metrics.md";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn doc_tables_and_typings_follow_the_option_schema() {
    let bless = std::env::var(BLESS).is_ok_and(|v| v == "1");
    let mut targets = vec![(
        TYPINGS.to_owned(),
        read_or_empty(&root().join(TYPINGS)),
        render::typescript(),
    )];
    let mut pages: BTreeMap<&str, Vec<&super::catalog::DocTable>> = BTreeMap::new();
    for table in DOC_TABLES {
        pages.entry(table.page).or_default().push(table);
    }
    for (page, tables) in pages {
        let actual = std::fs::read_to_string(root().join(page))
            .unwrap_or_else(|e| panic!("{page} (the page of the `{}` table): {e}", tables[0].name));
        let mut expected = actual.clone();
        for table in tables {
            expected = splice(&expected, table.name, &render::doc_table(table))
                .unwrap_or_else(|e| panic!("{page}: {e}"));
        }
        targets.push((page.to_owned(), actual, expected));
    }
    write_or_fail(targets, "the option schema (src/options/catalog.rs)", bless);
}

/// The OpenTelemetry mapping table of docs/metrics.md is the metric catalog's.
#[test]
fn the_metric_mapping_table_follows_the_metric_catalog() {
    let bless = std::env::var(BLESS).is_ok_and(|v| v == "1");
    let actual = read_or_empty(&root().join(METRICS_PAGE));
    let (begin, end) = ("<!-- metrics:begin otel -->\n", "<!-- metrics:end otel -->");
    let expected = splice_between(
        &actual,
        begin,
        end,
        &crate::metrics::catalog::mapping_table(),
    )
    .unwrap_or_else(|e| panic!("{METRICS_PAGE}: {e}"));
    write_or_fail(
        vec![(METRICS_PAGE.to_owned(), actual, expected)],
        "the metric catalog (src/metrics/catalog.rs)",
        bless,
    );
}

/// Rewrites (with `bless`) or fails with a diff for each `(file, actual, expected)` that differ.
fn write_or_fail(targets: Vec<(String, String, String)>, source: &str, bless: bool) {
    let mut stale = Vec::new();
    for (name, actual, expected) in targets {
        if actual == expected {
            continue;
        }
        if bless {
            std::fs::write(root().join(&name), &expected).expect("the file is writable");
        } else {
            stale.push(format!("{name}:\n{}", diff(&actual, &expected)));
        }
    }
    assert!(
        stale.is_empty(),
        "these files disagree with {source}; to rewrite them run \
         `{BLESS}=1 cargo test --lib options::docs`\n\n{}",
        stale.join("\n")
    );
}

#[test]
fn option_tables_appear_only_on_their_own_page() {
    let mut pages = vec![README.to_owned()];
    let docs = std::fs::read_dir(root().join(DOCS)).expect("docs/ is readable");
    for entry in docs {
        let name = entry.expect("a docs/ entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".md") {
            pages.push(format!("{DOCS}/{name}"));
        }
    }
    let mut strays = Vec::new();
    for page in &pages {
        let text = read_or_empty(&root().join(page));
        for name in marker_names(&text) {
            let own = DOC_TABLES.iter().any(|t| t.name == name && t.page == page);
            if !own {
                strays.push(format!("{page}: `<!-- options:begin {name} -->`"));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "option tables outside the page DOC_TABLES gives them (src/options/catalog.rs), or of no \
         table at all:\n{}",
        strays.join("\n")
    );
}

/// The NAMEs of the `<!-- options:begin NAME -->` lines of `text` (a marker quoted in prose is
/// not on a line of its own).
fn marker_names(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| {
            line.strip_prefix("<!-- options:begin ")?
                .strip_suffix(" -->")
        })
        .collect()
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
    splice_between(text, &begin, &end, table)
}

/// `text` with what is between `begin` and `end` replaced by `table`.
fn splice_between(text: &str, begin: &str, end: &str, table: &str) -> Result<String, String> {
    let missing = || format!("no `{}` … `{end}` pair", begin.trim_end());
    let start = text.find(begin).ok_or_else(missing)? + begin.len();
    let stop = text[start..].find(end).ok_or_else(missing)? + start;
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
fn marker_names_are_read_from_the_begin_markers() {
    let text = "<!-- options:begin a -->\nx\n<!-- options:end a -->\n<!-- options:begin b-c -->\n";
    assert_eq!(marker_names(text), ["a", "b-c"]);
    assert!(marker_names("between `<!-- options:begin NAME -->` and").is_empty());
    assert!(marker_names("no tables").is_empty());
}

#[test]
fn diff_shows_the_changed_lines_only() {
    assert_eq!(diff("a\nb\nc\n", "a\nB\nc\n"), "@@ line 2 @@\n- b\n+ B\n");
    assert_eq!(diff("a\n", "a\nb\n"), "@@ line 2 @@\n+ b\n");
}
