//! Bus names: what a hosted app answers to on the Bus, derived from its app id
//! (`org.gnome.Calculator` is `calculator`), numbered on a clash.
//!
//! One namespace holds the hosted apps and the clients that registered themselves.

use std::collections::HashMap;

/// Who holds a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A hosted app, by process id.
    App(u32),
    /// A client connection that registered the name.
    Client(u64),
    /// Held from the start for the first app to show a window (`--bus-name`).
    Reserved,
}

/// The Bus name an app id gives: its last dot-separated part, lowercased,
/// keeping only `a-z`, `0-9` and `-`; `app` when nothing is left.
pub fn name_from_app_id(app_id: &str) -> String {
    let last = app_id.rsplit('.').next().unwrap_or_default();
    let name: String = last
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
        .collect();
    if name.is_empty() {
        "app".into()
    } else {
        name
    }
}

/// Whether a name can be held on the Bus: 1 to 64 of `a-z A-Z 0-9 - _ .`,
/// not starting with a dot.
pub fn valid_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err(format!(
            "a Bus name has 1 to 64 characters, not {}",
            name.len()
        ));
    }
    if name.starts_with('.')
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "Bus name {name:?} may hold only letters, digits, '-', '_' and '.', and not start with '.'"
        ));
    }
    Ok(())
}

/// Every name taken on this Bus.
#[derive(Debug, Default)]
pub struct Names {
    owners: HashMap<String, Owner>,
    apps: HashMap<u32, String>,
    /// The name the first app to be named takes (`--bus-name`).
    first: Option<String>,
}

impl Names {
    /// `first`, when given, is held from now on for the first app.
    pub fn new(first: Option<String>) -> Self {
        let mut names = Names {
            first,
            ..Names::default()
        };
        if let Some(first) = &names.first {
            names.owners.insert(first.clone(), Owner::Reserved);
        }
        names
    }

    /// The name held for the first app while it has shown no window.
    pub fn reserved(&self) -> Option<&str> {
        self.first.as_deref()
    }

    /// Name an app once: `Some(name)` the first time it is seen, `None` after.
    pub fn name_app(&mut self, pid: u32, app_id: &str) -> Option<String> {
        if self.apps.contains_key(&pid) {
            return None;
        }
        if let Some(first) = self.first.take() {
            self.owners.insert(first.clone(), Owner::App(pid));
            self.apps.insert(pid, first.clone());
            return Some(first);
        }
        let base = name_from_app_id(app_id);
        let name = std::iter::once(base.clone())
            .chain((2..).map(|n| format!("{base}-{n}")))
            .find(|n| !self.owners.contains_key(n))
            .expect("an unbounded sequence holds a free name");
        self.owners.insert(name.clone(), Owner::App(pid));
        self.apps.insert(pid, name.clone());
        Some(name)
    }

    /// A client takes a name; a name someone else holds is refused.
    pub fn register(&mut self, name: &str, client: u64) -> Result<(), Owner> {
        match self.owners.get(name) {
            Some(Owner::Client(c)) if *c == client => Ok(()),
            Some(other) => Err(*other),
            None => {
                self.owners.insert(name.to_string(), Owner::Client(client));
                Ok(())
            }
        }
    }

    /// A client went: its names are free again.
    pub fn release(&mut self, client: u64) {
        self.owners.retain(|_, o| *o != Owner::Client(client));
    }

    pub fn owner(&self, name: &str) -> Option<Owner> {
        self.owners.get(name).copied()
    }

    /// The hosted apps' names, sorted.
    pub fn app_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.apps.values().cloned().collect();
        names.sort();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_id_gives_its_last_part_lowercased_and_cleaned() {
        assert_eq!(name_from_app_id("org.gnome.Calculator"), "calculator");
        assert_eq!(name_from_app_id("org.wayrig.Gtk4Fixture"), "gtk4fixture");
        assert_eq!(name_from_app_id("my_app.Tool-Box"), "tool-box");
        assert_eq!(name_from_app_id("firefox"), "firefox");
        assert_eq!(name_from_app_id("org.x.Ünï_cödé"), "ncd");
        assert_eq!(name_from_app_id(""), "app");
        assert_eq!(name_from_app_id("org.x.___"), "app");
    }

    #[test]
    fn a_clash_numbers_the_later_apps() {
        let mut names = Names::new(None);
        assert_eq!(
            names.name_app(10, "org.gnome.Calculator").unwrap(),
            "calculator"
        );
        assert_eq!(
            names.name_app(11, "org.kde.Calculator").unwrap(),
            "calculator-2"
        );
        assert_eq!(names.name_app(12, "calculator").unwrap(), "calculator-3");
        assert_eq!(names.name_app(10, "org.gnome.Calculator"), None);
        assert_eq!(names.owner("calculator-2"), Some(Owner::App(11)));
    }

    #[test]
    fn the_first_app_takes_the_name_given_and_later_ones_their_own() {
        let mut names = Names::new(Some("calc".into()));
        // Held from the start: no client takes it before the app shows.
        assert_eq!(names.owner("calc"), Some(Owner::Reserved));
        assert_eq!(names.register("calc", 1), Err(Owner::Reserved));
        assert_eq!(names.name_app(10, "org.gnome.Calculator").unwrap(), "calc");
        assert_eq!(names.reserved(), None);
        assert_eq!(
            names.name_app(11, "org.gnome.Calculator").unwrap(),
            "calculator"
        );
        assert_eq!(names.app_names(), ["calc", "calculator"]);
    }

    #[test]
    fn a_taken_name_is_refused_to_a_client_and_skipped_for_an_app() {
        let mut names = Names::new(None);
        assert_eq!(names.register("calculator", 1), Ok(()));
        assert_eq!(names.register("calculator", 1), Ok(()));
        assert_eq!(names.register("calculator", 2), Err(Owner::Client(1)));
        assert_eq!(
            names.name_app(10, "org.gnome.Calculator").unwrap(),
            "calculator-2"
        );
        assert_eq!(names.register("calculator-2", 2), Err(Owner::App(10)));
        names.release(1);
        assert_eq!(names.register("calculator", 2), Ok(()));
    }

    #[test]
    fn names_are_checked_for_length_and_characters() {
        assert!(valid_name("probe").is_ok());
        assert!(valid_name("sub.svc.node.bus").is_ok());
        assert!(valid_name("").is_err());
        assert!(valid_name(".hidden").is_err());
        assert!(valid_name("a b").is_err());
        assert!(valid_name(&"x".repeat(65)).is_err());
    }
}
