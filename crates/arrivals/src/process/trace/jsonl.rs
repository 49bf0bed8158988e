//! Rows of a JSON-lines trace: one object per line, read one line at a time.

use super::{RowError, Rows};
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::io::BufRead;

/// A JSON-lines trace read line by line; blank lines are skipped.
pub(super) struct JsonlRows<R> {
    input: R,
    line: String,
    at: u64,
    columns: [String; 3],
    /// Whether the first object has been checked for every column.
    checked: bool,
}

impl<R: BufRead> JsonlRows<R> {
    /// Reads `columns` (time, input, output) from each line of `input`.
    pub(super) fn new(input: R, columns: [String; 3]) -> Self {
        Self {
            input,
            line: String::new(),
            at: 0,
            columns,
            checked: false,
        }
    }
}

impl<R: BufRead> Rows for JsonlRows<R> {
    fn next_row(&mut self, cells: &mut [String; 3]) -> Result<Option<u64>, RowError> {
        loop {
            self.line.clear();
            self.at += 1;
            let read = self
                .input
                .read_line(&mut self.line)
                .map_err(|e| RowError::line(self.at, format!("cannot read: {e}")))?;
            if read == 0 {
                return Ok(None);
            }
            if !self.line.trim().is_empty() {
                break;
            }
        }
        let at = self.at;
        let object: Map<String, Value> = serde_json::from_str(&self.line)
            .map_err(|e| RowError::line(at, format!("not a JSON object: {e}")))?;
        if !self.checked {
            // A column the first row lacks is a wrong name, not a missing value.
            if let Some(c) = self
                .columns
                .iter()
                .find(|c| !object.contains_key(c.as_str()))
            {
                let have: Vec<&str> = object.keys().map(String::as_str).collect();
                return Err(RowError::field(
                    at,
                    c,
                    format!("no such column; the rows have: {}", have.join(", ")),
                ));
            }
            self.checked = true;
        }
        for (cell, column) in cells.iter_mut().zip(&self.columns) {
            cell.clear();
            match object.get(column) {
                None | Some(Value::Null) => {
                    return Err(RowError::field(at, column, "missing".into()))
                }
                Some(Value::Number(n)) => {
                    let _ = write!(cell, "{n}");
                }
                Some(other) => {
                    return Err(RowError::field(
                        at,
                        column,
                        format!("expected a number, got {other}"),
                    ))
                }
            }
        }
        Ok(Some(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> JsonlRows<&[u8]> {
        let columns = ["t", "i", "o"].map(String::from);
        JsonlRows::new(text.as_bytes(), columns)
    }

    #[test]
    fn reads_numbers_by_column_and_skips_blank_lines() {
        let mut r =
            rows("{\"t\": 1.5, \"i\": 3, \"o\": 4, \"x\": [1]}\n\n{\"o\":1,\"i\":2,\"t\":7}\n");
        let mut cells = Default::default();
        assert_eq!(r.next_row(&mut cells).unwrap(), Some(1));
        assert_eq!(cells, ["1.5", "3", "4"]);
        assert_eq!(r.next_row(&mut cells).unwrap(), Some(3));
        assert_eq!(cells, ["7", "2", "1"]);
        assert_eq!(r.next_row(&mut cells).unwrap(), None);
    }

    #[test]
    fn names_the_line_and_field_of_what_is_wrong() {
        let mut cells = Default::default();
        let e = rows("{\"t\": 1, \"i\": 3}\n")
            .next_row(&mut cells)
            .unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (1, Some("o")));
        assert!(e.what.contains("the rows have: i, t"), "{}", e.what);
        let mut r = rows("{\"t\":1,\"i\":2,\"o\":3}\n{\"t\":1,\"i\":\"2\",\"o\":3}\n");
        r.next_row(&mut cells).unwrap();
        let e = r.next_row(&mut cells).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (2, Some("i")));
        let e = rows("{\"t\":1,\n").next_row(&mut cells).unwrap_err();
        assert!(e.what.contains("not a JSON object"), "{}", e.what);
    }
}
