//! The option schema as TypeScript interfaces (`js/option-types.d.ts`) and as the docs' tables.
//! Both say the same things: what an option is for, its type, its rule, its default.

use super::catalog::{DocTable, Rows, ALL};
use super::env;
use super::schema::{Default, Group, Kind, Opt};
use crate::rules::JsNumber;

/// The typings file's header. The imports are the types option signatures name.
const TYPINGS_HEADER: &str = "\
// Generated from the option schema (src/options/catalog.rs): edit it there, then run
// `SPEND_SENTINEL_BLESS=1 cargo test --lib options::docs` to rewrite this file and the option
// tables of docs/.
import type { RefreshOutcome } from '../binding';
import type { FallbackInfo } from './breaker';
";

/// What the typings say beyond the groups: the overrides of `Sentinel.fromEnv`.
const TYPINGS_FOOTER: &str = "
/**
 * The overrides of `Sentinel.fromEnv(env, overrides)`: any part of the options, merged over the
 * environment's key by key (objects merge; any other value replaces the environment's, and
 * `undefined` changes nothing). Code-only options (`logger`, `authority.inspect`) are given here.
 */
export type SentinelOverrides = Overrides<SentinelOptions>;

/** Every member optional, down to the options; functions and lists stay whole. */
type Overrides<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly unknown[]
    ? T
    : T extends object
      ? { [K in keyof T]?: Overrides<T[K]> }
      : T;
";

/// Width of the typings' JSDoc lines.
const WIDTH: usize = 100;

pub fn typescript() -> String {
    let mut out = String::from(TYPINGS_HEADER);
    for group in ALL {
        out.push('\n');
        jsdoc(&mut out, "", group.doc);
        out.push_str(&format!(
            "export interface {}{} {{\n",
            group.interface, group.type_params
        ));
        for opt in group.all() {
            jsdoc(&mut out, "  ", &field_doc(opt));
            let optional = if opt.required() { "" } else { "?" };
            out.push_str(&format!(
                "  {}{optional}: {};\n",
                opt.key,
                ts_type(&opt.kind)
            ));
        }
        out.push_str("}\n");
    }
    out.push_str(TYPINGS_FOOTER);
    out
}

/// The table's lines, header included (what goes between its markers).
pub fn doc_table(table: &DocTable) -> String {
    match table.rows {
        Rows::Options => option_rows(table),
        Rows::Variables => variable_rows(table),
    }
}

/// `Sentinel.fromEnv`'s variables: the option each one sets, how its value is read, and whether
/// it is a secret (never shown; one trailing newline dropped).
fn variable_rows(table: &DocTable) -> String {
    let mut out = String::from("| variable | option | value | secret |\n|---|---|---|---|\n");
    for group in table.groups {
        for variable in env::variables_of(group) {
            let value = match &variable.opt.kind {
                Kind::Number(_) => "a number".to_owned(),
                Kind::Boolean => "`true` or `false`".to_owned(),
                Kind::SwitchOrObject(_) => "`true`".to_owned(),
                Kind::StringList { .. } => "comma-separated".to_owned(),
                Kind::Choice(names) => names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                _ => "text".to_owned(),
            };
            let secret = if variable.opt.secret { "yes" } else { "" };
            out.push_str(&format!(
                "| `{}` | `{}` | {value} | {secret} |\n",
                variable.name, variable.path
            ));
        }
    }
    out
}

fn option_rows(table: &DocTable) -> String {
    let mut out = String::from("| option | what it is | default | rule |\n|---|---|---|---|\n");
    for group in table.groups {
        for opt in group.all() {
            let nested = opt.nested();
            let tabled_here = |g: &&Group| table.groups.iter().any(|t| std::ptr::eq(*t, *g));
            if !nested.is_empty() && nested.iter().all(tabled_here) {
                continue;
            }
            // `authority` is one of two shapes: say which one requires the option.
            let variant = table
                .groups
                .iter()
                .any(|g| g.path == group.path && !std::ptr::eq(*g, *group));
            let default = match (opt.required(), variant) {
                (true, true) => format!("required in `{}`", group.interface),
                _ => default_text(opt).unwrap_or_else(|| "—".into()),
            };
            let cells = [
                format!("`{}`", group.path_of(opt)),
                opt.doc.to_owned(),
                default,
                rule_text(opt, true),
            ];
            let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    out
}

/// The rule: the range or choices the parser checks, the entry's own rule, the values refused,
/// the length limit. With `with_type`, a type the rule does not already imply is named too
/// (the docs' tables have no type column; the typings say it themselves).
fn rule_text(opt: &Opt, with_type: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    match &opt.kind {
        Kind::Number(Some(range)) => parts.push(range.must.to_owned()),
        Kind::Number(None) if with_type && opt.rule.is_empty() => parts.push("a number".into()),
        Kind::Choice(names) => parts.push(format!(
            "one of {}",
            names
                .iter()
                .map(|n| format!("`'{n}'`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Kind::Boolean if with_type => parts.push("a boolean".into()),
        Kind::Function(_) if with_type && opt.rule.is_empty() => parts.push("a function".into()),
        _ => {}
    }
    if !opt.rule.is_empty() {
        parts.push(opt.rule.to_owned());
    }
    if !opt.none_of.is_empty() {
        let names: Vec<String> = opt.none_of.iter().map(|n| format!("`{n}`")).collect();
        parts.push(format!("not {}", names.join(", ")));
    }
    match opt.kind {
        Kind::String { max_bytes } => parts.push(format!("at most {max_bytes} bytes")),
        Kind::StringList {
            max_items,
            item_bytes,
        } => parts.push(format!(
            "at most {max_items} strings of at most {item_bytes} bytes each"
        )),
        _ => {}
    }
    parts.join("; ")
}

/// `None` when there is nothing to say (the option is required, or absent means nothing).
fn default_text(opt: &Opt) -> Option<String> {
    match opt.default {
        Default::Required => Some("required".into()),
        Default::Text("—") => None,
        Default::Text(text) => Some(text.into()),
        Default::Number(n) => Some(JsNumber(n).to_string()),
        Default::Str(text) => Some(format!("`{text}`")),
        Default::Bool(b) => Some(format!("`{b}`")),
    }
}

/// The field's JSDoc: what it is, its rule, its default; Markdown links become plain text.
fn field_doc(opt: &Opt) -> String {
    let mut sentences = vec![opt.doc.to_owned()];
    let rule = rule_text(opt, false);
    if !rule.is_empty() {
        sentences.push(capitalized(&rule));
    }
    if let (false, Some(default)) = (opt.required(), default_text(opt)) {
        sentences.push(format!("Default: {default}"));
    }
    let text: Vec<String> = sentences
        .iter()
        .map(|s| {
            let s = plain_links(s);
            if s.ends_with('.') {
                s
            } else {
                format!("{s}.")
            }
        })
        .collect();
    text.join(" ")
}

fn ts_type(kind: &Kind) -> String {
    match kind {
        Kind::Number(_) => "number".into(),
        Kind::String { .. } => "string".into(),
        Kind::Choice(names) => names
            .iter()
            .map(|n| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(" | "),
        Kind::Boolean => "boolean".into(),
        Kind::Function(signature) => (*signature).into(),
        Kind::StringList { .. } => "Array<string>".into(),
        Kind::Object(group) => group.interface.into(),
        Kind::SwitchOrObject(group) => format!("boolean | {}", group.interface),
        Kind::OneOf(groups) => groups
            .iter()
            .map(|g| g.interface)
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `[text](page.md#anchor)` → `text (docs/page.md)`: an editor's hover follows no links. Link
/// targets are relative to docs/, where the tables are.
fn plain_links(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(close) = rest.find("](") {
        let Some(open) = rest[..close].rfind('[') else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|i| close + i) else {
            break;
        };
        let target = &rest[close + 2..end];
        let page = target.split('#').next().unwrap_or_default();
        if page.is_empty() || page.contains(char::is_whitespace) {
            break;
        }
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        out.push_str(&format!(" (docs/{page})"));
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A JSDoc comment, on one line when it fits, else wrapped at [`WIDTH`].
fn jsdoc(out: &mut String, indent: &str, text: &str) {
    let one_line = format!("{indent}/** {text} */");
    if one_line.chars().count() <= WIDTH {
        out.push_str(&one_line);
        out.push('\n');
        return;
    }
    out.push_str(&format!("{indent}/**\n"));
    let prefix = format!("{indent} * ");
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty()
            && prefix.chars().count() + line.chars().count() + 1 + word.chars().count() > WIDTH
        {
            out.push_str(&format!("{prefix}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&format!("{prefix}{line}\n{indent} */\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_become_plain_text_for_editors() {
        assert_eq!(
            plain_links("see [A fleet that scales](fleet.md) and [x](api.md#y)."),
            "see A fleet that scales (docs/fleet.md) and x (docs/api.md)."
        );
        assert_eq!(plain_links("[not a link] (x)"), "[not a link] (x)");
        assert_eq!(
            plain_links("`[A-Z][a-z]*`; see [x](api.md)"),
            "`[A-Z][a-z]*`; see x (docs/api.md)"
        );
    }

    #[test]
    fn long_jsdoc_wraps_within_the_width() {
        let mut out = String::new();
        jsdoc(&mut out, "  ", &"word ".repeat(60));
        assert!(out.starts_with("  /**\n   * word"), "{out}");
        assert!(out.ends_with("\n   */\n"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        let mut short = String::new();
        jsdoc(&mut short, "", "Short.");
        assert_eq!(short, "/** Short. */\n");
    }

    #[test]
    fn a_pipe_in_a_cell_is_escaped_for_the_table() {
        let inspect = super::super::catalog::DOC_TABLES
            .iter()
            .find(|t| t.name == "sentinel")
            .map(doc_table)
            .unwrap();
        let row = inspect
            .lines()
            .find(|l| l.starts_with("| `authority.inspect`"))
            .unwrap();
        assert!(row.contains(r"'valid' \| 'invalid_credential'"), "{row}");
        assert_eq!(row.matches(" | ").count(), 3, "{row}");
    }
}
