//! Enumerated fields that stay readable when a newer writer adds a value.
//!
//! "Adding is never breaking" holds for enum values too: a reader that meets an `error_kind` or a
//! loop `mode` it does not know keeps the string as [`OrOther::Other`] instead of refusing the
//! line. Writers only ever write [`OrOther::Known`] values of their own version.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// A value of a known string enum `T`, or a string this build does not know.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OrOther<T> {
    /// One of the values this build knows.
    Known(T),
    /// A value from a newer writer, kept as it was written.
    Other(String),
}

impl<T> From<T> for OrOther<T> {
    fn from(value: T) -> Self {
        OrOther::Known(value)
    }
}

/// The known default, so that records holding an enum can derive `Default`.
impl<T: Default> Default for OrOther<T> {
    fn default() -> Self {
        OrOther::Known(T::default())
    }
}

impl<T: PartialEq> OrOther<T> {
    /// True when this is the known value `want`.
    pub fn is(&self, want: T) -> bool {
        matches!(self, OrOther::Known(v) if *v == want)
    }
}

impl<T: Copy> OrOther<T> {
    /// The known value, if it is one.
    pub fn known(&self) -> Option<T> {
        match self {
            OrOther::Known(v) => Some(*v),
            OrOther::Other(_) => None,
        }
    }
}

impl<T: AsRef<str>> OrOther<T> {
    /// The wire string of the value, known or not.
    pub fn as_str(&self) -> &str {
        match self {
            OrOther::Known(v) => v.as_ref(),
            OrOther::Other(s) => s,
        }
    }
}

impl<T: AsRef<str>> fmt::Display for OrOther<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<T: Serialize> Serialize for OrOther<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            OrOther::Known(v) => v.serialize(s),
            OrOther::Other(text) => s.serialize_str(text),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for OrOther<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Cow::<'de, str>::deserialize(d)?;
        let known: Result<T, serde::de::value::Error> =
            T::deserialize(text.as_ref().into_deserializer());
        Ok(match known {
            Ok(v) => OrOther::Known(v),
            Err(_) => OrOther::Other(text.into_owned()),
        })
    }
}

impl<T: JsonSchema> JsonSchema for OrOther<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("{}OrOther", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let known = generator.subschema_for::<T>();
        json_schema!({
            "description": "One of the known values, or a string from a newer writer (kept, never refused).",
            "anyOf": [known, {"type": "string"}]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Colour {
        Red,
        DarkBlue,
    }

    impl AsRef<str> for Colour {
        fn as_ref(&self) -> &str {
            match self {
                Colour::Red => "red",
                Colour::DarkBlue => "dark_blue",
            }
        }
    }

    #[test]
    fn known_and_other_round_trip() {
        let v: OrOther<Colour> = serde_json::from_str("\"dark_blue\"").unwrap();
        assert_eq!(v, OrOther::Known(Colour::DarkBlue));
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"dark_blue\"");
        let v: OrOther<Colour> = serde_json::from_str("\"ultraviolet\"").unwrap();
        assert_eq!(v, OrOther::Other("ultraviolet".into()));
        assert_eq!(v.as_str(), "ultraviolet");
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"ultraviolet\"");
        // Escaped strings are owned, not borrowed.
        let v: OrOther<Colour> = serde_json::from_str("\"r\\u0065d\"").unwrap();
        assert!(v.is(Colour::Red));
        assert!(serde_json::from_str::<OrOther<Colour>>("3").is_err());
    }
}
