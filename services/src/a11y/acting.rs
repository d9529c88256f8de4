//! Acting through an object's interfaces: what lies at a point, focus,
//! scrolling, named actions, values, text and selection, by node id.

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::action::ActionProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::editable_text::EditableTextProxy;
use atspi::proxy::selection::SelectionProxy;
use atspi::proxy::text::TextProxy;
use atspi::proxy::value::ValueProxy;
use atspi::{CoordType, Interface, InterfaceSet, ObjectRefOwned, ScrollType};

use super::objects::{object_proxy, ref_id};
use super::{call_failed, A11y};
use crate::access::Picked;
use crate::model::{Error, Range, Role};

/// The interfaces of an object, as the session asks of them.
pub(super) fn interfaces(set: InterfaceSet) -> crate::access::Interfaces {
    crate::access::Interfaces {
        action: set.contains(Interface::Action),
        component: set.contains(Interface::Component),
        editable_text: set.contains(Interface::EditableText),
        selection: set.contains(Interface::Selection),
        text: set.contains(Interface::Text),
        value: set.contains(Interface::Value),
    }
}

/// The reference names an object, not AT-SPI's null.
fn is_object(r: &ObjectRefOwned) -> bool {
    !r.is_null() && r.path_as_str() != "/org/a11y/atspi/null" && ref_id(r).is_some()
}

fn picked(r: &ObjectRefOwned) -> Option<Picked> {
    let bus_name = r.name_as_str()?.to_string();
    is_object(r).then(|| Picked {
        bus_name,
        path: r.path_as_str().to_string(),
    })
}

impl A11y {
    /// The object and interfaces behind a node id read before.
    pub(super) fn object(&self, id: u64) -> Option<(ObjectRefOwned, InterfaceSet)> {
        self.objects.lock().unwrap().get(&id).cloned()
    }

    /// A proxy of interface `P` of node `id`'s object, which must offer
    /// `interface`.
    async fn proxy<P>(&self, id: u64, interface: Interface) -> Result<P, Error>
    where
        P: zbus::proxy::Defaults + From<zbus::Proxy<'static>>,
    {
        let (obj, ifaces) = self.object(id).ok_or_else(|| {
            Error::StaleElement(format!("element {id} is stale: read the tree again"))
        })?;
        if !ifaces.contains(interface) {
            return Err(Error::Unsupported(format!(
                "element {id} has no {interface:?} interface"
            )));
        }
        object_proxy::<P>(&self.conn, &obj).await
    }

    pub(super) async fn object_at_point(
        &self,
        within: u64,
        x: i32,
        y: i32,
    ) -> Result<Option<Picked>, Error> {
        let (obj, ifaces) = self
            .object(within)
            .ok_or_else(|| Error::NoElement(format!("{within} was never read")))?;
        if !ifaces.contains(Interface::Component) {
            return Err(Error::Unsupported(format!(
                "element {within} cannot tell what lies at a point"
            )));
        }
        let proxy = object_proxy::<ComponentProxy>(&self.conn, &obj).await?;
        let coords = self.coords_for(&obj).await;
        let hit = proxy
            .get_accessible_at_point(x, y, coords)
            .await
            .map_err(|e| call_failed("asking what lies at a point", e))?;
        Ok(picked(&hit))
    }

    /// The coordinates the app of `obj` is asked places in (`coords_of`),
    /// learnt once per app that answered; an app that did not is asked in
    /// its window's this time, and asked again next time (a few times).
    pub(super) async fn coords_for(&self, obj: &ObjectRefOwned) -> CoordType {
        let Some(name) = obj.name_as_str() else {
            return CoordType::Window;
        };
        if let Some(coords) = self.coords.lock().unwrap().get(name) {
            return *coords;
        }
        let coords = match super::facts::coords_of(&self.conn, name).await {
            Some(coords) => coords,
            None if self.asked_again.gives_up(name, "coordinates") => CoordType::Window,
            None => return CoordType::Window,
        };
        self.coords.lock().unwrap().insert(name.to_string(), coords);
        coords
    }

    async fn picked_proxy(&self, picked: &Picked) -> Option<AccessibleProxy<'static>> {
        AccessibleProxy::builder(&self.conn)
            .destination(picked.bus_name.clone())
            .and_then(|b| b.path(picked.path.clone()))
            .ok()?
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .ok()
    }

    pub(super) async fn parent_of_picked(&self, child: &Picked) -> Option<Picked> {
        let proxy = self.picked_proxy(child).await?;
        picked(&proxy.parent().await.ok()?)
    }

    pub(super) async fn role_and_name_of_picked(&self, picked: &Picked) -> Option<(Role, String)> {
        let proxy = self.picked_proxy(picked).await?;
        let (role, states, name) = tokio::join!(proxy.get_role(), proxy.get_state(), proxy.name());
        Some((super::mapping::role(role.ok()?, &states.ok()?), name.ok()?))
    }

    pub(super) async fn actions_of(&self, id: u64) -> Result<Vec<String>, Error> {
        let proxy = self.proxy::<ActionProxy>(id, Interface::Action).await?;
        let count = proxy
            .n_actions()
            .await
            .map_err(|e| call_failed("reading the actions", e))?;
        let mut names = Vec::new();
        for i in 0..count {
            names.push(proxy.get_name(i).await.unwrap_or_default());
        }
        Ok(names)
    }

    pub(super) async fn do_action_at(&self, id: u64, index: usize) -> Result<bool, Error> {
        let proxy = self.proxy::<ActionProxy>(id, Interface::Action).await?;
        let index = i32::try_from(index).unwrap_or(i32::MAX);
        Ok(proxy.do_action(index).await.unwrap_or(false))
    }

    pub(super) async fn value_of(&self, id: u64) -> Result<Range, Error> {
        let proxy = self.proxy::<ValueProxy>(id, Interface::Value).await?;
        let err = |e| call_failed("reading the value", e);
        Ok(Range {
            now: proxy.current_value().await.map_err(err)?,
            min: proxy.minimum_value().await.map_err(err)?,
            max: proxy.maximum_value().await.map_err(err)?,
            step: proxy
                .minimum_increment()
                .await
                .ok()
                .filter(|s| *s > 0.0)
                .unwrap_or(0.0),
        })
    }

    pub(super) async fn put_value(&self, id: u64, value: f64) -> Result<(), Error> {
        let proxy = self.proxy::<ValueProxy>(id, Interface::Value).await?;
        proxy
            .set_current_value(value)
            .await
            .map_err(|e| call_failed("setting the value", e))
    }

    /// Replace the text whole; whether it now reads as `text`.
    pub(super) async fn put_text(&self, id: u64, text: &str) -> Result<bool, Error> {
        let proxy = self
            .proxy::<EditableTextProxy>(id, Interface::EditableText)
            .await?;
        if !proxy.set_text_contents(text).await.unwrap_or(false) {
            return Ok(false);
        }
        // Firefox answers yes and changes nothing: the text is read back.
        let read = self.proxy::<TextProxy>(id, Interface::Text).await?;
        // GTK 4.8 answers GetText(0, -1) with "": ask for the count first.
        let count = read.character_count().await.unwrap_or(-1);
        let now = read.get_text(0, count).await.unwrap_or_default();
        if now != text {
            tracing::debug!(id, "the app said it set the text, and it did not");
        }
        Ok(now == text)
    }

    pub(super) async fn length_of_text(&self, id: u64) -> Result<i32, Error> {
        let proxy = self.proxy::<TextProxy>(id, Interface::Text).await?;
        proxy
            .character_count()
            .await
            .map_err(|e| call_failed("reading the text's length", e))
    }

    /// Select characters `from..to`: the first selection moved where there
    /// is one, else one added.
    pub(super) async fn select_characters(
        &self,
        id: u64,
        from: i32,
        to: i32,
    ) -> Result<bool, Error> {
        let proxy = self.proxy::<TextProxy>(id, Interface::Text).await?;
        let set = match proxy.get_n_selections().await {
            Ok(n) if n > 0 => proxy.set_selection(0, from, to).await,
            _ => proxy.add_selection(from, to).await,
        };
        set.map_err(|e| call_failed("selecting text", e))
    }

    pub(super) async fn caret_of(&self, id: u64) -> Result<i32, Error> {
        let proxy = self.proxy::<TextProxy>(id, Interface::Text).await?;
        proxy
            .caret_offset()
            .await
            .map_err(|e| call_failed("reading the caret", e))
    }

    pub(super) async fn put_caret(&self, id: u64, at: i32) -> Result<bool, Error> {
        let proxy = self.proxy::<TextProxy>(id, Interface::Text).await?;
        proxy
            .set_caret_offset(at)
            .await
            .map_err(|e| call_failed("moving the caret", e))
    }

    pub(super) async fn ask_focus(&self, id: u64) -> Result<bool, Error> {
        let proxy = self
            .proxy::<ComponentProxy>(id, Interface::Component)
            .await?;
        Ok(proxy.grab_focus().await.unwrap_or(false))
    }

    pub(super) async fn ask_scroll(&self, id: u64) -> Result<bool, Error> {
        let proxy = self
            .proxy::<ComponentProxy>(id, Interface::Component)
            .await?;
        Ok(proxy.scroll_to(ScrollType::Anywhere).await.unwrap_or(false))
    }

    pub(super) async fn select_child_at(&self, id: u64, index: usize) -> Result<bool, Error> {
        let proxy = self
            .proxy::<SelectionProxy>(id, Interface::Selection)
            .await?;
        let index = i32::try_from(index).unwrap_or(i32::MAX);
        Ok(proxy.select_child(index).await.unwrap_or(false))
    }
}
