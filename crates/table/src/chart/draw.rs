//! What every chart shares: its size, its palette, how tick labels read, and turning plotters'
//! errors into [`ChartError`]. plotters is built without a font backend, so text is measured by
//! its length alone and the SVG does not depend on the fonts of the machine that drew it.

use super::ChartError;
use plotters::style::RGBColor;

/// Width of every chart, in SVG pixels.
pub const WIDTH: u32 = 800;
/// Height of a one-panel chart.
pub const HEIGHT: u32 = 480;
/// Height of the two-panel timeline.
pub const HEIGHT_TWO_PANELS: u32 = 800;

/// Series colours in order (Tableau 10): distinct in print and for the common colour-vision
/// deficiencies, and fixed so that a chart is the same bytes every time.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Whether series `i` is drawn dashed: once the palette's colours are used up, so that a chart
/// of many runs (21 in a sweep) still tells each line from the one of its colour.
pub fn dashed(i: usize) -> bool {
    (i / PALETTE.len()) % 2 == 1
}

/// Dash length and gap of dashed lines, in pixels.
pub const DASH: (u32, u32) = (7, 4);

/// Font of captions, axis descriptions and legends.
pub const FONT: &str = "sans-serif";

/// A tick label: at most three significant decimals, no trailing zeros (`2`, `0.25`, `1500`).
pub fn tick(v: f64) -> String {
    let a = v.abs();
    let s = if a >= tokenpipe_format::number::FIXED_LIMIT {
        return tokenpipe_format::number::fixed(v, 2);
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// The mesh every chart draws: grid lines at the labelled ticks only, in light grey, with
/// the house fonts (axis descriptions at `desc_size` pixels, tick labels at 12), so that the
/// charts of one page look alike.
pub fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
    desc_size: u32,
) -> &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
    DB: plotters::prelude::DrawingBackend,
{
    mesh.axis_desc_style((FONT, desc_size))
        .label_style((FONT, 12))
        .max_light_lines(0)
        .bold_line_style(RGBColor(225, 225, 225))
}

/// Turns plotters' drawing error into a [`ChartError`].
pub fn drawing<E: std::fmt::Debug>(e: E) -> ChartError {
    ChartError::Draw(format!("{e:?}"))
}

/// A value axis from 0 to `hi` plus `headroom` (a fraction of `hi`, room for the legend); 0 to
/// 1 when `hi` is not a positive number.
pub fn zero_based(hi: f64, headroom: f64) -> std::ops::Range<f64> {
    let hi = if hi.is_finite() && hi > 0.0 { hi } else { 1.0 };
    0.0..hi * (1.0 + headroom)
}

/// A padded range around the data, for an x axis: 5 % on each side, one unit when all values
/// are equal.
pub fn padded(lo: f64, hi: f64) -> std::ops::Range<f64> {
    if !(lo.is_finite() && hi.is_finite()) {
        return 0.0..1.0;
    }
    if hi <= lo {
        return lo - 1.0..hi + 1.0;
    }
    let pad = (hi - lo) * 0.05;
    lo - pad..hi + pad
}

/// The smallest and largest of `values`, `None` when there are none.
pub fn bounds(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Draws `points` as one labelled series of `color`, solid or dashed, with a legend mark that
/// looks like the line.
pub fn labelled_line<'a, DB, CT>(
    chart: &mut plotters::chart::ChartContext<'a, DB, CT>,
    points: Vec<CT::From>,
    color: RGBColor,
    dashed: bool,
    label: String,
) -> Result<(), ChartError>
where
    DB: plotters::prelude::DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
    CT::From: Clone + 'static,
{
    use plotters::element::{DashedPathElement, PathElement};
    use plotters::series::{DashedLineSeries, LineSeries};
    use plotters::style::Color;
    let style = color.stroke_width(2);
    let (dash, gap) = DASH;
    let drawn = if dashed {
        chart.draw_series(DashedLineSeries::new(points, dash, gap, style))
    } else {
        chart.draw_series(LineSeries::new(points, style))
    };
    let anno = drawn.map_err(drawing)?.label(label);
    if dashed {
        anno.legend(move |(x, y)| {
            DashedPathElement::new(vec![(x, y), (x + 20, y)], dash, gap, style)
        });
    } else {
        anno.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    Ok(())
}

/// Draws the legend box of `chart` at `position`, the same in every chart.
pub fn legend<'a, DB, CT>(
    chart: &mut plotters::chart::ChartContext<'a, DB, CT>,
    position: plotters::chart::SeriesLabelPosition,
) -> Result<(), ChartError>
where
    DB: plotters::prelude::DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    use plotters::style::{Color, WHITE};
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, 12))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(drawing)
}
