//! Location strategies turned into the session's `Query` (no matcher of the
//! face's own), element references, and the XML document `source` answers.
//!
//! Tags are the model's roles in camelCase (`button`, `textInput`); an
//! element's attributes are its name, key (`id`), value, states and rect.

use serde_json::Value;
use wayrig_host::WindowHandle;
use wayrig_services::{Node, Query, Role, Tree};

use crate::error::WdError;

/// The key a W3C element reference is sent under.
pub const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// An element as a reference names it: its window and its id there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ElementId {
    pub window: WindowHandle,
    pub node: u64,
}

impl ElementId {
    pub fn reference(&self) -> Value {
        serde_json::json!({ ELEMENT_KEY: self.to_string() })
    }

    pub fn parse(s: &str) -> Result<ElementId, WdError> {
        let stale = || {
            WdError::new(
                "no such element",
                format!("{s:?} names no element of Wayrig's"),
            )
        };
        let mut parts = s.split('.');
        let mut next = || parts.next().ok_or_else(stale);
        let (id, epoch, node) = (next()?, next()?, next()?);
        Ok(ElementId {
            window: WindowHandle {
                id: id.parse().map_err(|_| stale())?,
                epoch: epoch.parse().map_err(|_| stale())?,
            },
            node: node.parse().map_err(|_| stale())?,
        })
    }
}

impl std::fmt::Display for ElementId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.window.id, self.window.epoch, self.node)
    }
}

/// The tag of a role: its camelCase name.
pub fn tag(role: Role) -> String {
    match serde_json::to_value(role) {
        Ok(Value::String(s)) => s,
        _ => "unknown".into(),
    }
}

fn role_of(tag: &str) -> Result<Role, WdError> {
    serde_json::from_value(Value::String(tag.to_string())).map_err(|_| {
        WdError::new(
            "invalid selector",
            format!("{tag:?} is no role; tags are roles in camelCase, as button or textInput"),
        )
    })
}

/// The query a location strategy and its value make.
pub fn query(using: &str, value: &str) -> Result<Query, WdError> {
    let q = Query::default;
    Ok(match using {
        "accessibility id" | "name" => Query {
            name: Some(value.to_string()),
            ..q()
        },
        "id" => Query {
            key: Some(value.to_string()),
            ..q()
        },
        "tag name" => Query {
            role: Some(role_of(value)?),
            ..q()
        },
        "link text" => Query {
            role: Some(Role::Link),
            name: Some(value.to_string()),
            ..q()
        },
        "partial link text" => Query {
            role: Some(Role::Link),
            name_contains: Some(value.to_string()),
            ..q()
        },
        "css selector" => css(value)?,
        "xpath" => xpath(value)?,
        other => {
            return Err(WdError::invalid(format!(
                "unknown location strategy {other:?}; Wayrig takes accessibility id, name, id, \
                 tag name, link text, partial link text, css selector and xpath"
            )))
        }
    })
}

/// An attribute test, as CSS and XPath write them, applied to a query.
fn attribute(q: &mut Query, name: &str, value: &str, contains: bool) -> Result<(), WdError> {
    let v = Some(value.to_string());
    match (name, contains) {
        ("name", false) => q.name = v,
        ("name", true) => q.name_contains = v,
        ("id", false) | ("key", false) => q.key = v,
        ("label", false) => q.label = v,
        ("value", true) => q.value_contains = v,
        _ => {
            return Err(WdError::new(
                "invalid selector",
                format!(
                    "Wayrig selects on @name, @id, @label (exactly), and on @name and @value \
                     by contains(); not on {name}"
                ),
            ))
        }
    }
    Ok(())
}

/// The CSS selectors Selenium sends for its own strategies: `tag`, `#id`,
/// `[name="x"]`, `[id="x"]`, or a tag followed by one of those.
fn css(selector: &str) -> Result<Query, WdError> {
    let bad = || {
        WdError::new(
            "invalid selector",
            format!(
                "{selector:?}: Wayrig takes a tag, #id, [name=\"...\"] or [id=\"...\"], \
                 optionally after a tag"
            ),
        )
    };
    let s = selector.trim();
    let mut q = Query::default();
    let (tag_part, rest) = match s.find(['#', '[']) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    if !tag_part.is_empty() && tag_part != "*" {
        q.role = Some(role_of(tag_part)?);
    }
    if let Some(id) = rest.strip_prefix('#') {
        q.key = Some(id.replace('\\', ""));
    } else if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (name, value) = inner.split_once('=').ok_or_else(bad)?;
        attribute(
            &mut q,
            name.trim(),
            unquote(value.trim()).ok_or_else(bad)?,
            false,
        )?;
    } else if !rest.is_empty() {
        return Err(bad());
    }
    Ok(q)
}

/// XPath as desktop tests write it: `//tag` or `//*`, with predicates
/// `@attr='x'` or `contains(@attr, 'x')` joined by `and`.
fn xpath(path: &str) -> Result<Query, WdError> {
    let bad = || {
        WdError::new(
            "invalid selector",
            format!(
                "{path:?}: Wayrig takes //tag or //* with predicates @name='...', @id='...', \
                 @label='...' or contains(@name, '...'), joined by and"
            ),
        )
    };
    let s = path.trim().strip_prefix("//").ok_or_else(bad)?;
    let (tag_part, preds) = match s.find('[') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    if tag_part.contains(['/', '(', ')', '@']) {
        return Err(bad());
    }
    let mut q = Query::default();
    if tag_part != "*" {
        q.role = Some(role_of(tag_part)?);
    }
    let mut rest = preds;
    while !rest.is_empty() {
        let inner_end = rest.find(']').ok_or_else(bad)?;
        let inner = rest.strip_prefix('[').ok_or_else(bad)?[..inner_end - 1].trim();
        for test in inner.split(" and ") {
            let test = test.trim();
            if let Some(args) = test
                .strip_prefix("contains(")
                .and_then(|t| t.strip_suffix(')'))
            {
                let (name, value) = args.split_once(',').ok_or_else(bad)?;
                let name = name.trim().strip_prefix('@').ok_or_else(bad)?;
                attribute(&mut q, name, unquote(value.trim()).ok_or_else(bad)?, true)?;
            } else {
                let (name, value) = test.split_once('=').ok_or_else(bad)?;
                let name = name.trim().strip_prefix('@').ok_or_else(bad)?;
                attribute(&mut q, name, unquote(value.trim()).ok_or_else(bad)?, false)?;
            }
        }
        rest = &rest[inner_end + 1..];
    }
    Ok(q)
}

fn unquote(s: &str) -> Option<&str> {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| s.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
}

/// Shown: laid out inside the window and its scrolled views, on no hidden page.
pub fn displayed(node: &Node) -> bool {
    !wayrig_services::is_hidden(node) && !node.states.concealed
}

/// Whether `node` lies under `ancestor` in the tree.
pub fn within(tree: &Tree, node: &Node, ancestor: u64) -> bool {
    let mut at = node.parent;
    while let Some(id) = at {
        if id == ancestor {
            return true;
        }
        at = tree.node(id).and_then(|n| n.parent);
    }
    false
}

/// The window's tree as an XML document.
pub fn source(tree: &Tree) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    if let Some(root) = tree.nodes.first() {
        write_node(tree, root, 0, &mut out);
    }
    out
}

fn write_node(tree: &Tree, n: &Node, depth: usize, out: &mut String) {
    let tag = tag(n.role);
    out.push_str(&"  ".repeat(depth));
    out.push('<');
    out.push_str(&tag);
    let mut attr = |k: &str, v: &str| {
        out.push_str(&format!(" {k}=\"{}\"", escape(v)));
    };
    attr("wayrig-id", &n.id.to_string());
    if !n.name.is_empty() {
        attr("name", &n.name);
    }
    if let Some(key) = &n.key {
        attr("id", key);
    }
    if let Some(v) = &n.value {
        attr("value", v);
    }
    if let Some(b) = &n.bounds {
        attr("x", &b.x.to_string());
        attr("y", &b.y.to_string());
        attr("width", &b.width.to_string());
        attr("height", &b.height.to_string());
    }
    attr("enabled", &(!n.states.disabled).to_string());
    if n.states.focused {
        attr("focused", "true");
    }
    if n.states.selected {
        attr("selected", "true");
    }
    if let Some(c) = n.checked() {
        attr("checked", &format!("{c:?}").to_lowercase());
    }
    attr("displayed", &displayed(n).to_string());
    let children: Vec<&Node> = n.children.iter().filter_map(|c| tree.node(*c)).collect();
    if children.is_empty() {
        out.push_str("/>\n");
        return;
    }
    out.push_str(">\n");
    for c in children {
        write_node(tree, c, depth + 1, out);
    }
    out.push_str(&"  ".repeat(depth));
    out.push_str(&format!("</{tag}>\n"));
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // Characters XML 1.0 cannot carry at all are left out.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_become_queries() {
        assert_eq!(
            query("accessibility id", "7").unwrap().name.as_deref(),
            Some("7")
        );
        assert_eq!(query("id", "ok").unwrap().key.as_deref(), Some("ok"));
        assert_eq!(
            query("tag name", "button").unwrap().role,
            Some(Role::Button)
        );
        let q = query("css selector", "button[name=\"Save\"]").unwrap();
        assert_eq!(
            (q.role, q.name.as_deref()),
            (Some(Role::Button), Some("Save"))
        );
        assert_eq!(
            query("css selector", "#entry").unwrap().key.as_deref(),
            Some("entry")
        );
        let q = query(
            "xpath",
            "//textInput[@name='First' and contains(@value, 'he')]",
        )
        .unwrap();
        assert_eq!(q.role, Some(Role::TextInput));
        assert_eq!(q.name.as_deref(), Some("First"));
        assert_eq!(q.value_contains.as_deref(), Some("he"));
        let q = query("xpath", "//*[contains(@name,'Pre')]").unwrap();
        assert_eq!((q.role, q.name_contains.as_deref()), (None, Some("Pre")));
    }

    #[test]
    fn what_wayrig_cannot_select_on_is_an_invalid_selector() {
        for (using, value) in [
            ("xpath", "/html/body"),
            ("xpath", "//button[1]"),
            ("xpath", "//noSuchRole"),
            ("css selector", "div > p"),
            ("css selector", "[colour=red]"),
            ("tag name", "push button"),
        ] {
            let e = query(using, value).unwrap_err();
            assert_eq!(e.code, "invalid selector", "{using} {value}: {e:?}");
        }
        assert_eq!(
            query("class name", "x").unwrap_err().code,
            "invalid argument"
        );
    }

    #[test]
    fn element_references_round_trip_and_bad_ones_name_no_element() {
        let id = ElementId {
            window: WindowHandle { id: 3, epoch: 2 },
            node: 1234567890123,
        };
        assert_eq!(ElementId::parse(&id.to_string()).unwrap(), id);
        assert_eq!(ElementId::parse("x.y").unwrap_err().code, "no such element");
    }

    #[test]
    fn the_source_escapes_what_xml_cannot_hold_as_is() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
    }
}
