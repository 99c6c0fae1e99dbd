//! The text expositions of metric families: Prometheus text format 0.0.4, and OpenMetrics 1.0.

use std::fmt::Write;

use super::catalog::Kind;
use super::families::Family;
use crate::closed_list::closed_list;

closed_list! {
    /// An exposition format: `metrics({ format })`.
    pub enum Format {
        /// Prometheus text format 0.0.4 (`text/plain; version=0.0.4; charset=utf-8`).
        Text => "text",
        /// OpenMetrics 1.0 (`application/openmetrics-text; version=1.0.0; charset=utf-8`).
        OpenMetrics => "openmetrics",
    }
}

/// `families` in `format`.
pub fn render_as(families: &[Family], format: Format) -> String {
    match format {
        Format::Text => render(families),
        Format::OpenMetrics => render_openmetrics(families),
    }
}

/// The text exposition format 0.0.4 of `families`.
pub fn render(families: &[Family]) -> String {
    let mut out = String::new();
    for family in families {
        let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
        let _ = writeln!(out, "# TYPE {} {}", family.name, family.kind.text_kind());
        render_samples(&mut out, family);
    }
    out
}

/// OpenMetrics 1.0 text of `families`: TYPE, UNIT (seconds only) and HELP under the family
/// name (a counter's without `_total`), the same samples, and `# EOF`.
fn render_openmetrics(families: &[Family]) -> String {
    let mut out = String::new();
    for family in families {
        let name = openmetrics_name(family);
        let _ = writeln!(out, "# TYPE {name} {}", family.kind.as_str());
        if let Some(unit) = unit(family) {
            let _ = writeln!(out, "# UNIT {name} {unit}");
        }
        let _ = writeln!(out, "# HELP {name} {}", escape_label(family.help));
        render_samples(&mut out, family);
    }
    out.push_str("# EOF\n");
    out
}

fn render_samples(out: &mut String, family: &Family) {
    for s in &family.samples {
        out.push_str(&s.name);
        if !s.labels.is_empty() {
            out.push('{');
            for (i, (key, value)) in s.labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{key}=\"{}\"", escape_label(value));
            }
            out.push('}');
        }
        let _ = writeln!(out, " {}", number(s.value));
    }
}

/// Label values: backslash, double quote and line feed escaped, as the format requires.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        value.to_string()
    }
}

/// The OpenMetrics family name: a counter's without `_total`, an info's without `_info` (its
/// samples keep them).
fn openmetrics_name(family: &Family) -> &'static str {
    let suffix = match family.kind {
        Kind::Counter => "_total",
        Kind::Info => "_info",
        Kind::Gauge | Kind::Histogram => "",
    };
    family.name.strip_suffix(suffix).unwrap_or(family.name)
}

/// The OpenMetrics UNIT: `seconds` for the families named so; the other quantities are billing
/// units or counts, which have no base unit.
fn unit(family: &Family) -> Option<&'static str> {
    openmetrics_name(family)
        .ends_with("_seconds")
        .then_some("seconds")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::families::tests::gauges;
    use crate::metrics::Metrics;
    use crate::rules::{Reason, Status, Verdict};

    #[test]
    fn openmetrics_names_counters_without_total_gives_units_and_ends_with_eof() {
        let m = Metrics::default();
        m.refreshed(Verdict::Valid, Some(Duration::from_millis(30)));
        let families = m.families(&gauges(Status::Ready, Reason::Verified, None));
        let text = render_as(&families, Format::OpenMetrics);
        assert!(text.ends_with("\n# EOF\n"));
        for line in [
            "# TYPE spend_sentinel_refresh counter",
            "spend_sentinel_refresh_total{outcome=\"valid\"} 1",
            "# TYPE spend_sentinel_refresh_duration_seconds histogram",
            "# UNIT spend_sentinel_refresh_duration_seconds seconds",
            "# UNIT spend_sentinel_evidence_age_seconds seconds",
            "# TYPE spend_sentinel_build info",
            "# TYPE spend_sentinel_status gauge",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert!(!text.contains("# TYPE spend_sentinel_refresh_total"));
        assert!(!text.contains("# UNIT spend_sentinel_node_budget_units"));
        assert_eq!(render_as(&families, Format::Text), render(&families));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
