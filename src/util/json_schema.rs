//! Doc comments as JSON Schema descriptions, and the generated root every schema starts from.
//! Owns what the schemas loadsim generates from its types (the scenario, sweep and run report
//! schemas) share: the draft-07 root object of a type ([`draft07_root`]), taking its `$schema`
//! and definitions apart ([`take_meta_and_definitions`]), and the one text rule: a doc comment's
//! wrapped lines become one paragraph.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The draft-07 JSON Schema of `T` as a JSON object.
pub fn draft07_root<T: JsonSchema>() -> Map<String, Value> {
    let generated = SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<T>();
    let Value::Object(root) = generated.to_value() else {
        unreachable!("schemars returns an object schema for a struct")
    };
    root
}

/// Takes `$schema` (the meta-schema URI; `null` when absent) and the definitions out of a
/// generated `root`, and drops its `title` (the Rust type's name): what is left is the schema
/// of the type's own object.
pub fn take_meta_and_definitions(root: &mut Map<String, Value>) -> (Value, Map<String, Value>) {
    let meta = root.remove("$schema").unwrap_or(Value::Null);
    root.remove("title");
    let defs = match root.remove("definitions") {
        Some(Value::Object(d)) => d,
        _ => Map::new(),
    };
    (meta, defs)
}

/// Doc comments are wrapped at 100 columns, and editors render each line break of a description as
/// a new paragraph: join the lines of each paragraph, keeping blank lines and list items.
pub fn unwrap_descriptions(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                match child {
                    Value::String(text) if k == "description" => *text = unwrap_paragraphs(text),
                    _ => unwrap_descriptions(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

fn unwrap_paragraphs(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let starts_block = line.is_empty()
            || line.starts_with("- ")
            || line.starts_with("* ")
            || line.starts_with('|');
        if !out.is_empty() {
            out.push(if starts_block || out.ends_with('\n') {
                '\n'
            } else {
                ' '
            });
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_are_joined_but_blank_lines_and_lists_kept() {
        assert_eq!(unwrap_paragraphs("a b\nc d"), "a b c d");
        assert_eq!(unwrap_paragraphs("a\n\nb\nc"), "a\n\nb c");
        assert_eq!(unwrap_paragraphs("a:\n- x\n- y"), "a:\n- x\n- y");
    }
}
