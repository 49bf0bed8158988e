//! The capacity chart of a `sweep`: each SLO bound's member against the load the sweep varied,
//! one panel per bound, so that a reader sees where the line crosses the bound and how sure
//! each point is. Points carry their 95 % bootstrap interval as whiskers and show what the sweep
//! judged (met, missed, not sure, not comparable); the bound is a dashed line and the capacity
//! found a dotted vertical line with its value. Several sweeps (one per serving shape) share the
//! panels, a colour each. The numbers come from the `sweep` records alone (extracted and tested
//! without drawing); the points' labels come from the runs they name.

use super::axis::{LoadAxis, Ticked};
use super::draw::{self, color, drawing, tick, FONT};
use super::legend::{self, Entry, Item};
use super::ChartError;
use crate::report::Report;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use tokenpipe_format::{parse_stat_key, vocab, OrOther, PointStatus, StatName};

/// Height of one panel, in SVG pixels.
const PANEL_HEIGHT: u32 = 360;
/// The colour of the bound line.
const BOUND: RGBColor = RGBColor(178, 34, 34);
/// The colour of points no comparable run stands for.
const UNUSABLE: RGBColor = RGBColor(160, 160, 160);

/// What the sweep judged a point, as drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// The bound held with 95 % confidence: a filled mark.
    Met,
    /// The bound was missed with 95 % confidence: a cross.
    Missed,
    /// The interval straddled the bound after every repeat: a hollow mark.
    NotSure,
    /// No comparable run: a grey hollow mark, and no value.
    Unusable,
}

/// One point of a sweep's line in one panel.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityPoint {
    /// The load.
    pub x: f64,
    /// The member's value there (pooled over the point's comparable runs).
    pub y: f64,
    /// Its 95 % bootstrap interval.
    pub ci: Option<[f64; 2]>,
    /// What the sweep judged of this bound at this point.
    pub judged: Judged,
}

/// One sweep's points in one panel.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacitySeries {
    /// The runs' label (model, shape…), or `sweep N` when no run of it is in the input.
    pub label: String,
    /// Points by load; unusable points lie on the x axis.
    pub points: Vec<CapacityPoint>,
    /// The capacity the sweep found, if any.
    pub capacity: Option<f64>,
    /// The bound this sweep held the member to.
    pub bound: f64,
}

/// One bound's panel, for one load variable.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityPanel {
    /// The load variable of its sweeps, `concurrency` or `rate`.
    pub variable: String,
    /// The summary member, `ttft_p99_ms`.
    pub key: String,
    /// How the member reads, `TTFT p99 (ms)`.
    pub title: String,
    /// The bound (the largest value that meets it); sweeps that bound the member differently
    /// draw their own lines.
    pub bounds: Vec<f64>,
    /// A series per sweep that bounds this member.
    pub series: Vec<CapacitySeries>,
}

/// The panels of the report's sweeps: one per load variable and bounded member, in the order
/// the sweeps and their SLOs name them (a closed-loop and an open-loop search do not share an
/// axis).
pub fn capacity_panels(report: &Report) -> Vec<CapacityPanel> {
    let labels = sweep_labels(report);
    let mut panels: Vec<CapacityPanel> = Vec::new();
    for (sweep, label) in report.sweeps.iter().zip(labels) {
        for term in &sweep.slo {
            let at = panels
                .iter()
                .position(|p| p.key == term.key && p.variable == sweep.variable);
            let panel = match at {
                Some(i) => &mut panels[i],
                None => {
                    panels.push(CapacityPanel {
                        variable: sweep.variable.clone(),
                        key: term.key.clone(),
                        title: title(&term.key),
                        bounds: Vec::new(),
                        series: Vec::new(),
                    });
                    panels.last_mut().expect("just pushed")
                }
            };
            if !panel.bounds.contains(&term.bound) {
                panel.bounds.push(term.bound);
            }
            let mut points: Vec<CapacityPoint> = sweep
                .points
                .iter()
                .filter_map(|p| point(p, &term.key))
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            panel.series.push(CapacitySeries {
                label: label.clone(),
                points,
                capacity: sweep.capacity,
                bound: term.bound,
            });
        }
    }
    panels
}

/// A sweep point as drawn in the panel of `key`; `None` when it was measured without that bound.
/// A point no comparable run stands for (or without a value) lies on the x axis.
fn point(p: &tokenpipe_format::SweepPoint, key: &str) -> Option<CapacityPoint> {
    let unusable = CapacityPoint {
        x: p.value,
        y: 0.0,
        ci: None,
        judged: Judged::Unusable,
    };
    if p.status == OrOther::Known(PointStatus::Unusable) {
        return Some(unusable);
    }
    let v = p.slo.iter().find(|v| v.key == key)?;
    let judged = match v.met {
        Some(true) => Judged::Met,
        Some(false) => Judged::Missed,
        None => Judged::NotSure,
    };
    Some(v.value.map_or(unusable, |y| CapacityPoint {
        x: p.value,
        y,
        ci: v.ci95,
        judged,
    }))
}

/// `TTFT p99 (ms)` for `ttft_p99_ms`; the key itself when it is not a statistic's member.
fn title(key: &str) -> String {
    let Some((metric, stat, unit)) = parse_stat_key(key) else {
        return key.to_string();
    };
    let heading = vocab::metric_named(metric).map_or(metric, |m| m.heading);
    let stat = match stat {
        StatName::Percentile(_) => stat.key_part().to_string(),
        StatName::Mean => "mean".into(),
        other => other.key_part().to_string(),
    };
    format!("{heading} {stat} ({unit})")
}

/// Each sweep's label: the label of the first of its runs in the report (`sweep --label`, else
/// the model), else `sweep N`; a label an earlier sweep of the same variable has gets ` (2)`.
fn sweep_labels(report: &Report) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for (n, sweep) in report.sweeps.iter().enumerate() {
        let ids = || sweep.points.iter().flat_map(|p| p.run_ids.iter());
        let found = report
            .runs
            .iter()
            .find(|r| ids().any(|id| *id == r.summary.run_id))
            .map(|r| r.summary.label.clone())
            .filter(|l| !l.is_empty());
        let base = found.unwrap_or_else(|| format!("sweep {}", n + 1));
        let twins = labels
            .iter()
            .zip(&report.sweeps)
            .filter(|(l, s)| {
                s.variable == sweep.variable && (**l == base || l.starts_with(&format!("{base} (")))
            })
            .count();
        labels.push(if twins == 0 {
            base
        } else {
            format!("{base} ({})", twins + 1)
        });
    }
    labels
}

/// The x axis description of a sweep's variable: the setting's own when the name is one of a
/// setting's names (`concurrency`, `rate`), else the name.
fn axis_name(variable: &str) -> String {
    vocab::setting(variable)
        .or_else(|| vocab::setting_named(variable))
        .and_then(|s| s.axis)
        .unwrap_or(variable)
        .to_string()
}

/// Draws the capacity chart: one panel per bounded member.
pub fn draw(report: &Report) -> Result<String, ChartError> {
    let panels = capacity_panels(report);
    if panels.is_empty() {
        return Err(ChartError::NoData(
            "--chart capacity: no sweep record with an SLO in the input; run `sweep --find \
             NAME=A..B --slo SPEC -- CMD` (or `--scan` with `--slo`) and give its output to table"
                .into(),
        ));
    }
    let height = PANEL_HEIGHT * panels.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (draw::WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let rows = root.split_evenly((panels.len(), 1));
        for (area, panel) in rows.iter().zip(&panels) {
            let loads: Vec<f64> = report
                .sweeps
                .iter()
                .filter(|s| s.variable == panel.variable)
                .flat_map(|s| s.points.iter().map(|p| p.value))
                .collect();
            let whole = report
                .sweeps
                .iter()
                .filter(|s| s.variable == panel.variable)
                .all(|s| s.points.iter().all(|p| p.value.fract() == 0.0))
                && !panel.variable.starts_with("rate");
            let axis = LoadAxis::new(&loads, whole);
            draw_panel(area, panel, &axis, &axis_name(&panel.variable))?;
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// The legend of a panel: the sweeps with their capacity, the bound, and what the marks mean.
fn legend_items(panel: &CapacityPanel) -> Vec<Item> {
    let mut items = vec![Item::Heading("sweep: capacity".into())];
    for (i, s) in panel.series.iter().enumerate() {
        let found = s.capacity.map_or_else(|| "none meets".to_string(), tick);
        items.push(Item::Entry(Entry {
            color: color(i),
            dashed: false,
            mark: true,
            text: format!("{}: {found}", s.label),
        }));
    }
    for b in &panel.bounds {
        // Sweeps held to different bounds: each bound says whose it is.
        let whose: Vec<&str> = panel
            .series
            .iter()
            .filter(|s| s.bound == *b)
            .map(|s| s.label.as_str())
            .collect();
        let text = if panel.bounds.len() > 1 {
            format!("bound ≤ {} ({})", tick(*b), whose.join(", "))
        } else {
            format!("bound ≤ {}", tick(*b))
        };
        items.push(Item::Entry(Entry {
            color: BOUND,
            dashed: true,
            mark: false,
            text,
        }));
    }
    items.push(Item::Heading(String::new()));
    for key in [
        "● meets the bound",
        "× misses it",
        "○ not sure (straddles it)",
        "grey ○: no comparable run",
        "whiskers: 95 % interval",
    ] {
        items.push(Item::Heading(key.into()));
    }
    items
}

/// One panel: the plot on the left, its legend on the right.
fn draw_panel(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    panel: &CapacityPanel,
    axis: &LoadAxis,
    x_name: &str,
) -> Result<(), ChartError> {
    let items = legend_items(panel);
    let legend_width = legend::width(&items, 150, 260);
    let (plot_area, legend_area) = area.split_horizontally(draw::WIDTH - legend_width);
    let y_hi = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.ci.map_or(p.y, |c| c[1].max(p.y)))
        .chain(panel.bounds.iter().copied())
        .fold(0.0_f64, |a, v| if v.is_finite() { a.max(v) } else { a });
    let y_range = draw::zero_based(y_hi, 0.12);
    let top = y_range.end;
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(&panel.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(Ticked::from(axis), y_range)
        .map_err(drawing)?;
    draw::house_mesh(&mut chart.configure_mesh(), 14)
        .x_desc(x_name)
        .y_desc(&panel.title)
        .x_label_formatter(&|v| axis.label(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(drawing)?;
    let (x_lo, x_hi) = (axis.range.start, axis.range.end);
    for b in &panel.bounds {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x_lo, *b), (x_hi, *b)],
                draw::DASH.0,
                draw::DASH.1,
                BOUND.stroke_width(2),
            ))
            .map_err(drawing)?;
    }
    for (i, s) in panel.series.iter().enumerate() {
        let c = color(i);
        let usable: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| p.judged != Judged::Unusable)
            .map(|p| (axis.to_plot(p.x), p.y))
            .collect();
        chart
            .draw_series(LineSeries::new(usable, c.stroke_width(2)))
            .map_err(drawing)?;
        chart
            .draw_series(s.points.iter().filter_map(|p| {
                let [lo, hi] = p.ci?;
                let x = axis.to_plot(p.x);
                Some(ErrorBar::new_vertical(x, lo, p.y, hi, c.stroke_width(1), 8))
            }))
            .map_err(drawing)?;
        for p in &s.points {
            let at = (axis.to_plot(p.x), p.y);
            match p.judged {
                Judged::Met => chart.draw_series([Circle::new(at, 5, c.filled())]),
                Judged::Missed => chart.draw_series([Cross::new(at, 6, c.stroke_width(2))]),
                Judged::NotSure => chart.draw_series([Circle::new(at, 5, c.stroke_width(2))]),
                Judged::Unusable => {
                    chart.draw_series([Circle::new(at, 5, UNUSABLE.stroke_width(2))])
                }
            }
            .map_err(drawing)?;
        }
        if let Some(cap) = s.capacity {
            let x = axis.to_plot(cap);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, 0.0), (x, top)],
                    2,
                    4,
                    c.stroke_width(2),
                ))
                .map_err(drawing)?;
            // Each sweep's label a line lower, so that equal capacities stay readable; right of
            // the line in the axis' left half, left of it in the right half.
            let y = top * (1.0 - 0.06 * i as f64);
            let right_half = x > (x_lo + x_hi) / 2.0;
            let (text, h) = if right_half {
                (
                    format!("{}: capacity {} ", legend::cut(&s.label), tick(cap)),
                    HPos::Right,
                )
            } else {
                (
                    format!(" {}: capacity {}", legend::cut(&s.label), tick(cap)),
                    HPos::Left,
                )
            };
            let style = (FONT, 12).into_font().color(&c).pos(Pos::new(h, VPos::Top));
            chart
                .draw_series([Text::new(text, (x, y), style)])
                .map_err(drawing)?;
        }
    }
    legend::draw(&legend_area, &items, 40)
}

#[cfg(test)]
mod tests;
