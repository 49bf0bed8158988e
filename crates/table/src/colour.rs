//! Colour on the terminal: bold headings and a dim `-`, only when stdout is a terminal and
//! `NO_COLOR` is unset or empty (<https://no-color.org>). Applied to the finished box-drawn
//! text, so escape codes never count towards column widths.

const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Whether to colour: stdout is a terminal and `NO_COLOR` (its value, if set) is absent or empty.
pub fn use_colour(stdout_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stdout_is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Colours a box-drawn table (or several, with captions and notes around them): the heading
/// lines between a top border `╭` and the rule `├` in bold, `-` cells dim.
pub fn paint(text: &str) -> String {
    let mut in_heading = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with('╭') {
                in_heading = true;
                return line.to_string();
            }
            if line.starts_with('├') || line.starts_with('╰') {
                in_heading = false;
                return line.to_string();
            }
            if !line.starts_with('│') {
                return line.to_string();
            }
            let cells: Vec<String> = line
                .split('│')
                .map(|cell| {
                    let content = cell.trim();
                    if content.is_empty() {
                        return cell.to_string();
                    }
                    let style = match (in_heading, content) {
                        (true, _) => BOLD,
                        (false, "-") => DIM,
                        _ => return cell.to_string(),
                    };
                    let start = cell.len() - cell.trim_start().len();
                    let end = start + content.len();
                    format!("{}{style}{content}{RESET}{}", &cell[..start], &cell[end..])
                })
                .collect();
            cells.join("│")
        })
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(use_colour(true, None));
        assert!(use_colour(true, Some(OsStr::new(""))));
        assert!(!use_colour(true, Some(OsStr::new("1"))));
        assert!(!use_colour(false, None));
    }

    #[test]
    fn headings_bold_and_dashes_dim_without_moving_borders() {
        let table = "╭───┬────╮\n│ a │ bb │\n├───┼────┤\n│ - │ 12 │\n╰───┴────╯";
        let painted = paint(table);
        assert_eq!(
            painted,
            "╭───┬────╮\n│ \x1b[1ma\x1b[0m │ \x1b[1mbb\x1b[0m │\n├───┼────┤\n│ \x1b[2m-\x1b[0m │ 12 │\n╰───┴────╯"
        );
        let strip = painted
            .replace(BOLD, "")
            .replace(DIM, "")
            .replace(RESET, "");
        assert_eq!(strip, table);
    }
}
