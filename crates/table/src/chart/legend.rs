//! A legend drawn beside a plot rather than inside it, so that it never hides a line: a column
//! of entries, each a line sample (solid or dashed, with the point mark when the lines have
//! them) and its text. Text is measured by its length alone (plotters has no font backend
//! here), so long names are cut with `…` at a fixed number of characters.

use super::draw::{drawing, DASH, FONT};
use super::ChartError;
use plotters::coord::Shift;
use plotters::element::{Circle, DashedPathElement, PathElement, Text};
use plotters::prelude::{DrawingArea, SVGBackend};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, IntoFont, RGBColor, TextStyle};

/// The most characters of an entry's text before it is cut.
pub const MAX_CHARS: usize = 30;

/// Pixels per line of the legend.
const LINE: i32 = 18;

/// One entry: a line sample and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The sample's colour.
    pub color: RGBColor,
    /// Whether the sample is dashed.
    pub dashed: bool,
    /// Whether the sample carries a point mark.
    pub mark: bool,
    /// The text after the sample.
    pub text: String,
}

/// One line of a legend: a heading (grey text, no sample) or an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// Text that introduces the entries below it (`series`, `statistic`).
    Heading(String),
    /// A sample and its text.
    Entry(Entry),
}

/// The width a legend of `items` needs, in pixels, within `min..=max`.
pub fn width(items: &[Item], min: u32, max: u32) -> u32 {
    let chars = items
        .iter()
        .map(|i| match i {
            Item::Heading(t) => t.chars().count(),
            Item::Entry(e) => e.text.chars().count().min(MAX_CHARS) + 5,
        })
        .max()
        .unwrap_or(0);
    (chars as u32 * 7 + 24).clamp(min, max)
}

/// `text` cut to [`MAX_CHARS`] characters, the last one `…` when cut.
pub fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_CHARS {
        return text.to_string();
    }
    let mut s: String = text.chars().take(MAX_CHARS - 1).collect();
    s.push('…');
    s
}

/// Draws `items` from the top left of `area`, one per line, starting `top` pixels down.
pub fn draw(
    area: &DrawingArea<SVGBackend, Shift>,
    items: &[Item],
    top: i32,
) -> Result<(), ChartError> {
    let left = 8;
    let text_style = |color: RGBColor| TextStyle {
        color: color.to_backend_color(),
        ..TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center))
    };
    for (n, item) in items.iter().enumerate() {
        let y = top + LINE * n as i32 + LINE / 2;
        match item {
            Item::Heading(t) => {
                area.draw(&Text::new(
                    cut(t),
                    (left, y),
                    text_style(RGBColor(90, 90, 90)),
                ))
                .map_err(drawing)?;
            }
            Item::Entry(e) => {
                let style = e.color.stroke_width(2);
                let sample = vec![(left, y), (left + 24, y)];
                if e.dashed {
                    area.draw(&DashedPathElement::new(sample, DASH.0, DASH.1, style))
                        .map_err(drawing)?;
                } else {
                    area.draw(&PathElement::new(sample, style))
                        .map_err(drawing)?;
                }
                if e.mark {
                    area.draw(&Circle::new((left + 12, y), 3, e.color.filled()))
                        .map_err(drawing)?;
                }
                area.draw(&Text::new(
                    cut(&e.text),
                    (left + 32, y),
                    text_style(RGBColor(34, 34, 34)),
                ))
                .map_err(drawing)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_and_the_width_follows_the_longest() {
        assert_eq!(cut("short"), "short");
        let long = "a".repeat(40);
        let c = cut(&long);
        assert_eq!(c.chars().count(), MAX_CHARS);
        assert!(c.ends_with('…'));
        let entry = |text: &str| {
            Item::Entry(Entry {
                color: RGBColor(0, 0, 0),
                dashed: false,
                mark: true,
                text: text.into(),
            })
        };
        assert_eq!(width(&[entry("ab")], 120, 300), 120);
        assert_eq!(width(&[entry(&long)], 120, 300), 269);
        assert_eq!(width(&[entry(&long)], 120, 200), 200);
    }
}
