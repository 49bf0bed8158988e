//! The HTML format: one self-contained HTML5 page (styles inline, charts as inline SVG, no
//! script and no external reference) holding the tables and every chart the report has data
//! for, to open in a browser offline or attach to a report. [`grid_html`] writes any [`Grid`].

use super::Exporter;
use crate::chart::{render_svg, ChartError, ChartKind};
use crate::grid::{Align, Grid, SpreadMode};
use crate::report::Report;

/// A self-contained HTML page.
pub struct Html;

const STYLE: &str = "\
body { font-family: sans-serif; margin: 2em auto; max-width: 1000px; color: #222; padding: 0 1em; }
h1 { font-size: 1.4em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f3f3f3; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
p.note { font-size: 0.85em; color: #555; }
figure { margin: 1.5em 0; }
figcaption { font-size: 0.9em; color: #444; }
svg { max-width: 100%; height: auto; }";

impl Exporter for Html {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        // The page the command line writes: the default layout and every chart.
        let opts = crate::options::Options::default();
        Ok(crate::layout::render(report, super::Format::Html, &opts)?.text)
    }
}

/// The page: a title naming the runs, `grid` (the layout the flags chose), then every chart
/// the report has data for.
/// Runs a chart leaves out are added to `notes`.
pub fn page(
    report: &Report,
    grid: &Grid,
    mode: SpreadMode,
    notes: &mut Vec<String>,
) -> anyhow::Result<String> {
    let mut labels: Vec<String> = Vec::new();
    for i in report.shown() {
        let name = report.runs[i].name().to_string();
        if !labels.contains(&name) {
            labels.push(name);
        }
    }
    let title = format!("tokenpipe: {}", labels.join(", "));
    let mut body = vec![format!("<h1>{}</h1>", escape(&title))];
    body.push(grid_html(grid, mode));
    for kind in ChartKind::ALL {
        if kind == ChartKind::Load && crate::chart::load::load_param(report).is_none() {
            continue;
        }
        match render_svg(report, kind) {
            Ok(svg) => {
                notes.extend(crate::chart::left_out(report, kind));
                body.push(format!(
                    "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
                    strip_prolog(&svg),
                    escape(kind.caption())
                ));
            }
            Err(ChartError::NoData(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n{}\n</body>\n</html>",
        escape(&title),
        body.join("\n")
    ))
}

/// An SVG document without an XML declaration, to sit inline in HTML.
fn strip_prolog(svg: &str) -> &str {
    let svg = svg.trim();
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(svg, |(_, r)| r.trim_start()),
        None => svg,
    }
}

/// Text made safe inside HTML elements and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A [`Grid`] as an HTML `<table>`: its caption as `<caption>`, headings as `<th>`, numbers
/// right-aligned (class `num`), its notes as paragraphs after the table; all text escaped.
pub fn grid_html(grid: &Grid, mode: SpreadMode) -> String {
    let class = |i: usize| match grid.align_of(i) {
        Align::Right => " class=\"num\"",
        Align::Left => "",
    };
    let mut out = vec!["<table>".to_string()];
    if let Some(caption) = &grid.caption {
        out.push(format!("<caption>{}</caption>", escape(caption)));
    }
    let heads: String = grid
        .headings
        .iter()
        .enumerate()
        .map(|(i, h)| format!("<th{}>{}</th>", class(i), escape(h)))
        .collect();
    out.push(format!("<thead><tr>{heads}</tr></thead>"));
    out.push("<tbody>".into());
    for row in grid.text_rows(mode) {
        let cells: String = row
            .iter()
            .enumerate()
            .map(|(i, c)| format!("<td{}>{}</td>", class(i), escape(c)))
            .collect();
        out.push(format!("<tr>{cells}</tr>"));
    }
    out.push("</tbody>".into());
    out.push("</table>".into());
    for note in &grid.notes {
        out.push(format!("<p class=\"note\">{}</p>", escape(note)));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cell, Num};

    #[test]
    fn a_grid_is_an_escaped_table_with_numbers_right() {
        let grid = Grid {
            caption: Some("Top <3>".into()),
            headings: vec!["Model".into(), "Rate [tok/s]".into()],
            align: vec![Align::Left, Align::Right],
            rows: vec![vec![Cell::text("a&b"), Cell::Num(Num::value(1.5))]],
            notes: vec!["x < y".into()],
        };
        assert_eq!(
            grid_html(&grid, SpreadMode::Cv),
            "<table>\n<caption>Top &lt;3&gt;</caption>\n\
             <thead><tr><th>Model</th><th class=\"num\">Rate [tok/s]</th></tr></thead>\n\
             <tbody>\n<tr><td>a&amp;b</td><td class=\"num\">1.50</td></tr>\n</tbody>\n</table>\n\
             <p class=\"note\">x &lt; y</p>"
        );
    }

    #[test]
    fn an_xml_prolog_is_dropped_for_inline_svg() {
        assert_eq!(strip_prolog("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(strip_prolog("<svg/>\n"), "<svg/>");
    }
}
