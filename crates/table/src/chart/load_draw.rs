//! Draws the load chart as small multiples: a panel per metric (output throughput, TTFT, TPOT),
//! each with its own y axis, stacked over one load axis (log₂ for a doubling sweep, see
//! [`super::axis`]). A colour per series, a dash per statistic (p50 solid, p99 dashed), the
//! legend beside the panels. More than [`MAX_SERIES_PER_PANEL`] series are split into groups,
//! each with its own three panels below the last and a caption saying which series they hold;
//! one metric's panels share their y axis across groups, so that they compare.

use super::axis::{LoadAxis, Ticked};
use super::draw::{self, bounds, color, drawing, tick, zero_based, FONT};
use super::legend::{self, Entry, Item};
use super::load::{
    axis_name, chart_param, counts, load_lines, panel_specs, series_groups, series_names, LoadLine,
    PanelSpec, MAX_SERIES_PER_PANEL,
};
use super::ChartError;
use crate::report::Report;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Height of one panel, in SVG pixels.
const PANEL_HEIGHT: u32 = 270;
/// Height of the caption above a group of panels, when the series are split.
const GROUP_CAPTION: u32 = 30;
/// The colour of statistic samples in a legend (the statistic, not a series).
const KEY_GREY: RGBColor = RGBColor(90, 90, 90);

/// Draws the load chart of `report`.
pub fn draw(report: &Report) -> Result<String, ChartError> {
    let param = chart_param(report).ok_or_else(|| {
        ChartError::NoData(
            "--chart load: no run has a load setting (concurrency, rate_per_s or batch) in its \
             headers; pipe arrivals | fire | reduce with their headers, or use --chart ttft-cdf"
                .into(),
        )
    })?;
    let specs = panel_specs();
    let lines: Vec<Vec<LoadLine>> = specs
        .iter()
        .map(|spec| load_lines(report, param, &spec.series))
        .collect();
    // Only the series some panel has a point of: a run without the load setting is a note.
    let series: Vec<String> = series_names(report, param)
        .into_iter()
        .filter(|s| lines.iter().flatten().any(|l| l.label == *s))
        .collect();
    let loads: Vec<f64> = lines
        .iter()
        .flatten()
        .flat_map(|l| l.points.iter().map(|p| p.x))
        .collect();
    let axis = LoadAxis::new(&loads, counts(param));
    let groups = series_groups(series.len());
    let caption = if groups.len() > 1 { GROUP_CAPTION } else { 0 };
    let group_height = caption + PANEL_HEIGHT * specs.len() as u32;
    let legend_items: Vec<Item> = series.iter().map(|s| entry(0, false, s.clone())).collect();
    let legend_width = legend::width(&legend_items, 150, 260);
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (draw::WIDTH, group_height * groups.len() as u32))
                .into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        for (g, area) in root.split_evenly((groups.len(), 1)).iter().enumerate() {
            let range = groups[g].clone();
            let (head, body) = area.split_vertically(caption);
            if caption > 0 {
                let others = match (g, g + 1 == groups.len()) {
                    (0, _) => "below",
                    (_, true) => "above",
                    _ => "above and below",
                };
                let text = format!(
                    "Series {}–{} of {} (at most {MAX_SERIES_PER_PANEL} per panel; the others \
                     in the panels {others})",
                    range.start + 1,
                    range.end,
                    series.len(),
                );
                head.draw(&Text::new(
                    text,
                    (12, GROUP_CAPTION as i32 / 2),
                    TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(drawing)?;
            }
            let shown = &series[range];
            for (p, panel_area) in body.split_evenly((specs.len(), 1)).iter().enumerate() {
                let y_hi = bounds(
                    lines[p]
                        .iter()
                        .flat_map(|l| l.points.iter().map(|pt| pt.y + pt.sd.unwrap_or(0.0))),
                )
                .map_or(1.0, |(_, hi)| hi);
                let mine: Vec<&LoadLine> = lines[p]
                    .iter()
                    .filter(|l| shown.contains(&l.label))
                    .collect();
                let (plot, side) = panel_area.split_horizontally(draw::WIDTH - legend_width);
                let drawn = Panel {
                    spec: &specs[p],
                    axis: &axis,
                    x_name: axis_name(param),
                    y_hi,
                    series: shown,
                }
                .draw(&plot, &mine)?;
                let items = if p == 0 {
                    let mut items = vec![Item::Heading("series".into())];
                    items.extend(
                        shown
                            .iter()
                            .enumerate()
                            .map(|(i, s)| entry(i, false, s.clone())),
                    );
                    items
                } else {
                    stat_key(&specs[p], drawn)
                };
                legend::draw(&side, &items, 36)?;
            }
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// A legend entry in series `i`'s colour, or the key's grey when `i` is `usize::MAX`.
fn entry(i: usize, dashed: bool, text: String) -> Item {
    Item::Entry(Entry {
        color: if i == usize::MAX { KEY_GREY } else { color(i) },
        dashed,
        mark: true,
        text,
    })
}

/// What a latency panel's legend says: how each statistic is drawn, and the error bars when
/// there are any; that there is nothing when no run has the metric.
fn stat_key(spec: &PanelSpec, drawn: Drawn) -> Vec<Item> {
    if !drawn.lines {
        return vec![Item::Heading(format!(
            "no run has {}",
            spec.y_name.trim_end_matches(" (ms)")
        ))];
    }
    let mut items = vec![Item::Heading("statistic".into())];
    items.extend(
        spec.series
            .iter()
            .enumerate()
            .map(|(k, (_, stat))| entry(usize::MAX, k > 0, stat.clone())),
    );
    if drawn.error_bars {
        items.push(Item::Heading("bars: ± sd over runs".into()));
    }
    items
}

/// What a panel drew, for its legend.
#[derive(Debug, Clone, Copy)]
struct Drawn {
    /// Some line.
    lines: bool,
    /// Some error bar.
    error_bars: bool,
}

/// One panel: a metric of some series against the load.
struct Panel<'a> {
    spec: &'a PanelSpec,
    axis: &'a LoadAxis,
    x_name: String,
    y_hi: f64,
    /// The series of this group, in colour order.
    series: &'a [String],
}

impl Panel<'_> {
    /// Draws the axes and `lines` (each a series' statistic) on `area`.
    fn draw(
        &self,
        area: &DrawingArea<SVGBackend, Shift>,
        lines: &[&LoadLine],
    ) -> Result<Drawn, ChartError> {
        let axis = self.axis;
        let x = Ticked::from(axis);
        let mut chart = ChartBuilder::on(area)
            .caption(self.spec.title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(62)
            .build_cartesian_2d(x, zero_based(self.y_hi, 0.08))
            .map_err(drawing)?;
        draw::house_mesh(&mut chart.configure_mesh(), 13)
            .x_desc(self.x_name.as_str())
            .y_desc(self.spec.y_name)
            .x_label_formatter(&|v| axis.label(*v))
            .y_label_formatter(&|v| tick(*v))
            .draw()
            .map_err(drawing)?;
        let mut error_bars = false;
        for line in lines {
            let i = self
                .series
                .iter()
                .position(|s| *s == line.label)
                .unwrap_or(0);
            let k = self
                .spec
                .series
                .iter()
                .position(|(_, stat)| *stat == line.metric)
                .unwrap_or(0);
            let c = color(i);
            let points: Vec<(f64, f64)> = line
                .points
                .iter()
                .map(|p| (axis.to_plot(p.x), p.y))
                .collect();
            draw::labelled_line(&mut chart, points.clone(), c, k > 0, String::new())?;
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(drawing)?;
            chart
                .draw_series(line.points.iter().filter_map(|p| {
                    let x = axis.to_plot(p.x);
                    p.sd.map(|sd| ErrorBar::new_vertical(x, p.y - sd, p.y, p.y + sd, c, 8))
                }))
                .map_err(drawing)?;
            error_bars |= line.points.iter().any(|p| p.sd.is_some());
        }
        Ok(Drawn {
            lines: !lines.is_empty(),
            error_bars,
        })
    }
}
