//! "Did you mean …?" Owns the nearest-name suggestion used by every diagnostic about an unknown
//! key, service or value: the closest candidate by Jaro-Winkler similarity, offered only when it is
//! close enough to be a plausible typo.

/// Longest word for which a suggestion is looked for, and shown whole in a message.
pub const MAX_WORD: usize = 100;

/// `word`, or its first [`MAX_WORD`] characters and `…` when it is longer.
pub fn shorten(word: &str) -> String {
    match word.char_indices().nth(MAX_WORD) {
        Some((cut, _)) => format!("{}…", &word[..cut]),
        None => word.to_owned(),
    }
}

/// `", did you mean `x`?"` for the closest candidate, or an empty string.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    // No typo is this long, and similarity costs time proportional to the length squared.
    if word.len() > MAX_WORD {
        return String::new();
    }
    let best = candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, c)) => format!(", did you mean `{c}`?"),
        None => String::new(),
    }
}

/// Rewrites serde's "unknown field `x`, expected one of `a`, `b`" into a sentence with a suggestion;
/// returns the unknown key too. Other messages pass through.
pub fn explain_serde_message(message: &str) -> (String, Option<String>) {
    for prefix in ["unknown field `", "unknown variant `"] {
        let Some(rest) = message.strip_prefix(prefix) else {
            continue;
        };
        let Some(end) = rest.find('`') else { continue };
        let word = &rest[..end];
        let tail = &rest[end + 1..];
        let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
        let what = if prefix.contains("field") {
            "key"
        } else {
            "value"
        };
        let list = expected
            .iter()
            .map(|e| format!("`{e}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let hint = did_you_mean(word, expected.iter().copied());
        let word_full = word;
        let word = &shorten(word);
        let sentence = if hint.is_empty() {
            format!("unknown {what} `{word}`; expected one of {list}")
        } else {
            format!("unknown {what} `{word}`{hint} (expected one of {list})")
        };
        return (sentence, (what == "key").then(|| word_full.to_owned()));
    }
    (message.to_owned(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(
            did_you_mean("queue_capp", ["slots", "queue_cap"]),
            ", did you mean `queue_cap`?"
        );
        assert_eq!(did_you_mean("zzz", ["slots", "queue_cap"]), "");
    }

    #[test]
    fn rewrites_unknown_field_messages() {
        let (m, key) = explain_serde_message(
            "unknown field `queue_capp`, expected one of `slots`, `queue_cap`",
        );
        assert_eq!(key.as_deref(), Some("queue_capp"));
        assert!(m.contains("did you mean `queue_cap`?"), "{m}");
    }
}
