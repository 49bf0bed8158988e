//! Rankings (`--rows model --cols profile --top 3`): for each column value, the best N row
//! values by the cell field, "Top 3 by output throughput per profile". Best follows the field:
//! higher throughput first, lower latency first; a field with no better direction ranks highest
//! first and the caption says so. Equal values keep the rows' natural order. A run that is not
//! comparable is never ranked unmarked: its entry ends in `†`, with its reason under the table
//! (`--only-comparable` leaves it out instead).

use super::pivot::{key_text, unit_of, Pivot};
use crate::error::Error;
use crate::field::{Better, Field};
use crate::grid::{format_value, Align, Cell, Grid, Kind, Num, SpreadMode};
use crate::laid_out::LaidOut;
use crate::machine::MachineTable;
use crate::options::Options;
use crate::report::Report;

/// The ranking `opts` asks for (`--top N` of the pivot `--rows`, `--cols`, `--cell`), laid out
/// for people (a grid) and for machines (one row per place), with notes for stderr (runs that
/// had no key value). `--baseline` and `--top 0` are bad input.
pub(crate) fn lay_out(report: &Report, opts: &Options) -> Result<LaidOut, Error> {
    let pivot = Pivot::build(report, opts)?;
    if opts.baseline.is_some() {
        return Err(Error::Flags(
            "--baseline compares pivot columns; it does not apply to a --top ranking".into(),
        ));
    }
    let n = opts.top.unwrap_or(0);
    if n == 0 {
        return Err(Error::Flags("--top needs at least 1".into()));
    }
    // No more places than rows to rank.
    let n = n.min(pivot.row_keys.len().max(1));
    Ok(LaidOut::table(
        to_grid(&pivot, n),
        to_machine(&pivot, n, opts.spread),
        opts.spread,
        pivot.notes,
    ))
}

/// The rows of column `col` that have a number, best first, at most `n`.
pub(crate) fn ranking(pivot: &Pivot, col: usize, n: usize) -> Vec<usize> {
    let mut ranked: Vec<(usize, f64)> = (0..pivot.row_keys.len())
        .filter_map(|r| pivot.cells[r][col].number().map(|v| (r, v)))
        .collect();
    // A stable sort over rows already in natural order keeps ties in that order.
    match pivot.cell.better {
        Better::Lower => ranked.sort_by(|a, b| a.1.total_cmp(&b.1)),
        Better::Higher | Better::Neither => ranked.sort_by(|a, b| b.1.total_cmp(&a.1)),
    }
    ranked.into_iter().take(n).map(|(r, _)| r).collect()
}

/// `Top 3 by Output [tok/s] per profile`.
fn caption(pivot: &Pivot, n: usize) -> String {
    let mut caption = format!("Top {n} by {}", pivot.cell.heading);
    if let Some(cols) = &pivot.cols {
        caption.push_str(&format!(" per {}", cols.name));
    }
    if pivot.cell.better == Better::Neither {
        caption.push_str(&format!(
            ", highest first ({} is neither better high nor low)",
            pivot.cell.name
        ));
    }
    caption
}

/// One ranked entry as people read it: `MiniMax M2.1 (145.94 tok/s)`, marked `†` when its run
/// is not comparable.
fn entry(pivot: &Pivot, row: usize, col: usize) -> Cell {
    let key = key_text(&pivot.row_keys[row]);
    let value = format_value(pivot.cells[row][col].number(), pivot.cell.kind);
    let text = match unit_of(&pivot.cell.heading) {
        Some(unit) => format!("{key} ({value} {unit})"),
        None => format!("{key} ({value})"),
    };
    if pivot.marked[row][col] {
        Cell::Marked(Box::new(Cell::Text(text)), crate::verdict::MARK)
    } else {
        Cell::Text(text)
    }
}

/// The heading of the first column: the ranked-within field, or `Runs` for one ranking of all.
fn group_heading(cols: Option<&Field>) -> String {
    cols.map_or_else(|| "Runs".to_string(), |f| f.heading.clone())
}

/// The ranking as a grid: `<cols heading> | #1 | … | #N`, one row per column value, `-` where a
/// column has fewer than N rows with a value.
fn to_grid(pivot: &Pivot, n: usize) -> Grid {
    let mut headings = vec![group_heading(pivot.cols.as_ref())];
    headings.extend((1..=n).map(|i| format!("#{i}")));
    let rows = (0..pivot.col_keys.len())
        .map(|c| {
            let ranked = ranking(pivot, c, n);
            let mut line = vec![pivot.col_keys[c].clone()];
            line.extend(
                (0..n).map(|i| ranked.get(i).map_or(Cell::Missing, |&r| entry(pivot, r, c))),
            );
            line
        })
        .collect();
    // The reason of each marked entry, in the order they are ranked.
    let notes = (0..pivot.col_keys.len())
        .flat_map(|c| ranking(pivot, c, n).into_iter().map(move |r| (r, c)))
        .filter_map(|(r, c)| {
            pivot
                .verdict_notes
                .iter()
                .find(|(nr, nc, _)| (*nr, *nc) == (r, c))
                .map(|(.., note)| note.clone())
        })
        .collect();
    Grid {
        caption: Some(caption(pivot, n)),
        align: vec![Align::Left; n + 1],
        headings,
        rows,
        notes,
        ..Grid::default()
    }
}

/// The ranking for machines, one row per place: `<cols>,rank,<rows>,<cell>,comparable` (and
/// `<cell>_sd`, `<cell>_cv_pct` when a ranked value is a mean over runs).
fn to_machine(pivot: &Pivot, n: usize, mode: SpreadMode) -> MachineTable {
    let group = pivot.cols.as_ref().map_or("group", |f| f.name.as_str());
    let rows = (0..pivot.col_keys.len())
        .flat_map(|c| {
            ranking(pivot, c, n)
                .into_iter()
                .enumerate()
                .map(move |(i, r)| {
                    vec![
                        pivot.col_keys[c].clone(),
                        Cell::Num(Num {
                            value: (i + 1) as f64,
                            kind: Kind::Count,
                            spread: None,
                        }),
                        pivot.row_keys[r].clone(),
                        pivot.cells[r][c].clone(),
                        Cell::Verdict {
                            comparable: !pivot.marked[r][c],
                            text: String::new(),
                        },
                    ]
                })
        })
        .collect();
    let names = vec![
        group.to_string(),
        "rank".to_string(),
        pivot.rows.name.clone(),
        pivot.cell.name.clone(),
        "comparable".to_string(),
    ];
    let grid = Grid {
        headings: names.clone(),
        rows,
        ..Grid::default()
    };
    MachineTable::from_grid(&grid, &names, mode)
}
