//! The stream contract between tokenpipe tools.
//!
//! Every tool reads and writes NDJSON: one flat JSON object per line with a `"type"` field. The
//! first record of every stream is a [`Header`], and each further header starts another run;
//! readers skip record types, fields and enum values they do not know, so adding a record, a
//! field or a value never breaks an older reader. Raw times are integer
//! nanoseconds from the run start (`*_ns`), summaries carry their unit in the field name.
//! docs/format.md is the prose version of this crate.

pub mod clock;
pub mod histogram;
pub mod ids;
pub mod idset;
pub mod int_hash;
mod json_error;
pub mod number;
pub mod or_other;
pub mod reader;
pub mod records;
pub mod schema;
pub mod tracker;
pub mod vllm;
pub mod vocab;
pub mod words;
pub mod writer;

pub use idset::IdSet;
pub use int_hash::IntMap;
pub use or_other::OrOther;
pub use reader::{ReadError, RecordReader};
pub use records::*;
pub use tracker::{RequestTracker, TrackError};
pub use words::ONE_TOKEN_WORDS;
pub use writer::RecordWriter;

/// Major version of the stream format. A reader refuses streams with a higher major version,
/// because a major bump means an existing field changed meaning.
pub const FORMAT_MAJOR: u32 = 1;

/// Minor version of the stream format: bumped when records or fields are added, which older
/// readers can safely ignore.
pub const FORMAT_MINOR: u32 = 10;
