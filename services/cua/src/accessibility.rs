//! AccessibilityService: named reads of a window's elements (GetTree, Find)
//! and actions on an element of a read (Act), as session snapshots and acts.
//!
//! An element of an older read acts only while it shows unchanged; otherwise
//! the session answers stale, which is STALE_SNAPSHOT here.

use std::sync::Arc;

use tonic::{Request, Response, Status};
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::accessibility_service_server::AccessibilityService;
use wayrig_host::WindowInfo;
use wayrig_services::{
    ActOptions, ActReport, Action, Delivery, Element, ElementRef, Path, Query, ReadOptions,
    Session, Snapshot, StateFlag, WindowPick,
};

use crate::convert::{answered, detail_with, handle_of, node, role_named, state_flag};
use crate::errors::{from_session, invalid, known};

/// Nodes a read answers when the request does not say.
const DEFAULT_MAX_NODES: u32 = 5000;
/// Matches Find answers when the request does not say.
const DEFAULT_MAX_RESULTS: u32 = 50;

pub struct Accessibility {
    pub session: Arc<Session>,
}

impl Accessibility {
    /// The window a request names, or the focused one (else the frontmost).
    async fn window(&self, r: Option<&v1::WindowRef>) -> Result<WindowInfo, Status> {
        let pick = match r {
            Some(r) => WindowPick::Handle(handle_of(Some(r))?),
            None => WindowPick::Default,
        };
        self.session
            .window(&pick)
            .await
            .map_err(|e| from_session(e, "a11y"))
    }

    async fn read(&self, w: &WindowInfo, options: &ReadOptions) -> Result<Snapshot, Status> {
        self.session
            .snapshot(w.handle, options)
            .await
            .map_err(|e| from_session(e, "a11y"))
    }
}

/// A Find query as the session's: a role word or else a native role (in
/// any case), the name exactly or by a case-insensitive part, the value by
/// a part, every state; `offscreen` asks for what does not show too.
fn query(q: v1::AccessibilityQuery) -> Result<Query, Status> {
    let some = |s: String| (!s.is_empty()).then_some(s);
    let states = q
        .states
        .iter()
        .map(|w| state_flag(w))
        .collect::<Result<Vec<_>, _>>()?;
    let (role, native_role) = match some(q.role) {
        Some(word) => match role_named(&word) {
            Some(role) => (Some(role), None),
            None => (None, Some(word)),
        },
        None => (None, None),
    };
    Ok(Query {
        role,
        native_role,
        name: some(q.name),
        name_contains: some(q.name_contains),
        value_contains: some(q.value_contains),
        include_hidden: states.contains(&StateFlag::Offscreen),
        states,
        ..Query::default()
    })
}

fn nodes<'a>(
    elements: impl IntoIterator<Item = &'a Element>,
    w: &WindowInfo,
) -> Vec<v1::AccessibilityNode> {
    elements.into_iter().map(|e| node(e, w)).collect()
}

fn action(r: &v1::ActRequest) -> Result<Action, Status> {
    use v1::AccessibilityAction as A;
    let a: A = known(r.action, "action")?;
    Ok(match a {
        A::Unspecified => {
            return Err(invalid(
                "action is required: ACCESSIBILITY_ACTION_UNSPECIFIED is not an action",
            ))
        }
        A::Press => Action::Press,
        A::Focus => Action::Focus,
        A::SetValue => Action::SetValue {
            text: r.value.clone(),
        },
        A::Increment => Action::Increment,
        A::Decrement => Action::Decrement,
        A::ShowMenu => Action::ShowMenu,
        A::Expand => Action::Expand,
        A::Collapse => Action::Collapse,
        A::Select => Action::Select,
        A::ScrollIntoView => Action::ScrollIntoView,
        A::Custom if r.custom_action.is_empty() => {
            return Err(invalid(
                "ACCESSIBILITY_ACTION_CUSTOM needs custom_action: one of the element's \
                 native_actions attribute",
            ))
        }
        A::Custom => Action::Custom {
            name: r.custom_action.clone(),
        },
    })
}

fn delivery(d: i32) -> Result<Delivery, Status> {
    Ok(match known::<v1::Delivery>(d, "delivery")? {
        v1::Delivery::Unspecified | v1::Delivery::Auto => Delivery::Auto,
        v1::Delivery::Background => Delivery::Background,
        v1::Delivery::Foreground => Delivery::Foreground,
    })
}

#[tonic::async_trait]
impl AccessibilityService for Accessibility {
    async fn get_tree(
        &self,
        request: Request<v1::GetTreeRequest>,
    ) -> Result<Response<v1::GetTreeResponse>, Status> {
        let r = request.into_inner();
        let w = self.window(r.window.as_ref()).await?;
        let max_nodes = match r.max_nodes {
            0 => DEFAULT_MAX_NODES,
            n => n,
        };
        let options = ReadOptions {
            max_depth: (r.max_depth != 0).then_some(r.max_depth),
            max_nodes: Some(max_nodes as usize),
            include_hidden: r.include_hidden,
            ..ReadOptions::default()
        };
        let read = self.read(&w, &options).await?;
        Ok(Response::new(v1::GetTreeResponse {
            snapshot_id: read.id.clone(),
            window: Some(crate::convert::window_ref(read.window.handle)),
            nodes: nodes(&read.elements, &read.window),
            truncated: read.truncated,
        }))
    }

    async fn find(
        &self,
        request: Request<v1::FindRequest>,
    ) -> Result<Response<v1::FindResponse>, Status> {
        let r = request.into_inner();
        let query = query(r.query.unwrap_or_default())?;
        let w = self.window(r.window.as_ref()).await?;
        let options = ReadOptions {
            include_hidden: query.include_hidden,
            ..ReadOptions::default()
        };
        let read = self.read(&w, &options).await?;
        let limit = match r.max_results {
            0 => DEFAULT_MAX_RESULTS,
            n => n,
        } as usize;
        let found = read
            .elements
            .iter()
            .filter(|e| query.matches_besides_label(&e.node))
            .take(limit)
            .map(|e| node(e, &read.window))
            .collect();
        Ok(Response::new(v1::FindResponse {
            snapshot_id: read.id,
            nodes: found,
        }))
    }

    async fn act(
        &self,
        request: Request<v1::ActRequest>,
    ) -> Result<Response<v1::ActResponse>, Status> {
        let r = request.into_inner();
        let action = action(&r)?;
        let delivery = delivery(r.delivery)?;
        let element = r
            .element
            .ok_or_else(|| invalid("element is required: an ElementRef from GetTree or Find"))?;
        let id = element.element_id.parse::<u64>().map_err(|_| {
            invalid(format!(
                "element_id {:?} is not one this server gave out",
                element.element_id
            ))
        })?;
        // No snapshot named is the latest that holds the element.
        let snapshot = match element.snapshot_id.as_str() {
            "" => self
                .session
                .newest_snapshot_of(id)
                .map_err(|e| from_session(e, "a11y"))?,
            named => named.to_string(),
        };
        let window = self
            .session
            .snapshot_window(&snapshot)
            .map_err(|e| from_session(e, "a11y"))?;
        let report = self
            .session
            .act(
                window,
                ElementRef::InSnapshot { snapshot, id },
                action,
                ActOptions { delivery },
            )
            .await
            .map_err(|e| from_session(e, "a11y"))?;
        Ok(answered(
            v1::ActResponse {
                report: Some(delivery_report(&report, delivery)),
            },
            report.unsettled.as_deref(),
        ))
    }
}

/// What an act did, in cua's words: an accessibility action or input that
/// left the window where it was is background delivery; input to the
/// window in front (raised for it or already there) is foreground.
fn delivery_report(report: &ActReport, asked: Delivery) -> v1::DeliveryReport {
    let ran = match report.path {
        Path::Accessibility => "the element's accessibility action",
        Path::Pointer => "pointer input at the element",
        Path::Keyboard => "focus, then keyboard input",
    };
    let background =
        asked == Delivery::Background || (report.path == Path::Accessibility && !report.activated);
    let delivery = if background {
        v1::Delivery::Background
    } else {
        v1::Delivery::Foreground
    };
    v1::DeliveryReport {
        delivery: delivery as i32,
        focus_changed: report.focus_changed,
        pointer_moved: report.pointer_moved,
        detail: detail_with(
            if report.activated {
                format!("{ran}, after raising the window")
            } else {
                ran.to_string()
            },
            report.unsettled.as_deref(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_matches_role_or_native_role_names_and_states() {
        use wayrig_host::Rect;
        let q = |role: &str, name_contains: &str, states: &[&str]| {
            query(v1::AccessibilityQuery {
                role: role.into(),
                name_contains: name_contains.into(),
                states: states.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            })
            .unwrap()
        };
        let ok = wayrig_services::Node {
            id: 1,
            parent: None,
            children: Vec::new(),
            role: wayrig_services::Role::Button,
            native_role: "push button".into(),
            name: "OK".into(),
            name_is_stand_in: false,
            label_fallback: None,
            description: String::new(),
            key: None,
            states: Default::default(),
            value: None,
            range: None,
            selection: None,
            bounds: Some(Rect::new(0, 0, 40, 20)),
            actions: Vec::new(),
            place: Default::default(),
            relations: Default::default(),
            annotations: Default::default(),
        };
        let matches = |q: Query| q.matches_besides_label(&ok);
        assert!(matches(q("button", "", &[])));
        assert!(matches(q("Push Button", "ok", &["enabled"])));
        assert!(!matches(q("check_box", "", &[])));
        assert!(!matches(q("", "", &["focused"])));
        assert!(q("", "", &["offscreen"]).include_hidden);
    }

    #[test]
    fn input_to_the_front_window_is_foreground_and_an_accessibility_action_background() {
        let report = |path, activated| ActReport {
            element: 1,
            path,
            activated,
            focus_changed: activated,
            pointer_moved: path == Path::Pointer,
            unsettled: None,
        };
        let d = |r: &ActReport, asked| delivery_report(r, asked).delivery;
        let fg = v1::Delivery::Foreground as i32;
        let bg = v1::Delivery::Background as i32;
        assert_eq!(d(&report(Path::Pointer, false), Delivery::Auto), fg);
        assert_eq!(d(&report(Path::Pointer, true), Delivery::Auto), fg);
        assert_eq!(d(&report(Path::Pointer, false), Delivery::Background), bg);
        assert_eq!(d(&report(Path::Accessibility, false), Delivery::Auto), bg);
        assert_eq!(
            d(&report(Path::Accessibility, true), Delivery::Foreground),
            fg
        );
    }

    #[test]
    fn an_unknown_state_word_and_an_unspecified_action_are_invalid() {
        let bad = query(v1::AccessibilityQuery {
            states: vec!["shiny".into()],
            ..Default::default()
        });
        assert_eq!(bad.err().unwrap().code(), tonic::Code::InvalidArgument);
        for a in [0, 999] {
            let r = v1::ActRequest {
                action: a,
                ..Default::default()
            };
            assert_eq!(action(&r).unwrap_err().code(), tonic::Code::InvalidArgument);
        }
    }
}
