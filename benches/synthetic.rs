//! A synthetic AT-SPI application for benchmarks: a tree of any size (no real
//! app has 10,000 elements) served on a real accessibility bus, registered
//! with the real registry, answering what toolkits answer, Cache included.

use std::collections::HashMap;

use atspi::{CacheItem, Interface, InterfaceSet, ObjectRef, ObjectRefOwned, Role, State, StateSet};
use futures_util::StreamExt;
use zbus::message::Type;
use zbus::zvariant::{ObjectPath, OwnedValue, Value};

const ROOT: &str = "/org/a11y/atspi/accessible/root";
/// Children per node: a balanced tree about four levels deep for 10,000 nodes.
const FANOUT: usize = 10;

/// The served tree: node 0 is the frame; node i's children are 10i+1..=10i+10.
pub struct Synthetic {
    pub nodes: usize,
    name: String,
}

impl Synthetic {
    fn path(i: usize) -> String {
        format!("/org/a11y/atspi/accessible/{i}")
    }

    fn object(&self, i: Option<usize>) -> ObjectRefOwned {
        let path = i.map(Self::path).unwrap_or_else(|| ROOT.to_string());
        ObjectRef::new_owned(
            zbus::names::UniqueName::try_from(self.name.clone()).unwrap(),
            ObjectPath::try_from(path).unwrap(),
        )
    }

    fn children(&self, i: usize) -> std::ops::Range<usize> {
        let first = (FANOUT * i + 1).min(self.nodes);
        let end = (FANOUT * i + FANOUT + 1).min(self.nodes);
        first..end
    }

    fn parent(&self, i: usize) -> Option<usize> {
        (i > 0).then(|| (i - 1) / FANOUT)
    }

    fn leaf(&self, i: usize) -> bool {
        self.children(i).is_empty()
    }

    fn role(&self, i: Option<usize>) -> Role {
        match i {
            None => Role::Application,
            Some(0) => Role::Frame,
            Some(i) if self.leaf(i) => Role::Button,
            Some(_) => Role::Panel,
        }
    }

    fn ifaces(&self, i: Option<usize>) -> InterfaceSet {
        let mut set = InterfaceSet::new(Interface::Accessible);
        if let Some(i) = i {
            set.insert(Interface::Component);
            if self.leaf(i) {
                set.insert(Interface::Action);
            }
        }
        set
    }

    fn states(&self) -> StateSet {
        let mut s = StateSet::new(State::Visible);
        s.insert(State::Showing);
        s.insert(State::Enabled);
        s.insert(State::Sensitive);
        s
    }

    fn name_of(&self, i: Option<usize>) -> String {
        match i {
            None => "synthetic".into(),
            Some(0) => "Synthetic".into(),
            Some(i) if self.leaf(i) => format!("Button {i}"),
            Some(_) => String::new(),
        }
    }

    fn item(&self, i: usize) -> CacheItem {
        CacheItem {
            object: self.object(Some(i)),
            app: self.object(None),
            parent: self.object(self.parent(i)),
            index: match self.parent(i) {
                Some(p) => (i - self.children(p).start) as i32,
                None => 0,
            },
            children: self.children(i).len() as i32,
            ifaces: self.ifaces(Some(i)),
            short_name: self.name_of(Some(i)),
            role: self.role(Some(i)),
            name: String::new(),
            states: self.states(),
        }
    }

    /// Where a node is drawn: rows of 20 points, laid out by index.
    fn extents(&self, i: usize) -> (i32, i32, i32, i32) {
        ((i % 40) as i32 * 30, (i / 40) as i32 * 20, 28, 18)
    }
}

/// Serve a tree of `nodes` on the accessibility bus and register it; the
/// returned connection's pid is this process's.
pub async fn serve(a11y_address: &str, nodes: usize) -> zbus::Connection {
    let conn = zbus::connection::Builder::address(a11y_address)
        .expect("address")
        .build()
        .await
        .expect("connect the synthetic app");
    let app = std::sync::Arc::new(Synthetic {
        nodes,
        name: conn.unique_name().expect("unique name").to_string(),
    });
    let mut calls = zbus::MessageStream::from(&conn);
    let server = conn.clone();
    tokio::spawn(async move {
        while let Some(Ok(msg)) = calls.next().await {
            if msg.message_type() == Type::MethodCall {
                let (conn, app) = (server.clone(), app.clone());
                tokio::spawn(async move { answer(&conn, &app, &msg).await });
            }
        }
    });
    let root = ObjectRef::new_owned(
        conn.unique_name().unwrap().clone(),
        ObjectPath::try_from(ROOT).unwrap(),
    );
    conn.call_method(
        Some("org.a11y.atspi.Registry"),
        ROOT,
        Some("org.a11y.atspi.Socket"),
        "Embed",
        &(root,),
    )
    .await
    .expect("register with the registry");
    conn
}

async fn answer(conn: &zbus::Connection, app: &Synthetic, msg: &zbus::Message) {
    let header = msg.header();
    let path = header
        .path()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let member = header
        .member()
        .map(|m| m.as_str().to_string())
        .unwrap_or_default();
    let node: Option<usize> = path
        .strip_prefix("/org/a11y/atspi/accessible/")
        .and_then(|n| n.parse().ok())
        .filter(|n| *n < app.nodes);
    let is_root = path == ROOT;
    // A caller that went away gets no answer; nothing else to do then.
    let _ = match (member.as_str(), node, is_root) {
        ("GetItems", _, _) if path == "/org/a11y/atspi/cache" => {
            let items: Vec<CacheItem> = (0..app.nodes).map(|i| app.item(i)).collect();
            conn.reply(&header, &(items,)).await
        }
        ("GetRole", n, true) | ("GetRole", n @ Some(_), _) => {
            conn.reply(&header, &(app.role(n) as u32,)).await
        }
        ("GetChildren", _, true) => conn.reply(&header, &(vec![app.object(Some(0))],)).await,
        ("GetChildren", Some(i), _) => {
            let kids: Vec<ObjectRefOwned> = app.children(i).map(|c| app.object(Some(c))).collect();
            conn.reply(&header, &(kids,)).await
        }
        ("GetState", _, _) => conn.reply(&header, &(app.states(),)).await,
        ("GetInterfaces", n, _) => conn.reply(&header, &(app.ifaces(n),)).await,
        ("GetAttributes", _, _) => {
            let attrs: HashMap<String, String> = [("toolkit".to_string(), "synthetic".to_string())]
                .into_iter()
                .collect();
            conn.reply(&header, &(attrs,)).await
        }
        ("GetRelationSet", _, _) => {
            let none: Vec<(u32, Vec<ObjectRefOwned>)> = Vec::new();
            conn.reply(&header, &(none,)).await
        }
        ("GetExtents", Some(i), _) => conn.reply(&header, &(app.extents(i),)).await,
        ("GetActions", Some(_), _) => {
            let actions = vec![("click".to_string(), String::new(), String::new())];
            conn.reply(&header, &(actions,)).await
        }
        ("Get", n, _) => {
            let body = msg.body();
            let Ok((_, property)) = body.deserialize::<(String, String)>() else {
                return;
            };
            let value: OwnedValue = match property.as_str() {
                "Name" => Value::from(app.name_of(n)).try_into().unwrap(),
                "Description" | "AccessibleId" | "Locale" => {
                    Value::from(String::new()).try_into().unwrap()
                }
                "ChildCount" => {
                    let count = n.map(|i| app.children(i).len()).unwrap_or(1) as i32;
                    Value::from(count).try_into().unwrap()
                }
                _ => Value::from(String::new()).try_into().unwrap(),
            };
            conn.reply(&header, &(Value::from(value),)).await
        }
        _ => {
            conn.reply_error(
                &header,
                "org.freedesktop.DBus.Error.UnknownMethod",
                &(format!("no method {member} on {path}"),),
            )
            .await
        }
    };
}
