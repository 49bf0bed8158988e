//! Rows of a CSV trace with a header line, read one record at a time.

use super::{RowError, Rows};
use std::io::Read;

/// A CSV trace read record by record; the header names the columns.
pub(super) struct CsvRows<R> {
    reader: csv::Reader<R>,
    record: csv::StringRecord,
    /// Where each of time, input and output is in a record.
    index: [usize; 3],
    columns: [String; 3],
}

impl<R: Read> CsvRows<R> {
    /// Reads the header of `input` and finds `columns` (time, input, output) in it.
    pub(super) fn new(input: R, columns: [String; 3]) -> Result<Self, RowError> {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(input);
        let header = reader
            .headers()
            .map_err(|e| RowError::line(1, format!("not a CSV header: {e}")))?
            .clone();
        let mut index = [0; 3];
        for (slot, column) in index.iter_mut().zip(&columns) {
            *slot = header.iter().position(|h| h == column).ok_or_else(|| {
                let have: Vec<&str> = header.iter().collect();
                RowError::field(
                    1,
                    column,
                    format!("no such column; the header has: {}", have.join(", ")),
                )
            })?;
        }
        Ok(Self {
            reader,
            record: csv::StringRecord::new(),
            index,
            columns,
        })
    }
}

impl<R: Read> Rows for CsvRows<R> {
    fn next_row(&mut self, cells: &mut [String; 3]) -> Result<Option<u64>, RowError> {
        let more = self.reader.read_record(&mut self.record).map_err(|e| {
            let at = e.position().map_or(0, |p| p.line());
            RowError::line(at, format!("not a CSV record: {e}"))
        })?;
        if !more {
            return Ok(None);
        }
        let at = self.record.position().map_or(0, |p| p.line());
        for ((cell, &i), column) in cells.iter_mut().zip(&self.index).zip(&self.columns) {
            cell.clear();
            match self.record.get(i) {
                Some(v) if !v.is_empty() => cell.push_str(v),
                _ => return Err(RowError::field(at, column, "missing".into())),
            }
        }
        Ok(Some(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Result<CsvRows<&[u8]>, RowError> {
        CsvRows::new(text.as_bytes(), ["t", "in", "out"].map(String::from))
    }

    #[test]
    fn reads_cells_by_header_name() {
        let mut r = rows("x,out,in,t\na,3, 2,0.5\nb,5,6,1\n").unwrap();
        let mut cells = Default::default();
        assert_eq!(r.next_row(&mut cells).unwrap(), Some(2));
        assert_eq!(cells, ["0.5", "2", "3"]);
        assert_eq!(r.next_row(&mut cells).unwrap(), Some(3));
        assert_eq!(cells, ["1", "6", "5"]);
        assert_eq!(r.next_row(&mut cells).unwrap(), None);
    }

    #[test]
    fn an_unknown_column_lists_the_header() {
        let e = rows("t,in,output\n1,2,3\n").err().unwrap();
        assert_eq!((e.line, e.field.as_deref()), (1, Some("out")));
        assert!(
            e.what.contains("the header has: t, in, output"),
            "{}",
            e.what
        );
    }

    #[test]
    fn short_records_and_empty_cells_name_their_line() {
        let mut cells = Default::default();
        let mut r = rows("t,in,out\n1,2,3\n1,2\n").unwrap();
        r.next_row(&mut cells).unwrap();
        let e = r.next_row(&mut cells).unwrap_err();
        assert_eq!(e.line, 3, "{}", e.what);
        let e = rows("t,in,out\n1,,3\n")
            .unwrap()
            .next_row(&mut cells)
            .unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (2, Some("in")));
    }
}
