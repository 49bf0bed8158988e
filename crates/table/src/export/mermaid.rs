//! The Mermaid format (`--format mermaid`): each laid-out plot as an `xychart-beta` chart in a
//! ```` ```mermaid ```` fenced block, which GitHub renders in READMEs, issues and pull requests.
//! Syntax as in <https://mermaid.js.org/syntax/xyChart.html>: `title "…"`, a categorical `x-axis
//! [a, "b c"]`, `y-axis "title" min --> max`, and `bar [..]` / `line [..]` series; the chart has
//! no legend, so several lines are named in a `%%` comment line (and in the title the layout
//! gave). A `"` inside a quoted text is written as the entity `#quot;`
//! (<https://mermaid.js.org/syntax/flowchart.html>, "Entity codes to escape characters").

use super::Exporter;
use crate::error::Error;
use crate::laid_out::{LaidOut, Mark, Plot};
use crate::report::Report;

/// Mermaid charts, one fenced block each, a blank line between them.
pub(crate) struct Mermaid;

impl Exporter for Mermaid {
    fn export(&self, laid: &LaidOut, _: &Report) -> Result<String, Error> {
        Ok(laid
            .plots
            .iter()
            .map(write)
            .collect::<Vec<_>>()
            .join("\n\n"))
    }
}

/// A text in double quotes, `"` as `#quot;` and line breaks as spaces.
pub(crate) fn quote(text: &str) -> String {
    format!(
        "\"{}\"",
        text.replace('"', "#quot;").replace(['\r', '\n'], " ")
    )
}

/// The smallest 1, 2, 2.5 or 5 × 10^k above `max`: the top of the y-axis; `max` itself when
/// none is a finite float.
pub(crate) fn nice_max(max: f64) -> f64 {
    if !max.is_finite() || max <= 0.0 {
        return 1.0;
    }
    let mut exponent = max.log10().floor() as i32;
    loop {
        for step in [1.0, 2.0, 2.5, 5.0] {
            // Rounded to a few significant digits so 2.5 × 0.1 reads 0.25.
            let candidate: f64 = format!("{:.6e}", step * 10f64.powi(exponent))
                .parse()
                .unwrap_or(step * 10f64.powi(exponent));
            if !candidate.is_finite() {
                return max;
            }
            if candidate > max {
                return candidate;
            }
        }
        exponent += 1;
    }
}

/// A number as an axis bound: `200`, `0.25`.
fn bound(v: f64) -> String {
    if v.abs() >= tokenpipe_format::number::FIXED_LIMIT {
        return tokenpipe_format::number::shortest(v);
    }
    let text = format!("{v:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The keyword of a series.
fn keyword(mark: Mark) -> &'static str {
    match mark {
        Mark::Bar => "bar",
        Mark::Line => "line",
    }
}

fn write(chart: &Plot) -> String {
    let max = chart
        .series
        .iter()
        .flat_map(|(_, _, v)| v.iter().copied())
        .fold(0.0, f64::max);
    let min = chart
        .series
        .iter()
        .flat_map(|(_, _, v)| v.iter().copied())
        .fold(0.0, f64::min);
    let low = if min < 0.0 {
        format!("-{}", bound(nice_max(-min)))
    } else {
        "0".into()
    };
    let x: Vec<String> = chart.x.iter().map(|x| quote(x)).collect();
    let mut lines = vec!["```mermaid".to_string(), "xychart-beta".to_string()];
    if chart.series.iter().filter(|s| s.0 == Mark::Line).count() > 1 {
        let names: Vec<String> = chart
            .series
            .iter()
            .enumerate()
            .map(|(i, (_, name, _))| format!("line {} = {name}", i + 1))
            .collect();
        lines.push(format!(
            "  %% {}",
            names.join("; ").replace(['\r', '\n'], " ")
        ));
    }
    lines.push(format!("  title {}", quote(&chart.title)));
    match &chart.x_title {
        Some(t) => lines.push(format!("  x-axis {} [{}]", quote(t), x.join(", "))),
        None => lines.push(format!("  x-axis [{}]", x.join(", "))),
    }
    lines.push(format!(
        "  y-axis {} {low} --> {}",
        quote(&chart.y_title),
        bound(nice_max(max))
    ));
    for (mark, _, values) in &chart.series {
        let values: Vec<String> = values
            .iter()
            .map(|v| tokenpipe_format::number::fixed(*v, 2))
            .collect();
        lines.push(format!("  {} [{}]", keyword(*mark), values.join(", ")));
    }
    lines.push("```".into());
    lines.join("\n")
}
