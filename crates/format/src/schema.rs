//! The JSON Schema of the stream, generated from the record types so that it cannot drift from
//! the code. `docs/schema.json` holds the checked-in copy; a test fails when it is stale.

use crate::records::Record;

/// The JSON Schema (draft 2020-12) of one stream line, pretty-printed with a trailing newline.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Record);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn schema_names_every_record_type() {
        let s = super::json_schema();
        for t in crate::RecordType::ALL {
            let t = t.name();
            assert!(s.contains(&format!("\"{t}\"")), "schema lacks {t}");
        }
    }
}
