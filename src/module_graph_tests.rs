//! The top-level modules of `src/` (a file or a folder each) and the `crate::` paths between them
//! form no circle, and every such use is one the layering of docs/architecture.md allows; and no
//! source searches through a closed list or sizes a counter array by a bare number.
//!
//! Read from the sources, not from rustc: a path is `crate::a…`, a `crate::{a, b…}` group, or
//! `super::…` climbing to the crate root. Comments and string literals are left out; the crate
//! root (lib.rs) is no node.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Module → the modules it uses, each with where it first does (`file:line`).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// Which code a graph is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    /// Tests included: the top level's layering holds for them too.
    All,
    /// Without test modules (`tests.rs`, `*_tests.rs`, `#[cfg(test)] mod`): inside a folder a
    /// test may reach into a sibling for a fixture (authority's DNS tests use the HTTP client);
    /// the code that ships must not circle.
    Shipped,
}

/// A file that is a test module whole.
fn is_test_file(path: &Path) -> bool {
    path.file_stem()
        .is_some_and(|stem| stem == "tests" || stem.to_string_lossy().ends_with("_tests"))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Other,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source with comments and the insides of string and char literals blanked out (lines kept).
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    // Pushes what a skipped span kept of its newlines.
    let blank = |out: &mut String, span: &[char]| {
        out.extend(span.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
    };
    while i < c.len() {
        let start = i;
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && at(i) != '\n' {
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if at(i) == 'r'
            && (i == 0
                || !is_ident(at(i - 1))
                || (at(i - 1) == 'b' && (i < 2 || !is_ident(at(i - 2)))))
            && matches!(at(i + 1), '"' | '#')
        {
            let hashes = c[i + 1..].iter().take_while(|&&ch| ch == '#').count();
            if at(i + 1 + hashes) != '"' {
                out.push('r');
                i += 1;
                continue;
            }
            i += hashes + 2;
            while i < c.len()
                && !(at(i) == '"' && c[i + 1..].iter().take(hashes).all(|&ch| ch == '#'))
            {
                i += 1;
            }
            i += hashes + 1;
        } else if at(i) == '"' {
            i += 1;
            while i < c.len() && at(i) != '"' {
                i += if at(i) == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal ('x', '\n', '\u{..}'); a lone quote starts a lifetime.
            i += 2;
            while i < c.len() && at(i) != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(at(i));
            i += 1;
            continue;
        }
        blank(&mut out, &c[start..i.min(c.len())]);
    }
    out
}

/// The tokens a path is made of, each with its line.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = strip(src).chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let ch = c[i];
        if is_ident(ch) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            out.push((Tok::Ident(c[start..i].iter().collect()), line));
            continue;
        }
        let tok = match ch {
            '\n' => {
                line += 1;
                None
            }
            ':' if c.get(i + 1) == Some(&':') => {
                i += 1;
                Some(Tok::PathSep)
            }
            '{' => Some(Tok::Open),
            '}' => Some(Tok::Close),
            ',' => Some(Tok::Comma),
            // `$crate` in a macro is `crate`.
            '$' => None,
            c if c.is_whitespace() => None,
            _ => Some(Tok::Other),
        };
        out.extend(tok.map(|t| (t, line)));
        i += 1;
    }
    out
}

/// Each path that names a module of the crate, resolved from the crate root: `crate::…`,
/// `super::…` (climbing from the file's module), `self::…`; a `{…}` group gives one path per
/// item. `module` is the file's module path (`["fleet", "task"]` for src/fleet/task.rs); inline
/// `mod x { … }` blocks extend it.
fn resolved_uses(src: &str, module: &[String], code: Code) -> Vec<(Vec<String>, usize)> {
    let toks = tokens(src);
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(name), _)) => Some(name.as_str()),
        _ => None,
    };
    let tok = |i: usize| toks.get(i).map(|(t, _)| t);
    let mut uses = Vec::new();
    let mut depth = 0;
    // Each inline module: its name, its depth of braces, and whether it is `#[cfg(test)]`.
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut test_attribute = false;
    let in_test = |inline: &[(String, usize, bool)]| inline.iter().any(|(_, _, test)| *test);
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Open => depth += 1,
            Tok::Close => {
                if inline.last().is_some_and(|(_, d, _)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            // `cfg ( test )`: the attribute of the item that follows.
            Tok::Ident(word)
                if word == "cfg"
                    && ident(i + 2) == Some("test")
                    && tok(i + 3) == Some(&Tok::Other) =>
            {
                test_attribute = true;
                i += 3;
            }
            Tok::Ident(word) if word == "mod" && tok(i + 2) == Some(&Tok::Open) => {
                if let Some(name) = ident(i + 1) {
                    inline.push((name.to_owned(), depth + 1, test_attribute));
                }
                test_attribute = false;
            }
            Tok::Ident(word)
                if matches!(word.as_str(), "crate" | "super" | "self")
                    && tok(i + 1) == Some(&Tok::PathSep) =>
            {
                if i > 0 && tok(i - 1) == Some(&Tok::PathSep) {
                    i += 1;
                    continue;
                }
                let here: Vec<String> = module
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|(name, _, _)| name.clone()))
                    .collect();
                let mut next = i;
                let mut climbs = 0;
                while ident(next) == Some("super") && tok(next + 1) == Some(&Tok::PathSep) {
                    climbs += 1;
                    next += 2;
                }
                let base = match word.as_str() {
                    "crate" => Vec::new(),
                    "self" => here,
                    _ => here[..here.len().saturating_sub(climbs)].to_vec(),
                };
                if climbs == 0 {
                    next += 2;
                }
                if code == Code::All || !in_test(&inline) {
                    uses.extend(paths_at(&toks, next, base));
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    uses
}

/// The paths that continue `prefix` at `i`: `a::b`, or one per item of `{a::x, b, self}`.
fn paths_at(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
) -> Vec<(Vec<String>, usize)> {
    loop {
        match toks.get(i) {
            Some((Tok::Ident(name), line)) => {
                if name != "self" {
                    prefix.push(name.clone());
                }
                if toks.get(i + 1).map(|(t, _)| t) != Some(&Tok::PathSep) {
                    return vec![(prefix, *line)];
                }
                i += 2;
            }
            Some((Tok::Open, line)) => {
                let mut paths = Vec::new();
                let mut depth = 0;
                for (at, (tok, _)) in toks.iter().enumerate().skip(i) {
                    match tok {
                        Tok::Open => depth += 1,
                        Tok::Close => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    let starts_item = depth == 1 && matches!(tok, Tok::Open | Tok::Comma);
                    if starts_item && toks.get(at + 1).map(|(t, _)| t) != Some(&Tok::Close) {
                        paths.extend(paths_at(toks, at + 1, prefix.clone()));
                    }
                }
                if paths.is_empty() {
                    paths.push((prefix, *line));
                }
                return paths;
            }
            // `a::*`, or the end of a path.
            Some((_, line)) => return vec![(prefix, *line)],
            None => return vec![(prefix, 0)],
        }
    }
}

/// The module path of a file under src/: `fleet/task.rs` → `fleet::task`, `fleet/mod.rs` → `fleet`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The graph of the crate whose sources are in `src`: its top-level modules.
fn graph(src: &Path) -> Graph {
    folder_graph(src, &[], Code::All)
}

/// The graph inside the folder of module `folder` (`[]` for src/ itself): its files and
/// subfolders are the nodes (its own root, `mod.rs` or `lib.rs`, is none), and `a → b` when
/// something under `a` names a path into `b`. A use through a re-export of the folder's root
/// is not seen.
fn folder_graph(src: &Path, folder: &[String], code: Code) -> Graph {
    let dir = folder
        .iter()
        .fold(src.to_path_buf(), |dir, name| dir.join(name));
    let mut nodes = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("the folder is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let is_source =
            path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "mod";
        if path.is_dir() || is_source {
            nodes.insert(name);
        }
    }
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut graph: Graph = nodes.iter().map(|n| (n.clone(), BTreeMap::new())).collect();
    let depth = folder.len();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src/");
        let module = module_path(relative);
        let skipped = code == Code::Shipped && is_test_file(relative);
        if skipped || module.len() <= depth || module[..depth] != *folder {
            continue;
        }
        let from = &module[depth];
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        for (path, line) in resolved_uses(&text, &module, code) {
            let Some(to) = path.get(depth).filter(|_| path[..depth] == *folder) else {
                continue;
            };
            if to != from && nodes.contains(to) {
                let at = format!("src/{}:{line}", relative.display());
                graph
                    .get_mut(from)
                    .expect("a node")
                    .entry(to.clone())
                    .or_insert(at);
            }
        }
    }
    graph
}

/// Every folder of src/ (src/ itself included), as a module path.
fn folders(src: &Path, folder: Vec<String>, out: &mut Vec<Vec<String>>) {
    let dir = folder
        .iter()
        .fold(src.to_path_buf(), |dir, name| dir.join(name));
    let mut children: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the folder is readable")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_dir())
        .collect();
    children.sort();
    out.push(folder.clone());
    for child in children {
        let mut path = folder.clone();
        path.push(
            child
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned(),
        );
        folders(src, path, out);
    }
}

/// The circles of the graph, one per edge a depth-first walk finds leading back into its own
/// path (`u → v`, v on the path): the shortest circle through that edge, as `v → … → u → v` with
/// where each step is used. A graph with a circle has at least one such edge.
fn circles(graph: &Graph) -> Vec<String> {
    fn walk<'g>(
        graph: &'g Graph,
        node: &'g str,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
        back: &mut Vec<(&'g str, &'g str)>,
    ) {
        path.push(node);
        for to in graph[node].keys() {
            if path.contains(&to.as_str()) {
                back.push((node, to));
            } else if !done.contains(to.as_str()) {
                walk(graph, to, path, done, back);
            }
        }
        path.pop();
        done.insert(node);
    }
    let (mut done, mut back) = (BTreeSet::new(), Vec::new());
    for node in graph.keys() {
        if !done.contains(node.as_str()) {
            walk(graph, node, &mut Vec::new(), &mut done, &mut back);
        }
    }
    back.into_iter()
        .map(|(from, to)| {
            let mut steps = shortest_path(graph, to, from);
            steps.push(to);
            let mut text = to.to_owned();
            for pair in steps.windows(2) {
                let _ = write!(text, " → {} ({})", pair[1], graph[pair[0]][pair[1]]);
            }
            text
        })
        .collect()
}

/// The shortest path `from → … → to` (breadth first; `to` is reachable).
fn shortest_path<'g>(graph: &'g Graph, from: &'g str, to: &'g str) -> Vec<&'g str> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(node) = queue.pop_front() {
        if node == to {
            break;
        }
        for next in graph[node].keys() {
            if next != from && !came_from.contains_key(next.as_str()) {
                came_from.insert(next.as_str(), node);
                queue.push_back(next);
            }
        }
    }
    let mut path = vec![to];
    while let Some(&before) = came_from.get(path[path.len() - 1]) {
        path.push(before);
    }
    path.reverse();
    path
}

/// docs/architecture.md's `## Layering` list: `- `a`, `b`: `c`, `d`` (or `: nothing`).
fn documented_layers(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let names = |text: &str| -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    };
    let section = doc
        .split("\n## Layering\n")
        .nth(1)
        .expect("docs/architecture.md has a ## Layering section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut items: Vec<String> = Vec::new();
    for line in section.lines() {
        match (line.strip_prefix("- "), items.last_mut()) {
            (Some(item), _) => items.push(item.to_owned()),
            // An item continued on an indented line.
            (None, Some(item)) if line.starts_with("  ") => item.push_str(line),
            _ => {}
        }
    }
    let mut layers = BTreeMap::new();
    for item in items {
        let (modules, uses) = item
            .split_once(": ")
            .expect("each layer item is `- modules: uses`");
        for module in names(modules) {
            layers.insert(module, names(uses).into_iter().collect());
        }
    }
    layers
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_top_level_modules_form_no_circle() {
    let graph = graph(&manifest_dir().join("src"));
    assert!(
        graph.contains_key("rules") && !graph["config"].is_empty(),
        "the graph was read: {graph:?}"
    );
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "top-level modules of src/ in a circle:\n{}",
        found.join("\n")
    );
}

/// A circle inside a folder (two files of src/bindings/ using each other) is as much a tangle as
/// one between top-level modules, and the top-level graph cannot see it.
#[test]
fn the_modules_inside_every_folder_form_no_circle() {
    let src = manifest_dir().join("src");
    let mut all = Vec::new();
    folders(&src, Vec::new(), &mut all);
    assert!(
        all.contains(&vec!["bindings".to_owned()]),
        "the folders were read: {all:?}"
    );
    let found: Vec<String> = all
        .iter()
        .flat_map(|folder| {
            let name = if folder.is_empty() {
                "src".to_owned()
            } else {
                format!("src/{}", folder.join("/"))
            };
            circles(&folder_graph(&src, folder, Code::Shipped))
                .into_iter()
                .map(move |circle| format!("{name}: {circle}"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "modules in a circle:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_use_between_top_level_modules_is_one_the_layering_allows() {
    let graph = graph(&manifest_dir().join("src"));
    let doc = std::fs::read_to_string(manifest_dir().join("docs/architecture.md"))
        .expect("docs/architecture.md");
    let layers = documented_layers(&doc);
    let listed: BTreeSet<&String> = layers.keys().collect();
    let modules: BTreeSet<&String> = graph.keys().collect();
    assert_eq!(
        listed, modules,
        "docs/architecture.md's Layering lists each top-level module of src/ once"
    );
    let mut outside = Vec::new();
    for (from, uses) in &graph {
        for (to, at) in uses {
            if !layers[from].contains(to) {
                outside.push(format!("{from} → {to} ({at})"));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "uses the Layering of docs/architecture.md does not allow:\n{}",
        outside.join("\n")
    );
}

/// Writes `files` (path under src/, text) to a fresh directory and returns the graph read there.
fn graph_of(files: &[(&str, &str)]) -> Graph {
    folder_graph_of(&[], files)
}

/// As [`graph_of`], the graph inside `folder` of the code that ships.
fn folder_graph_of(folder: &[&str], files: &[(&str, &str)]) -> Graph {
    let dir = std::env::temp_dir().join(format!(
        "spend-sentinel-module-graph-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    ));
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a temp dir");
        std::fs::write(path, text).expect("a temp file");
    }
    let folder: Vec<String> = folder.iter().map(|&name| name.to_owned()).collect();
    let code = if folder.is_empty() {
        Code::All
    } else {
        Code::Shipped
    };
    let read = folder_graph(&dir, &folder, code);
    std::fs::remove_dir_all(&dir).expect("the temp dir is removed");
    read
}

fn edges(graph: &Graph) -> Vec<String> {
    graph
        .iter()
        .flat_map(|(from, uses)| uses.keys().map(move |to| format!("{from}->{to}")))
        .collect()
}

#[test]
fn paths_groups_and_super_at_the_root_are_uses_and_comments_strings_and_inner_super_are_not() {
    let graph = graph_of(&[
        ("lib.rs", "mod a; mod b; mod c; mod d; mod e; use crate::a::X;"),
        ("a.rs", "use crate::{b::{X, Y}, c};\nfn f() { let _ = super::d::Z; }\n// crate::e\n"),
        ("b/mod.rs", "mod inner;\nconst S: &str = \"crate::e\"; const R: &str = r#\"crate::e\"#;\nfn g<'a>(_: &'a str) -> char { '\"' }"),
        ("b/inner.rs", "use super::super::c::Y; use super::X;\n#[cfg(test)] mod tests { use super::super::Q; use $crate::d; }"),
        ("c.rs", "pub(crate) fn f() {} /* crate::e /* nested */ crate::e */"),
        ("d.rs", "mod t { use super::super::e; }"),
        ("e.rs", ""),
    ]);
    assert_eq!(
        edges(&graph),
        ["a->b", "a->c", "a->d", "b->c", "b->d", "d->e"]
    );
    assert_eq!(graph["a"]["d"], "src/a.rs:2");
}

#[test]
fn a_circle_is_named_with_where_each_step_is_used() {
    let graph = graph_of(&[
        ("a.rs", "use crate::b;"),
        ("b/mod.rs", "mod x;"),
        ("b/x.rs", "\nuse crate::c::Y;"),
        ("c.rs", "fn f() { crate::a::g() }"),
        ("d.rs", "use crate::a;"),
    ]);
    assert_eq!(
        circles(&graph),
        ["a → b (src/a.rs:1) → c (src/b/x.rs:2) → a (src/c.rs:1)"]
    );
    let graph = graph_of(&[("a.rs", "use crate::b;"), ("b.rs", "")]);
    assert!(circles(&graph).is_empty());
    // The two circles this crate once had, each named by its shortest round.
    let graph = graph_of(&[
        ("authority.rs", "use crate::config;\nuse crate::runtime;"),
        ("config.rs", "use crate::logging;"),
        ("logging.rs", "use crate::refresher;"),
        ("refresher.rs", "use crate::{authority, runtime};"),
        ("runtime.rs", "use crate::authority;"),
    ]);
    assert_eq!(
        circles(&graph),
        [
            "authority → config (src/authority.rs:1) → logging (src/config.rs:1) → refresher \
             (src/logging.rs:1) → authority (src/refresher.rs:1)",
            "authority → runtime (src/authority.rs:2) → authority (src/runtime.rs:1)",
        ]
    );
}

#[test]
fn a_circle_inside_a_folder_is_read_through_super_self_and_crate() {
    let files = [
        ("lib.rs", "mod b; mod c;"),
        ("b/mod.rs", "mod x; mod y; mod z; use self::x::P;"),
        ("b/x.rs", "use super::y::Q;\nuse crate::c;"),
        ("b/y.rs", "mod t { use super::super::z::{self, R}; }"),
        ("b/z/mod.rs", "mod w;"),
        ("b/z/w.rs", "use crate::b::{x::P};"),
        ("c.rs", "use crate::b::x;"),
        ("b/x_tests.rs", "use super::z;"),
        (
            "b/w.rs",
            "#[cfg(test)]\nmod tests { use super::super::x; }\nmod not_a_test { use super::super::y; }",
        ),
    ];
    let graph = folder_graph_of(&["b"], &files);
    assert_eq!(
        edges(&graph),
        ["w->y", "x->y", "y->z", "z->x"],
        "test code is not read"
    );
    assert_eq!(
        circles(&graph),
        ["y → z (src/b/y.rs:1) → x (src/b/z/w.rs:1) → y (src/b/x.rs:1)"]
    );
    assert_eq!(
        edges(&graph_of(&files)),
        ["b->c", "c->b"],
        "the top level sees b and c only"
    );
    assert!(edges(&folder_graph_of(&["b", "z"], &files)).is_empty());
}

#[test]
fn the_layering_is_read_from_its_list() {
    let doc = "# T\n\n## Layering\n\nText `a`.\n\n- `rules`: `numbers`,\n  `clock`\n- `numbers`, `clock`: nothing\n\n## Next\n\n- `x`: `y`\n";
    let layers = documented_layers(doc);
    assert_eq!(
        layers.keys().collect::<Vec<_>>(),
        ["clock", "numbers", "rules"]
    );
    assert_eq!(
        layers["rules"].iter().collect::<Vec<_>>(),
        ["clock", "numbers"]
    );
    assert!(layers["clock"].is_empty());
}

/// A list's place is its `index()`: a search through `ALL` (that falls back to slot 0 when
/// it misses) or a counter array sized by a number instead of the list's `COUNT` is how two
/// lists drifted apart before.
#[test]
fn no_search_through_a_list_and_no_counter_array_of_a_bare_size() {
    let mut paths = Vec::new();
    rust_files(&manifest_dir().join("src"), &mut paths);
    assert!(paths.len() > 50, "the sources were read");
    let files = paths.into_iter().map(|path| {
        let text = std::fs::read_to_string(&path).expect("a source file");
        (path.display().to_string(), text)
    });
    let search = ["ALL", ".iter()", ".position("].concat();
    let bare_size = |line: &str| {
        let line = line.trim();
        (line.contains("[Atomic") || line.contains("[[Atomic"))
            && line
                .split(';')
                .skip(1)
                .any(|size| size.trim_start().starts_with(|c: char| c.is_ascii_digit()))
    };
    let mut found = Vec::new();
    for (path, text) in files {
        // A search spans up to three lines once formatted: `X::ALL` / `.iter()` / `.position(`.
        let joined: String = text.split_whitespace().collect();
        let mut from = 0;
        while let Some(at) = joined[from..].find(&search) {
            found.push(format!("{path}: a search through ALL"));
            from += at + 1;
        }
        for (n, line) in text.lines().enumerate() {
            if bare_size(line) {
                found.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
