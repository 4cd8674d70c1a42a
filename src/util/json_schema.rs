//! Doc comments as JSON Schema descriptions. Owns the one text rule every schema loadsim
//! generates from its types shares (the scenario, sweep and run report schemas): a doc comment's
//! wrapped lines become one paragraph.

use serde_json::Value;

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
