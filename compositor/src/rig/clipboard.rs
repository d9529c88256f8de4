//! Who owns the clipboard (the data device selection) as the compositor last
//! heard, and its generation, which moves on every change of content.

use std::sync::Arc;

use smithay::reexports::wayland_server::backend::ClientId;

/// The owner of the clipboard's content.
#[derive(Debug, Clone, PartialEq)]
pub enum ClipboardOwner {
    /// An app's data source, offering these MIME types.
    App {
        /// The client that set it (the one with keyboard focus then).
        client: Option<ClientId>,
        pid: Option<u32>,
        mime_types: Vec<String>,
    },
    /// The compositor itself, offering this text.
    Compositor(Arc<str>),
}

/// The clipboard as the compositor knows it.
#[derive(Debug, Default)]
pub struct Clipboard {
    owner: Option<ClipboardOwner>,
    generation: u64,
}

impl Clipboard {
    pub fn owner(&self) -> Option<&ClipboardOwner> {
        self.owner.as_ref()
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A new content (or none): the generation moves on, and is answered.
    pub fn owned_by(&mut self, owner: Option<ClipboardOwner>) -> u64 {
        self.owner = owner;
        self.generation += 1;
        self.generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_of_owner_moves_the_generation_on() {
        let mut clipboard = Clipboard::default();
        assert_eq!((clipboard.owner(), clipboard.generation()), (None, 0));
        let first = clipboard.owned_by(Some(ClipboardOwner::Compositor("a".into())));
        // The same text set again is a new content all the same.
        let second = clipboard.owned_by(Some(ClipboardOwner::Compositor("a".into())));
        let cleared = clipboard.owned_by(None);
        assert!(
            first < second && second < cleared,
            "{first} {second} {cleared}"
        );
        assert_eq!(clipboard.owner(), None);
    }
}
