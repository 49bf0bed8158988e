//! How a line that is not a valid record is described: the field at fault, by its path, and
//! serde_json's message without its "at line 1" suffix. Both the reader and the record types'
//! re-parse use it, so every bad-input message has one shape.

/// Parses a line that failed as the body type `T`, tracking the path, and names the field at
/// fault. When the body alone parses, the fault is in what only the whole record sees (a
/// second `"type"` member): `whole`, the whole record's error, is described instead.
pub(crate) fn path_error<T: serde::de::DeserializeOwned>(
    text: &[u8],
    whole: &serde_json::Error,
) -> String {
    let mut de = serde_json::Deserializer::from_slice(text);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Ok(_) => describe_json_error(whole, None),
        Err(e) => {
            let path = e.path().to_string();
            let field = (path != "." && !path.is_empty()).then_some(path);
            describe_json_error(e.inner(), field.as_deref())
        }
    }
}

/// Turns a serde_json error into `field "x": message` without serde_json's own
/// "at line 1 column N" suffix (every record is one line; the column is kept).
pub(crate) fn describe_json_error(e: &serde_json::Error, field: Option<&str>) -> String {
    let full = e.to_string();
    let msg = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => full.as_str(),
    };
    let msg = msg.replace('`', "\"");
    match field {
        Some(f) => format!("field \"{f}\": {msg} (column {})", e.column()),
        None => format!("{msg} (column {})", e.column()),
    }
}
