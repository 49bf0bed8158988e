//! The Pareto chart: what one user gets (output tok/s per user, the median request's
//! `user_tps`) against what the server delivers in all (output tok/s), one point per run, a
//! line per series in load order, and the frontier of the points no other point beats on both.
//! Repeats at one load (or a group summary) are one point at their mean. With `reduce --meta
//! gpus=N` on every run, the total is per GPU, as vLLM's `plot_pareto` draws it; a user's
//! speed is not divided.

use super::draw::{self, color, drawing, tick, zero_based, FONT};
use super::legend::{self, Entry, Item};
use super::load::{chart_param, load_value, series_names};
use super::ChartError;
use crate::grid::Kind;
use crate::member::member_num;
use crate::report::{Report, RunReport};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use tokenpipe_format::{stat_key, vocab, StatName};

/// Height of the chart, in SVG pixels.
const HEIGHT: u32 = 560;
/// The frontier's colour, under the series' lines.
const FRONTIER: RGBColor = RGBColor(170, 170, 170);

/// The summary member of the per-user speed: the median request's output tokens/s.
pub fn user_member() -> String {
    stat_key(
        vocab::USER_TPS.name,
        StatName::Percentile(50.0),
        vocab::USER_TPS.unit.suffix(),
    )
}

/// One point: a series' runs at one load.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoPoint {
    /// The series (see [`series_names`]).
    pub series: String,
    /// The load setting's value.
    pub load: f64,
    /// Total output tok/s (per GPU when the chart is), mean over the runs.
    pub x: f64,
    /// The median user's output tok/s, mean over the runs.
    pub y: f64,
}

/// What the Pareto chart plots.
#[derive(Debug, Clone, PartialEq)]
pub struct Pareto {
    /// The load setting the points are labelled with.
    pub param: &'static str,
    /// Whether x is per GPU (every plotted run carries `meta gpus`).
    pub per_gpu: bool,
    /// The series, in order of first appearance.
    pub series: Vec<String>,
    /// The points, by series and then by load.
    pub points: Vec<ParetoPoint>,
}

/// Why a shown run has no point: `None` when it has one.
pub fn missing(run: &RunReport, param: &str) -> Option<String> {
    if load_value(run, param).is_none() {
        Some(format!("has no {param}"))
    } else if member_num(run, vocab::OUTPUT_TPS.member, Kind::Value).is_none() {
        Some("has no output throughput".into())
    } else if member_num(run, &user_member(), Kind::Value).is_none() {
        Some("has no user_tps p50 (per-user speed)".into())
    } else {
        None
    }
}

/// The GPU count of run `i` from `meta gpus`: `None` without it, an error naming the value when
/// it is not a positive number. reduce writes no `meta` on a group summary, so a group takes
/// the count its pooled runs (in the report, hidden) agree on.
pub fn gpus(report: &Report, i: usize) -> Option<Result<f64, String>> {
    let run = &report.runs[i];
    let Some(text) = run.summary.meta.get(vocab::GPUS) else {
        if !run.is_group() {
            return None;
        }
        let mut pooled = report
            .runs
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_group() && run.summary.runs.contains(&r.summary.run_id))
            .map(|(j, _)| gpus(report, j));
        let first = pooled.next()??;
        return pooled.all(|g| g.as_ref() == Some(&first)).then_some(first);
    };
    Some(match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(n),
        _ => Err(format!(
            "meta {}={text:?} is not a positive number",
            vocab::GPUS
        )),
    })
}

/// The points of the shown runs: per GPU when every plotted run has a valid `meta gpus`.
pub fn pareto(report: &Report) -> Result<Pareto, ChartError> {
    let param = chart_param(report).ok_or_else(|| {
        ChartError::NoData(
            "--chart pareto: no run has a load setting (concurrency, rate_per_s or batch) in \
             its headers; pipe arrivals | fire | reduce with their headers"
                .into(),
        )
    })?;
    let names = crate::labels::series_labels(report, param);
    let plotted: Vec<usize> = report
        .shown()
        .into_iter()
        .filter(|&i| missing(&report.runs[i], param).is_none())
        .collect();
    let per_gpu = !plotted.is_empty()
        && plotted
            .iter()
            .all(|&i| matches!(gpus(report, i), Some(Ok(_))));
    let mut points = Vec::new();
    for series in series_names(report, param) {
        // (load, sum x, sum y, runs)
        let mut at: Vec<(f64, f64, f64, f64)> = Vec::new();
        for &i in plotted.iter().filter(|&&i| names[i] == series) {
            let run = &report.runs[i];
            let (Some(load), Some(x), Some(y)) = (
                load_value(run, param),
                member_num(run, vocab::OUTPUT_TPS.member, Kind::Value),
                member_num(run, &user_member(), Kind::Value),
            ) else {
                continue;
            };
            let per = match gpus(report, i) {
                Some(Ok(n)) if per_gpu => n,
                _ => 1.0,
            };
            match at.iter_mut().find(|(l, ..)| *l == load) {
                Some(p) => {
                    p.1 += x.value / per;
                    p.2 += y.value;
                    p.3 += 1.0;
                }
                None => at.push((load, x.value / per, y.value, 1.0)),
            }
        }
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        points.extend(at.into_iter().map(|(load, x, y, n)| ParetoPoint {
            series: series.clone(),
            load,
            x: x / n,
            y: y / n,
        }));
    }
    if points.is_empty() {
        return Err(ChartError::NoData(format!(
            "--chart pareto: no run has both output throughput and {} (user_tps p50); reduce \
             computes it from fire's records",
            user_member()
        )));
    }
    let mut series: Vec<String> = Vec::new();
    for p in &points {
        if !series.contains(&p.series) {
            series.push(p.series.clone());
        }
    }
    Ok(Pareto {
        param,
        per_gpu,
        series,
        points,
    })
}

/// The indices of the points no other point beats on both axes (at least as high on both and
/// higher on one), by increasing x: the best per-user speed each total throughput allows.
pub fn frontier(points: &[(f64, f64)]) -> Vec<usize> {
    let beaten = |&(x, y): &(f64, f64)| {
        points
            .iter()
            .any(|&(qx, qy)| qx >= x && qy >= y && (qx > x || qy > y))
    };
    let mut front: Vec<usize> = (0..points.len()).filter(|&i| !beaten(&points[i])).collect();
    front.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[b].1.total_cmp(&points[a].1))
    });
    front.dedup_by(|a, b| points[*a] == points[*b]);
    front
}

/// A point's label: its load as people write it (`c16`, `4/s`, `b8`).
pub fn load_text(param: &str, load: f64) -> String {
    let v = tick(load);
    match param {
        "concurrency" => format!("c{v}"),
        "rate_per_s" => format!("{v}/s"),
        "batch" => format!("b{v}"),
        other => format!("{other}={v}"),
    }
}

/// The notes for stderr that the chart's figures need: runs whose `meta gpus` is bad, and,
/// when only some runs carry it, that the total is not per GPU.
pub fn gpu_notes(report: &Report) -> Vec<String> {
    let Ok(chart) = pareto(report) else {
        return Vec::new();
    };
    let labels = crate::labels::column_labels(report);
    let mut notes = Vec::new();
    let mut without = Vec::new();
    let mut some = false;
    for i in report.shown() {
        let run = &report.runs[i];
        if missing(run, chart.param).is_some() {
            continue;
        }
        let g = gpus(report, i);
        some |= g.is_some();
        match g {
            Some(Err(e)) => notes.push(format!("table: chart pareto: run {}: {e}", labels[i])),
            None => without.push(labels[i].clone()),
            Some(Ok(_)) => {}
        }
    }
    if some && !chart.per_gpu {
        let none_on = if without.is_empty() {
            String::new()
        } else {
            format!(" (none on {})", without.join(", "))
        };
        notes.push(format!(
            "table: chart pareto: total throughput is not per GPU, since not every run carries \
             a valid --meta {}=N{none_on}",
            vocab::GPUS
        ));
    }
    notes
}

/// Draws the Pareto chart of `report`.
pub fn draw(report: &Report) -> Result<String, ChartError> {
    let chart = pareto(report)?;
    let xy: Vec<(f64, f64)> = chart.points.iter().map(|p| (p.x, p.y)).collect();
    let front = frontier(&xy);
    let mut items = vec![Item::Heading("series".into())];
    items.extend(chart.series.iter().enumerate().map(|(i, s)| {
        Item::Entry(Entry {
            color: color(i),
            dashed: draw::dashed(i),
            mark: true,
            text: s.clone(),
        })
    }));
    items.push(Item::Entry(Entry {
        color: FRONTIER,
        dashed: false,
        mark: false,
        text: "Pareto frontier (ringed)".into(),
    }));
    let legend_width = legend::width(&items, 150, 260);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (draw::WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let (plot, side) = root.split_horizontally(draw::WIDTH - legend_width);
        plot_points(&plot, &chart, &front)?;
        legend::draw(&side, &items, 40)?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// The axes, the frontier, each series' line and points, and each point's load.
fn plot_points(
    area: &DrawingArea<SVGBackend, Shift>,
    chart: &Pareto,
    front: &[usize],
) -> Result<(), ChartError> {
    let x_hi = chart.points.iter().map(|p| p.x).fold(0.0, f64::max);
    let y_hi = chart.points.iter().map(|p| p.y).fold(0.0, f64::max);
    let x_name = if chart.per_gpu {
        "total output throughput per GPU (tok/s/GPU)"
    } else {
        "total output throughput (tok/s)"
    };
    let mut ctx = ChartBuilder::on(area)
        .caption("Per-user speed against total throughput", (FONT, 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(zero_based(x_hi, 0.1), zero_based(y_hi, 0.1))
        .map_err(drawing)?;
    draw::house_mesh(&mut ctx.configure_mesh(), 14)
        .x_desc(x_name)
        .y_desc("per-user output speed, user_tps p50 (tok/s)")
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(drawing)?;
    let at = |i: usize| (chart.points[i].x, chart.points[i].y);
    ctx.draw_series(LineSeries::new(
        front.iter().map(|&i| at(i)),
        FRONTIER.stroke_width(6),
    ))
    .map_err(drawing)?;
    for (s, name) in chart.series.iter().enumerate() {
        let c = color(s);
        let mine: Vec<(f64, f64)> = chart
            .points
            .iter()
            .filter(|p| p.series == *name)
            .map(|p| (p.x, p.y))
            .collect();
        draw::labelled_line(&mut ctx, mine.clone(), c, draw::dashed(s), name.clone())?;
        ctx.draw_series(mine.iter().map(|&p| Circle::new(p, 4, c.filled())))
            .map_err(drawing)?;
    }
    ctx.draw_series(
        front
            .iter()
            .map(|&i| Circle::new(at(i), 7, BLACK.stroke_width(1))),
    )
    .map_err(drawing)?;
    let label_style =
        TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Left, VPos::Bottom));
    ctx.draw_series(chart.points.iter().map(|p| {
        EmptyElement::at((p.x, p.y))
            + Text::new(load_text(chart.param, p.load), (5, -4), label_style.clone())
    }))
    .map_err(drawing)?;
    Ok(())
}
