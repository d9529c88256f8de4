//! What AT-SPI tells of a node beyond the cache: lasting facts (key, actions,
//! attributes, relations, table place, value, text, selection), kept until an
//! event names the object when every call answered, and bounds, fetched on
//! each read unless the session knows they cannot have moved (layout moves
//! elements without an event).

use std::collections::HashMap;

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::action::ActionProxy;
use atspi::proxy::application::ApplicationProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::table::TableProxy;
use atspi::proxy::table_cell::TableCellProxy;
use atspi::proxy::text::TextProxy;
use atspi::proxy::value::ValueProxy;
use atspi::{CoordType, Interface, InterfaceSet, ObjectRefOwned, RelationType};

use super::objects::{object_proxy, ref_id};
use crate::model::{Annotations, Place, Range, Relations, Role, Sort};
use wayrig_host::Rect;

/// Facts of a node that change only when the app says so with an event.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Lasting {
    pub key: Option<String>,
    pub actions: Vec<String>,
    pub place: Place,
    pub relations: Relations,
    pub annotations: Annotations,
    pub sort: Option<Sort>,
    /// A finer role the app gave in "xml-roles" (landmarks, grids, switches).
    pub role: Option<Role>,
    /// Minimum, maximum, current value and step of a ranged element.
    pub range: Option<Range>,
    /// The text of a text field (not of a password field).
    pub value: Option<String>,
    /// Selected characters of a text field; the caret when empty.
    pub selection: Option<(i32, i32)>,
    /// The toolkit that made the object, as its attributes name it ("GTK").
    pub toolkit: Option<String>,
    /// The text an unnamed container shows itself, where the toolkit makes
    /// no objects of text (Firefox's paragraphs, statuses and cells).
    pub shown_text: Option<String>,
}

/// What of an object's text a read asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextWanted {
    None,
    /// A text field's text and selection (not a password field's text).
    Field {
        password: bool,
    },
    /// The text a container shows, without the marks of the objects in it.
    Shown,
}

/// An object's lasting facts as one read found them.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LastingRead {
    pub facts: Lasting,
    /// Every call was answered; a read with a call that failed (the object
    /// was gone for a moment, its app busy) may lack facts it has, so it
    /// serves that read only and is not kept.
    pub whole: bool,
    /// The object said it does not exist: an app rebuilding its tree
    /// (AccessKit) says so of objects it lists a moment later, so a read
    /// made again soon may find them.
    pub gone: bool,
}

/// A call the object did not answer: not an answer that it has no such fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unanswered {
    /// The object does not exist (now).
    Gone,
    /// Any other failure: an error, a timeout, a connection lost.
    Failed,
}

/// A call's answer: `Ok(None)` where the object says it has no such
/// property, method or interface (at-spi2 before 2.34 has no AccessibleId,
/// GDBus says "invalid args" for a property it lacks), `Err` where it did
/// not answer.
pub(super) fn answer<T>(reply: zbus::Result<T>) -> Result<Option<T>, Unanswered> {
    const LACKED: [&str; 5] = [
        "org.freedesktop.DBus.Error.UnknownMethod",
        "org.freedesktop.DBus.Error.UnknownProperty",
        "org.freedesktop.DBus.Error.UnknownInterface",
        "org.freedesktop.DBus.Error.InvalidArgs",
        "org.freedesktop.DBus.Error.NotSupported",
    ];
    use zbus::DBusError;
    let refused = |name: &str| match name {
        lacked if LACKED.contains(&lacked) => Ok(None),
        "org.freedesktop.DBus.Error.UnknownObject" => Err(Unanswered::Gone),
        _ => Err(Unanswered::Failed),
    };
    match reply {
        Ok(value) => Ok(Some(value)),
        Err(zbus::Error::MethodError(name, _, _)) => refused(name.as_str()),
        Err(zbus::Error::FDO(e)) => refused(e.name().as_str()),
        Err(_) => Err(Unanswered::Failed),
    }
}

/// A proxy for one of the object's interfaces (building it makes no call).
async fn proxy_for<P>(conn: &zbus::Connection, obj: &ObjectRefOwned) -> Result<P, Unanswered>
where
    P: zbus::proxy::Defaults + From<zbus::Proxy<'static>>,
{
    object_proxy::<P>(conn, obj)
        .await
        .map_err(|_| Unanswered::Failed)
}

/// Read the lasting facts of one object, its calls side by side.
pub async fn lasting(
    conn: &zbus::Connection,
    obj: &ObjectRefOwned,
    ifaces: InterfaceSet,
    wanted: TextWanted,
) -> LastingRead {
    // One proxy serves the three Accessible calls.
    let accessible = proxy_for::<AccessibleProxy>(conn, obj).await;
    let accessible = accessible.as_ref().map_err(|e| *e);
    let (key, attributes, relations, actions, table, cell, range, text, shown_text) = tokio::join!(
        async {
            let id = answer(accessible?.accessible_id().await)?;
            Ok::<_, Unanswered>(id.filter(|id| !id.is_empty()))
        },
        async { answer(accessible?.get_attributes().await) },
        async { answer(accessible?.get_relation_set().await) },
        async {
            if !ifaces.contains(Interface::Action) {
                return Ok::<_, Unanswered>(None);
            }
            let p = proxy_for::<ActionProxy>(conn, obj).await?;
            answer(p.get_actions().await)
        },
        async {
            if !ifaces.contains(Interface::Table) {
                return Ok::<_, Unanswered>(None);
            }
            let p = proxy_for::<TableProxy>(conn, obj).await?;
            let (rows, cols) = tokio::join!(p.n_rows(), p.n_columns());
            Ok(answer(rows)?.zip(answer(cols)?))
        },
        async {
            if !ifaces.contains(Interface::TableCell) {
                return Ok::<_, Unanswered>(None);
            }
            let p = proxy_for::<TableCellProxy>(conn, obj).await?;
            Ok(match answer(p.get_row_column_span().await)? {
                Some((true, row, col, row_span, col_span)) => Some((row, col, row_span, col_span)),
                _ => None,
            })
        },
        async {
            if ifaces.contains(Interface::Value) {
                value_range(conn, obj).await
            } else {
                Ok(None)
            }
        },
        async {
            match wanted {
                TextWanted::Field { password } if ifaces.contains(Interface::Text) => {
                    text_and_selection(conn, obj, password).await
                }
                _ => Ok((None, None)),
            }
        },
        async {
            if wanted != TextWanted::Shown || !ifaces.contains(Interface::Text) {
                return Ok::<_, Unanswered>(None);
            }
            let p = proxy_for::<TextProxy>(conn, obj).await?;
            let Some(text) = answer(p.get_text(0, -1).await)? else {
                return Ok::<_, Unanswered>(None);
            };
            let text = text.replace('\u{fffc}', " ");
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            Ok((!text.is_empty()).then_some(text))
        },
    );
    let failures = [
        key.as_ref().err(),
        attributes.as_ref().err(),
        relations.as_ref().err(),
        actions.as_ref().err(),
        table.as_ref().err(),
        cell.as_ref().err(),
        range.as_ref().err(),
        text.as_ref().err(),
        shown_text.as_ref().err(),
    ];
    let whole = failures.iter().all(Option::is_none);
    let gone = failures.contains(&Some(&Unanswered::Gone));
    let (key, attributes, relations, actions) = (
        key.ok().flatten(),
        attributes.ok().flatten(),
        relations.ok().flatten(),
        actions.ok().flatten(),
    );
    let (table, cell, range, shown_text) = (
        table.ok().flatten(),
        cell.ok().flatten(),
        range.ok().flatten(),
        shown_text.ok().flatten(),
    );
    let text = text.unwrap_or((None, None));
    let attributes = attributes.unwrap_or_default();
    let mut facts = from_attributes(&attributes);
    facts.key = key;
    facts.range = range;
    (facts.value, facts.selection) = text;
    facts.shown_text = shown_text;
    if let Some(actions) = actions {
        // The first action's binding, as GTK 3 gives it ("mnemonic;path;accelerator").
        if facts.annotations.key_shortcuts.is_none() {
            facts.annotations.key_shortcuts = actions
                .first()
                .and_then(|a| accelerator_words(&a.keybinding));
        }
        facts.actions = actions.into_iter().map(|a| a.name).collect();
    }
    if let Some((rows, cols)) = table {
        facts.place.row_count = facts.place.row_count.or(Some(rows));
        facts.place.col_count = facts.place.col_count.or(Some(cols));
    }
    if let Some((row, col, row_span, col_span)) = cell {
        // AT-SPI counts from 0; the model, as ARIA, from 1.
        facts.place.row_index = facts.place.row_index.or(Some(row + 1));
        facts.place.col_index = facts.place.col_index.or(Some(col + 1));
        facts.place.row_span = facts.place.row_span.or((row_span > 1).then_some(row_span));
        facts.place.col_span = facts.place.col_span.or((col_span > 1).then_some(col_span));
    }
    for (kind, targets) in relations.unwrap_or_default() {
        let ids = targets.iter().filter_map(ref_id);
        match kind {
            RelationType::ControllerFor => facts.relations.controls.extend(ids),
            RelationType::DescribedBy => facts.relations.described_by.extend(ids),
            RelationType::ErrorMessage => facts.relations.error_message.extend(ids),
            RelationType::LabelledBy => facts.relations.labelled_by.extend(ids),
            _ => {}
        }
    }
    LastingRead { facts, whole, gone }
}

/// The facts toolkits put in object attributes (the names browsers and
/// toolkits use for ARIA's properties).
pub fn from_attributes(a: &HashMap<String, String>) -> Lasting {
    let text = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| a.get(*n))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    let number = |names: &[&str]| text(names).and_then(|v| v.trim().parse::<i32>().ok());
    let sort = text(&["sort"]).and_then(|s| match s.as_str() {
        "ascending" => Some(Sort::Ascending),
        "descending" => Some(Sort::Descending),
        "other" => Some(Sort::Other),
        _ => None,
    });
    Lasting {
        place: Place {
            level: number(&["level"]),
            pos_in_set: number(&["posinset"]),
            set_size: number(&["setsize"]),
            row_count: number(&["rowcount"]),
            col_count: number(&["colcount"]),
            row_index: number(&["rowindex"]),
            col_index: number(&["colindex"]),
            row_span: number(&["rowspan"]).filter(|n| *n > 1),
            col_span: number(&["colspan"]).filter(|n| *n > 1),
        },
        annotations: Annotations {
            placeholder: text(&["placeholder-text", "placeholder"]),
            current: text(&["current"]).filter(|c| c != "false"),
            auto_complete: text(&["autocomplete"]).filter(|c| c != "none"),
            role_description: text(&["roledescription"]),
            has_popup: text(&["haspopup"]).filter(|c| c != "false").map(|c| {
                if c == "true" {
                    "menu".to_string()
                } else {
                    c
                }
            }),
            key_shortcuts: text(&["keyshortcuts"]),
        },
        sort,
        role: text(&["xml-roles"]).and_then(|r| xml_role(&r)),
        toolkit: text(&["toolkit"]),
        ..Lasting::default()
    }
}

/// The model's role for an ARIA role name a toolkit passed on in "xml-roles",
/// where AT-SPI's own role is coarser.
fn xml_role(roles: &str) -> Option<Role> {
    roles.split_whitespace().find_map(|r| {
        Some(match r {
            "navigation" => Role::Navigation,
            "main" => Role::Main,
            "banner" => Role::Banner,
            "contentinfo" => Role::ContentInfo,
            "complementary" => Role::Complementary,
            "search" => Role::Search,
            "region" => Role::Region,
            "grid" => Role::Grid,
            "treegrid" => Role::TreeGrid,
            "switch" => Role::Switch,
            "meter" => Role::Meter,
            "separator" => Role::Separator,
            "radiogroup" => Role::RadioGroup,
            "searchbox" => Role::SearchInput,
            "alertdialog" => Role::AlertDialog,
            "alert" => Role::Alert,
            "tabpanel" => Role::TabPanel,
            _ => return None,
        })
    })
}

/// An accelerator as a toolkit's key binding gives it ("<Control><Shift>n",
/// or GTK 3's "n;<Alt>f:n;<Control>n") in the words menus show: "Ctrl+Shift+N".
pub fn accelerator_words(binding: &str) -> Option<String> {
    let accel = binding.rsplit(';').next()?.trim();
    if accel.is_empty() {
        return None;
    }
    let mut words = Vec::new();
    let mut rest = accel;
    while let Some(stripped) = rest.strip_prefix('<') {
        let (modifier, after) = stripped.split_once('>')?;
        words.push(match modifier.to_ascii_lowercase().as_str() {
            "control" | "ctrl" | "primary" => "Ctrl".to_string(),
            "shift" => "Shift".to_string(),
            "alt" | "mod1" => "Alt".to_string(),
            "super" | "mod4" => "Super".to_string(),
            "meta" => "Meta".to_string(),
            other => other.to_string(),
        });
        rest = after;
    }
    if rest.is_empty() {
        return None;
    }
    let mut chars = rest.chars();
    let key = match (chars.next(), chars.next()) {
        (Some(c), None) => c.to_uppercase().to_string(),
        _ => rest.to_string(),
    };
    words.push(key);
    Some(words.join("+"))
}

/// Where the object is, relative to its window (`None` when it reports no
/// size); `coords` as `coords_of` says the object's app answers right.
pub async fn bounds(
    conn: &zbus::Connection,
    obj: &ObjectRefOwned,
    ifaces: InterfaceSet,
    coords: CoordType,
) -> Option<Rect> {
    if ifaces.contains(Interface::Component) {
        extents(conn, obj, coords).await
    } else {
        None
    }
}

/// The coordinates to ask an app's objects' places in, to have them
/// relative to its window: the window's, except from Qt 5, whose window
/// coordinates are wrong (its x given for y, heights off: kcalc's "7" at
/// (21, 21, 42, 139) where it shows at (21, 133, 42, 27)), while its screen
/// coordinates are its window's, as Qt on Wayland places its window at the
/// origin. `None` when the app did not answer (busy as it starts): it is
/// asked again, not taken for an app that is not Qt 5.
pub async fn coords_of(conn: &zbus::Connection, bus_name: &str) -> Option<CoordType> {
    let (Ok(name), Ok(path)) = (
        zbus::names::UniqueName::try_from(bus_name.to_string()),
        zbus::zvariant::ObjectPath::try_from("/org/a11y/atspi/accessible/root"),
    ) else {
        // No app can have such a name: nothing to ask.
        return Some(CoordType::Window);
    };
    let root = atspi::ObjectRef::new_owned(name, path);
    let app = proxy_for::<ApplicationProxy>(conn, &root).await.ok()?;
    let (toolkit, version) = tokio::join!(app.toolkit_name(), app.version());
    let qt5 = match answer(toolkit).ok()? {
        Some(toolkit) if toolkit == "Qt" => {
            answer(version).ok()?.is_some_and(|v| v.starts_with("5."))
        }
        _ => false,
    };
    Some(if qt5 {
        CoordType::Screen
    } else {
        CoordType::Window
    })
}

async fn value_range(
    conn: &zbus::Connection,
    obj: &ObjectRefOwned,
) -> Result<Option<Range>, Unanswered> {
    let p = proxy_for::<ValueProxy>(conn, obj).await?;
    let (min, max, now, step) = tokio::join!(
        p.minimum_value(),
        p.maximum_value(),
        p.current_value(),
        p.minimum_increment()
    );
    let (min, max, now, step) = (answer(min)?, answer(max)?, answer(now)?, answer(step)?);
    Ok(min.zip(max).zip(now).map(|((min, max), now)| Range {
        min,
        max,
        now,
        step: step.unwrap_or(0.0),
    }))
}

/// A text field's text (left out for passwords) and its selection or caret.
async fn text_and_selection(
    conn: &zbus::Connection,
    obj: &ObjectRefOwned,
    password: bool,
) -> Result<(Option<String>, Option<(i32, i32)>), Unanswered> {
    let p = proxy_for::<TextProxy>(conn, obj).await?;
    // GTK 4.8 answers GetText(0, -1) with "": ask for the character count.
    let Some(count) = answer(p.character_count().await)? else {
        return Ok((None, None));
    };
    let (text, selections, caret) = tokio::join!(
        async {
            if password {
                Ok(None)
            } else {
                answer(p.get_text(0, count).await)
            }
        },
        p.get_n_selections(),
        p.caret_offset()
    );
    let selection = match answer(selections)? {
        Some(n) if n > 0 => answer(p.get_selection(0).await)?,
        _ => answer(caret)?.map(|c| (c, c)),
    };
    Ok((text?, selection))
}

async fn extents(conn: &zbus::Connection, obj: &ObjectRefOwned, coords: CoordType) -> Option<Rect> {
    let proxy = object_proxy::<ComponentProxy>(conn, obj).await.ok()?;
    let (x, y, w, h) = proxy.get_extents(coords).await.ok()?;
    laid_out(x, y, w, h)
}

/// Where an element an app reports lies, if it was laid out: no size, or
/// a place no screen reaches, is nowhere (GTK 4 reports 0x0 on a hidden
/// page; GTK 3 i32::MIN in a closed menu, and just above it for a page a
/// stack slides in). Every sum of places and sizes then fits an i32.
fn laid_out(x: i32, y: i32, w: i32, h: i32) -> Option<Rect> {
    const FAR: i32 = 1 << 24;
    let reachable = |v: i32| (-FAR..=FAR).contains(&v);
    (w > 0 && h > 0 && [x, y, w, h].into_iter().all(reachable)).then(|| Rect::new(x, y, w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_no_screen_reaches_are_nowhere() {
        assert_eq!(laid_out(10, 20, 30, 40), Some(Rect::new(10, 20, 30, 40)));
        assert_eq!(laid_out(-5, -5, 30, 40), Some(Rect::new(-5, -5, 30, 40)));
        for (x, y, w, h) in [
            (0, 0, 0, 10),
            (0, 0, 10, -1),
            (i32::MIN, i32::MIN, 10, 10),
            (i32::MAX - 5, 0, 10, 10),
            (0, i32::MAX, 1, 1),
            (0, 0, i32::MAX, 10),
        ] {
            assert_eq!(laid_out(x, y, w, h), None, "{x} {y} {w} {h}");
        }
    }

    #[test]
    fn accelerators_read_as_menus_write_them() {
        assert_eq!(accelerator_words("<Control>o").as_deref(), Some("Ctrl+O"));
        assert_eq!(
            accelerator_words("n;<Alt>f:n;<Control><Shift>n").as_deref(),
            Some("Ctrl+Shift+N")
        );
        assert_eq!(accelerator_words("<Primary>F5").as_deref(), Some("Ctrl+F5"));
        assert_eq!(accelerator_words("o;;").as_deref(), None);
        assert_eq!(accelerator_words("").as_deref(), None);
    }

    #[test]
    fn attributes_give_place_and_annotations() {
        let a: HashMap<String, String> = [
            ("level", "2"),
            ("posinset", "3"),
            ("setsize", "7"),
            ("colspan", "1"),
            ("rowspan", "2"),
            ("placeholder-text", "Search"),
            ("haspopup", "true"),
            ("current", "page"),
            ("autocomplete", "list"),
            ("sort", "ascending"),
            ("toolkit", "GTK"),
            ("xml-roles", "navigation"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let f = from_attributes(&a);
        assert_eq!(f.place.level, Some(2));
        assert_eq!(f.place.pos_in_set, Some(3));
        assert_eq!(f.place.set_size, Some(7));
        assert_eq!(f.place.col_span, None, "a span of one is no span");
        assert_eq!(f.place.row_span, Some(2));
        assert_eq!(f.annotations.placeholder.as_deref(), Some("Search"));
        assert_eq!(f.annotations.has_popup.as_deref(), Some("menu"));
        assert_eq!(f.annotations.current.as_deref(), Some("page"));
        assert_eq!(f.annotations.auto_complete.as_deref(), Some("list"));
        assert_eq!(f.sort, Some(Sort::Ascending));
        assert_eq!(f.role, Some(Role::Navigation));
        assert_eq!(f.toolkit.as_deref(), Some("GTK"));
        let none = from_attributes(&HashMap::new());
        assert_eq!(none, Lasting::default());
    }
}

#[cfg(test)]
mod served {
    //! `lasting` against objects served over a peer-to-peer D-Bus connection,
    //! answering as toolkits do.

    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use zbus::zvariant::OwnedObjectPath;

    const FLAKY: &str = "/org/a11y/atspi/accessible/1";
    const OLDER: &str = "/org/a11y/atspi/accessible/2";

    /// Relations as AT-SPI sends them: a type and the objects it names.
    type RelationSet = Vec<(u32, Vec<(String, OwnedObjectPath)>)>;

    /// An object whose key call fails its first `failures` times, as
    /// AccessKit answers for a node missing from its tree for a moment.
    struct Flaky {
        failures: AtomicU32,
    }

    #[zbus::interface(name = "org.a11y.atspi.Accessible")]
    impl Flaky {
        #[zbus(property)]
        fn accessible_id(&self) -> zbus::fdo::Result<String> {
            if self.failures.load(Ordering::SeqCst) > 0 {
                self.failures.fetch_sub(1, Ordering::SeqCst);
                return Err(zbus::fdo::Error::UnknownObject(FLAKY.into()));
            }
            Ok("press".into())
        }

        fn get_attributes(&self) -> HashMap<String, String> {
            HashMap::from([("toolkit".into(), "AccessKit".into())])
        }

        fn get_relation_set(&self) -> RelationSet {
            Vec::new()
        }
    }

    /// An object of an at-spi2 older than AccessibleId: it has no such property.
    struct Older;

    #[zbus::interface(name = "org.a11y.atspi.Accessible")]
    impl Older {
        fn get_attributes(&self) -> HashMap<String, String> {
            HashMap::from([("toolkit".into(), "GTK".into())])
        }

        fn get_relation_set(&self) -> RelationSet {
            Vec::new()
        }
    }

    /// A client connection to a peer serving a `Flaky` failing `failures` times and an `Older`.
    async fn served(failures: u32) -> (zbus::Connection, zbus::Connection) {
        let (theirs, ours) = tokio::net::UnixStream::pair().unwrap();
        let app = zbus::connection::Builder::unix_stream(theirs)
            .server(zbus::Guid::generate())
            .unwrap()
            .p2p()
            .serve_at(
                FLAKY,
                Flaky {
                    failures: AtomicU32::new(failures),
                },
            )
            .unwrap()
            .serve_at(OLDER, Older)
            .unwrap()
            .build();
        let reader = zbus::connection::Builder::unix_stream(ours).p2p().build();
        let (app, reader) = tokio::join!(app, reader);
        (app.unwrap(), reader.unwrap())
    }

    fn object(path: &str) -> ObjectRefOwned {
        atspi::ObjectRef::new_owned(
            zbus::names::UniqueName::try_from(":1.1").unwrap(),
            zbus::zvariant::ObjectPath::try_from(path.to_string()).unwrap(),
        )
    }

    async fn read(conn: &zbus::Connection, path: &str) -> LastingRead {
        let ifaces = InterfaceSet::new(Interface::Accessible);
        lasting(conn, &object(path), ifaces, TextWanted::None).await
    }

    #[tokio::test]
    async fn a_read_whose_key_call_failed_is_not_whole_and_the_next_finds_the_key() {
        let (_app, conn) = served(1).await;
        let first = read(&conn, FLAKY).await;
        assert!(!first.whole, "a failed call must not pass for no key");
        assert!(first.gone, "the object said it was not there");
        assert_eq!(first.facts.key, None);
        assert_eq!(first.facts.toolkit.as_deref(), Some("AccessKit"));
        let again = read(&conn, FLAKY).await;
        assert!(again.whole && !again.gone);
        assert_eq!(again.facts.key.as_deref(), Some("press"));
    }

    #[tokio::test]
    async fn an_object_without_the_key_property_is_read_whole_without_a_key() {
        let (_app, conn) = served(0).await;
        let read = read(&conn, OLDER).await;
        assert!(read.whole, "no such property is an answer: {read:?}");
        assert_eq!(read.facts.key, None);
        assert_eq!(read.facts.toolkit.as_deref(), Some("GTK"));
    }
}
