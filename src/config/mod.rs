//! The configuration layer shared by scenarios and sweeps. Owns everything about reading a YAML
//! input that is not about what the input means: reading a file safely ([`source::read_text`]),
//! following `extends:` and applying `--set` ([`source::Document`]), remembering where every key
//! was written, typed deserialization with the failing key's path and line ([`deserialize()`]),
//! the diagnostics themselves ([`error`]), "did you mean" suggestions ([`suggest`]) and durations
//! as users write them ([`duration`]). The scenario and sweep modules build their domain types on
//! top of it.

pub mod duration;
pub mod error;
pub mod source;
pub mod suggest;

pub use error::{ConfigError, Diagnostic, Origin, Paint};
pub use source::Document;

use suggest::explain_serde_message;

/// Typed deserialization with the failing key's path and line.
pub fn deserialize<T: serde::de::DeserializeOwned>(doc: &Document) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(&doc.value).map_err(|e| {
        let mut key = e.path().to_string();
        if key == "." {
            key.clear();
        }
        let inner = strip_yaml_location(&e.inner().to_string());
        let (message, unknown) = explain_serde_message(&inner);
        // serde_path_to_error's path already ends at the unknown key; add it only if it does not.
        if let Some(word) = unknown
            && !(key == word || key.ends_with(&format!(".{word}")))
        {
            key = if key.is_empty() {
                word
            } else {
                format!("{key}.{word}")
            };
        }
        let message = message
            .replace("invalid type: ", "wrong type: ")
            .replace(
                "expected u32",
                "expected a whole number from 0 to 4294967295",
            )
            .replace(
                "expected u64",
                "expected a whole number from 0 to 18446744073709551615",
            )
            .replace("expected f64", "expected a number");
        ConfigError::one(doc.diagnostic(&key, message))
    })
}

fn strip_yaml_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}
