//! The events apps send on the accessibility bus: read in order on a task of
//! their own, counted, marked per object, focus and announcements kept.

use std::collections::HashMap;

use futures_util::stream::StreamExt;

use super::event_marks::{meaning, Marks, Meaning};
use super::{failed, Shared};
use crate::access::{node_id, AnnouncementsRead};
use crate::model::Error;

/// Announcements kept per app; older ones are dropped.
const ANNOUNCEMENTS_KEPT: usize = 64;

/// What apps announced, numbered in order per app (by bus name), so that
/// each reader gets every announcement once, whatever other readers took.
#[derive(Debug, Default)]
pub(super) struct Announcements {
    by_app: HashMap<String, Announced>,
}

/// One app's latest announcements: `kept` ends with number `next - 1`.
#[derive(Debug, Default)]
struct Announced {
    next: u64,
    kept: std::collections::VecDeque<String>,
}

impl Announcements {
    pub(super) fn push(&mut self, app: &str, text: String) {
        let a = self.by_app.entry(app.to_string()).or_default();
        a.kept.push_back(text);
        a.next += 1;
        if a.kept.len() > ANNOUNCEMENTS_KEPT {
            a.kept.pop_front();
        }
    }

    /// What `app` announced that `read` has not had yet, oldest first.
    pub(super) fn unread(&self, app: &str, read: &mut AnnouncementsRead) -> Vec<String> {
        let Some(a) = self.by_app.get(app) else {
            return Vec::new();
        };
        let seen = read.0.entry(app.to_string()).or_default();
        let first_kept = a.next - a.kept.len() as u64;
        let skip = seen.saturating_sub(first_kept) as usize;
        *seen = a.next;
        a.kept.iter().skip(skip).cloned().collect()
    }
}

/// Ask toolkits for object and cache events, and read every message the
/// connection receives, in order, on a task of its own: it counts the events
/// and publishes how far it has read. (An unread stream would stall the
/// connection; reading them all is what makes "every event sent before this
/// reply has been seen" checkable.)
pub(super) async fn watch_changes(
    conn: &zbus::Connection,
    watch: Watch,
) -> Result<
    (
        tokio::sync::watch::Receiver<Option<zbus::message::Sequence>>,
        tokio::task::JoinHandle<()>,
    ),
    Error,
> {
    use atspi::events::{DBusMatchRule, RegistryEventString};
    // Made before the match rules so that nothing after them is missed.
    let mut messages = zbus::MessageStream::from(conn);
    let dbus = zbus::fdo::DBusProxy::new(conn)
        .await
        .map_err(|e| failed("bus", e))?;
    for rule in [
        atspi::ObjectEvents::MATCH_RULE_STRING,
        atspi::CacheEvents::MATCH_RULE_STRING,
    ] {
        let rule = zbus::MatchRule::try_from(rule).map_err(|e| failed("event rule", e))?;
        dbus.add_match_rule(rule)
            .await
            .map_err(|e| failed("watching accessibility events", e))?;
    }
    let registry = atspi::proxy::registry::RegistryProxy::new(conn)
        .await
        .map_err(|e| failed("registry", e))?;
    for event in [
        atspi::ObjectEvents::REGISTRY_EVENT_STRING,
        atspi::CacheEvents::REGISTRY_EVENT_STRING,
    ] {
        registry
            .register_event(event)
            .await
            .map_err(|e| failed("registering events", e))?;
    }
    let (read_to, read) = tokio::sync::watch::channel(None);
    let task = tokio::spawn(async move {
        while let Some(message) = messages.next().await {
            let Ok(message) = message else { continue };
            let header = message.header();
            let event = message.message_type() == zbus::message::Type::Signal
                && header.interface().is_some_and(|i| {
                    i.starts_with("org.a11y.atspi.Event.") || i.as_str() == "org.a11y.atspi.Cache"
                });
            if event {
                watch.saw(&message);
            }
            read_to.send_replace(Some(message.recv_position()));
        }
    });
    Ok((read, task))
}

/// Watch Document events too: they tell of a page loaded (Chromium builds a
/// page's tree once asked, and says so by its document's load-complete
/// alone). Asked only once such an app comes: with a Document listener
/// registered, GTK 4 apps took a third longer to their first whole tree.
pub(super) async fn watch_document_events(conn: &zbus::Connection) -> Result<(), Error> {
    use atspi::events::{DBusMatchRule, RegistryEventString};
    let rule = zbus::MatchRule::try_from(atspi::DocumentEvents::MATCH_RULE_STRING)
        .map_err(|e| failed("event rule", e))?;
    zbus::fdo::DBusProxy::new(conn)
        .await
        .map_err(|e| failed("bus", e))?
        .add_match_rule(rule)
        .await
        .map_err(|e| failed("watching document events", e))?;
    atspi::proxy::registry::RegistryProxy::new(conn)
        .await
        .map_err(|e| failed("registry", e))?
        .register_event(atspi::DocumentEvents::REGISTRY_EVENT_STRING)
        .await
        .map_err(|e| failed("registering document events", e))
}

/// Where the event task writes what it saw.
pub(super) struct Watch {
    pub(super) changes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    pub(super) dirty: Shared<HashMap<u64, u64>>,
    pub(super) marks: Shared<Marks>,
    pub(super) announcements: Shared<Announcements>,
    /// The change count and node id of the last object that gained focus.
    pub(super) focus: tokio::sync::watch::Sender<(u64, u64)>,
}

impl Watch {
    /// Count an event, mark the object it names, keep what it announces.
    fn saw(&self, message: &zbus::Message) {
        let count = self
            .changes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        let header = message.header();
        let (Some(sender), Some(path)) = (header.sender(), header.path()) else {
            return;
        };
        let id = node_id(sender.as_str(), path.as_str());
        let member = header.member().map(|m| m.as_str().to_string());
        let body = message.body();
        // Object events carry (kind, detail1, detail2, data, properties).
        let object_event = body.deserialize::<(
            String,
            i32,
            i32,
            zbus::zvariant::OwnedValue,
            HashMap<String, zbus::zvariant::OwnedValue>,
        )>();
        let kind = object_event.as_ref().map(|e| e.0.as_str()).unwrap_or("");
        let meaning = meaning(member.as_deref().unwrap_or(""), kind);
        // A move leaves what is read per node as it was.
        if meaning != Meaning::Moved {
            self.dirty.lock().unwrap().insert(id, count);
        }
        self.marks.lock().unwrap().mark(
            meaning,
            sender.as_str(),
            id,
            count,
            message.recv_position(),
        );
        let Ok((kind, detail1, _, data, _)) = object_event else {
            return;
        };
        match member.as_deref() {
            Some("StateChanged") if kind == "focused" && detail1 == 1 => {
                self.focus.send_replace((count, id));
            }
            Some("Announcement") => {
                let Ok(text) = String::try_from(data) else {
                    return;
                };
                self.announcements
                    .lock()
                    .unwrap()
                    .push(sender.as_str(), text);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reader_gets_every_announcement_once() {
        let mut all = Announcements::default();
        let (mut one, mut other) = (AnnouncementsRead::default(), AnnouncementsRead::default());
        all.push(":1.5", "Saved".into());
        assert_eq!(all.unread(":1.5", &mut one), ["Saved"]);
        all.push(":1.5", "Copied".into());
        // One reader's read takes nothing from the other's.
        assert_eq!(all.unread(":1.5", &mut other), ["Saved", "Copied"]);
        assert_eq!(all.unread(":1.5", &mut one), ["Copied"]);
        assert!(all.unread(":1.5", &mut one).is_empty());
        assert!(all.unread(":1.6", &mut one).is_empty());
        // A reader that fell behind gets what is still kept.
        for i in 0..ANNOUNCEMENTS_KEPT + 3 {
            all.push(":1.5", format!("n{i}"));
        }
        let late = all.unread(":1.5", &mut other);
        assert_eq!(late.len(), ANNOUNCEMENTS_KEPT);
        assert_eq!(late[0], "n3");
    }
}
