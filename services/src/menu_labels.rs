//! Menu labels as people read and ask for them: mnemonic markers dropped,
//! case and trailing ellipses ignored, accelerators written as shortcuts.

/// Whether a menu label is the one asked for: case, mnemonic underscores and a
/// trailing "…" or "..." do not matter.
pub fn label_matches(label: &str, asked: &str) -> bool {
    fn bare(s: &str) -> String {
        let plain = plain_label(s);
        let trimmed = plain.trim();
        let trimmed = trimmed
            .strip_suffix('…')
            .or_else(|| trimmed.strip_suffix("..."))
            .unwrap_or(trimmed);
        trimmed.trim_end().to_lowercase()
    }
    bare(label) == bare(asked)
}

/// The one entry whose label reads as `asked`, or none; several is `Err`
/// with them all: a path of labels cannot tell them apart, and taking the
/// first would be a guess.
pub fn only_labelled<T>(
    entries: impl IntoIterator<Item = T>,
    asked: &str,
    label: impl Fn(&T) -> String,
) -> Result<Option<T>, Vec<T>> {
    let mut matching: Vec<T> = entries
        .into_iter()
        .filter(|e| label_matches(&label(e), asked))
        .collect();
    match matching.len() {
        0 => Ok(None),
        1 => Ok(matching.pop()),
        _ => Err(matching),
    }
}

/// Several rows of the menu `menu` (the path down to it; none for the menu
/// bar's titles) read as `label`: `Ambiguous` naming their elements, or
/// where the menu was not read from the window's tree (a menu an app
/// exports) and some row has no element, an invalid request saying how many.
pub fn several_rows(
    menu: &[String],
    label: &str,
    ids: impl IntoIterator<Item = Option<u64>>,
) -> crate::model::Error {
    let ids: Vec<Option<u64>> = ids.into_iter().collect();
    let (what, rows) = if menu.is_empty() {
        (
            format!("the menu {label:?}"),
            "menus of the menu bar".to_string(),
        )
    } else {
        (
            format!("the row {label:?} of the menu {menu:?}"),
            format!("rows of the menu {menu:?}"),
        )
    };
    match ids.iter().copied().collect::<Option<Vec<u64>>>() {
        Some(ids) => crate::model::Error::Ambiguous { what, ids },
        None => crate::model::Error::InvalidRequest(format!(
            "{} {rows} read {label:?}: a path of labels cannot tell them apart",
            ids.len()
        )),
    }
}

/// A GTK accelerator as menus write it: `<Control><Shift>n` is `Ctrl+Shift+N`.
pub fn shortcut_of(accel: &str) -> Option<String> {
    let mut parts = Vec::new();
    let mut rest = accel;
    while let Some(tail) = rest.strip_prefix('<') {
        let (modifier, after) = tail.split_once('>')?;
        parts.push(match modifier.to_ascii_lowercase().as_str() {
            "control" | "ctrl" | "primary" => "Ctrl",
            "shift" => "Shift",
            "alt" | "mod1" => "Alt",
            "super" | "meta" => "Super",
            _ => return None,
        });
        rest = after;
    }
    if rest.is_empty() {
        return None;
    }
    let key = if rest.chars().count() == 1 {
        rest.to_uppercase()
    } else {
        rest.to_string()
    };
    Some(
        parts
            .into_iter()
            .chain(std::iter::once(key.as_str()))
            .collect::<Vec<_>>()
            .join("+"),
    )
}

/// A label as a person reads it: mnemonic underscores gone ("_File" → "File").
pub fn plain_label(label: &str) -> String {
    let mut out = String::new();
    let mut chars = label.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' {
            if chars.peek() == Some(&'_') {
                out.push('_');
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_match_ignoring_case_mnemonics_and_ellipses() {
        assert!(label_matches("_Save As…", "save as"));
        assert!(label_matches("Open...", "Open…"));
        assert!(
            label_matches("__Under", "__under"),
            "a doubled underscore is one"
        );
        assert!(!label_matches("Save", "Save As"));
    }

    #[test]
    fn a_label_read_by_several_entries_names_none_of_them() {
        let rows = ["_Check", "Radio", "Check…", "Cut"];
        let own = |r: &&str| r.to_string();
        assert_eq!(only_labelled(rows, "cut", own), Ok(Some("Cut")));
        assert_eq!(only_labelled(rows, "Paste", own), Ok(None));
        assert_eq!(
            only_labelled(rows, "check", own),
            Err(vec!["_Check", "Check…"])
        );
    }

    #[test]
    fn several_menu_bar_titles_are_named_as_menus() {
        let message = |e: crate::model::Error| e.to_string();
        let titles = message(several_rows(&[], "File", [Some(4), Some(9)]));
        assert!(titles.contains("the menu \"File\""), "{titles}");
        let rows = message(several_rows(&["Edit".into()], "Check", [None, None]));
        assert!(
            rows.contains("2 rows of the menu [\"Edit\"] read \"Check\""),
            "{rows}"
        );
    }

    #[test]
    fn accelerators_read_as_menus_write_them() {
        assert_eq!(shortcut_of("<Control>c").as_deref(), Some("Ctrl+C"));
        assert_eq!(
            shortcut_of("<Primary><Shift>n").as_deref(),
            Some("Ctrl+Shift+N")
        );
        assert_eq!(shortcut_of("F11").as_deref(), Some("F11"));
        assert_eq!(shortcut_of("<Hyper>x"), None);
    }

    #[test]
    fn mnemonics_are_not_part_of_labels() {
        assert_eq!(plain_label("_File"), "File");
        assert_eq!(plain_label("Save __As"), "Save _As");
        assert_eq!(plain_label("Plain"), "Plain");
    }
}
