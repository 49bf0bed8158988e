//! The HTML format: one self-contained HTML5 page (styles inline, charts as inline SVG, no
//! script and no external reference) holding the laid-out tables and the charts the layout
//! chose, to open in a browser offline or attach to a report. [`HtmlTable`] writes any grid.

use super::markup::MarkupExporter;
use super::Exporter;
use crate::chart::render_svg;
use crate::error::Error;
use crate::grid::Align;
use crate::laid_out::LaidOut;
use crate::report::Report;

/// A self-contained HTML page.
pub(crate) struct Html;

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
    /// The page: a title naming the runs, the tables, then each chart as a figure.
    fn export(&self, laid: &LaidOut, report: &Report) -> Result<String, Error> {
        let mut labels: Vec<String> = Vec::new();
        for i in report.shown() {
            let name = report.runs[i].name().to_string();
            if !labels.contains(&name) {
                labels.push(name);
            }
        }
        let title = format!("tokenpipe: {}", labels.join(", "));
        let mut body = vec![format!("<h1>{}</h1>", escape(&title))];
        body.extend(laid.grids.iter().map(|g| HtmlTable.grid(g, laid.spread)));
        for &kind in &laid.charts {
            let svg = render_svg(report, kind)?;
            body.push(format!(
                "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
                strip_prolog(&svg),
                escape(kind.caption())
            ));
        }
        Ok(format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n{}\n</body>\n</html>",
            escape(&title),
            body.join("\n")
        ))
    }
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
fn escape(text: &str) -> String {
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

/// A grid as an HTML `<table>`: its caption as `<caption>`, headings as `<th>`, numbers
/// right-aligned (class `num`), its notes as paragraphs after the table; all text escaped.
pub(crate) struct HtmlTable;

impl MarkupExporter for HtmlTable {
    fn escape(&self, text: &str) -> String {
        escape(text)
    }

    /// Inside the table, as `<caption>`.
    fn caption(&self, _: &str) -> Option<String> {
        None
    }

    fn table(
        &self,
        caption: Option<&str>,
        headings: &[String],
        align: &[Align],
        rows: &[Vec<String>],
    ) -> String {
        let class = |i: usize| match align.get(i) {
            Some(Align::Right) => " class=\"num\"",
            _ => "",
        };
        let mut out = vec!["<table>".to_string()];
        if let Some(caption) = caption {
            out.push(format!("<caption>{}</caption>", escape(caption)));
        }
        let heads: String = headings
            .iter()
            .enumerate()
            .map(|(i, h)| format!("<th{}>{h}</th>", class(i)))
            .collect();
        out.push(format!("<thead><tr>{heads}</tr></thead>"));
        out.push("<tbody>".into());
        for row in rows {
            let cells: String = row
                .iter()
                .enumerate()
                .map(|(i, c)| format!("<td{}>{c}</td>", class(i)))
                .collect();
            out.push(format!("<tr>{cells}</tr>"));
        }
        out.push("</tbody>".into());
        out.push("</table>".into());
        out.join("\n")
    }

    fn note(&self, note: &str) -> String {
        format!("<p class=\"note\">{}</p>", escape(note))
    }

    fn preformatted(&self, text: &str) -> String {
        format!("<pre>{}</pre>", escape(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cell, Grid, Num, SpreadMode};

    #[test]
    fn a_grid_is_an_escaped_table_with_numbers_right() {
        let grid = Grid {
            caption: Some("Top <3>".into()),
            headings: vec!["Model".into(), "Rate [tok/s]".into()],
            align: vec![Align::Left, Align::Right],
            rows: vec![vec![Cell::text("a&b"), Cell::Num(Num::value(1.5))]],
            notes: vec!["x < y".into()],
            ..Grid::default()
        };
        assert_eq!(
            HtmlTable.grid(&grid, SpreadMode::Cv),
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
