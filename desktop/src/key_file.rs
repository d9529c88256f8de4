//! The key-file format desktop entries and mimeapps.list share: groups of
//! `Key=value` lines, string escapes and `;`-separated lists.

use std::collections::HashMap;

/// The raw values of the unlocalized keys of the first group named `name` in a
/// key file (desktop entries and mimeapps.list share the format); the first of
/// duplicated keys counts.
pub(crate) fn group(text: &str, name: &str) -> Option<HashMap<String, String>> {
    let mut keys = None::<HashMap<String, String>>;
    for line in text.lines() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            if keys.is_some() {
                break;
            }
            if header.trim_end().strip_suffix(']') == Some(name) {
                keys = Some(HashMap::new());
            }
            continue;
        }
        let Some(keys) = keys.as_mut() else { continue };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim_end();
        // Localized keys (Name[de]) are not read: the unlocalized value is wanted.
        if key.contains('[') {
            continue;
        }
        keys.entry(key.to_string())
            .or_insert_with(|| value.trim_start_matches([' ', '\t']).to_string());
    }
    keys
}

/// Undoes a string value's escapes: `\s \n \t \r \\`; any other backslash stays.
pub(crate) fn unescape_string(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Splits a `;`-list value, with `\;` a `;` inside an element and the string
/// escapes undone; empty elements (the trailing `;`) are dropped.
pub(crate) fn split_list(raw: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            ';' => items.push(std::mem::take(&mut current)),
            '\\' => match chars.next() {
                Some(';') => current.push(';'),
                Some(other) => current.push_str(&unescape_string(&format!("\\{other}"))),
                None => current.push('\\'),
            },
            c => current.push(c),
        }
    }
    items.push(current);
    items
        .into_iter()
        .map(|item| item.trim().to_string())
        .filter(|item| !item.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_escapes_are_undone_and_unknown_ones_kept() {
        assert_eq!(unescape_string("a\\nb\\rc\\qd"), "a\nb\rc\\qd");
    }
}
