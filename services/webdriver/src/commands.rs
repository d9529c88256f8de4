//! The WebDriver commands, each translated into calls on its session: new and
//! delete session, finding elements (the implicit wait waits on the window's
//! tree changing, never on a timer), element state and interaction, windows,
//! screenshots, the XML source and Wayrig's `execute` extensions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::Json;
use base64::Engine;
use serde_json::{json, Map, Value};
use wayrig_host::{Button, WindowHandle, WindowInfo};
use wayrig_services::session::Expect;
use wayrig_services::{
    prefer_controls, ActOptions, Action, Area, ElementClick, ElementRef, ImageFormat, Launch,
    LogicalRect, MenuPath, Node, Path as Done, Query, ShotRequest, ShotSource, Step, Tree,
    WindowFilter, WindowOp, WindowPick,
};
use wayrig_sessions::{Live, SessionsFull, Spec};

use crate::actions;
use crate::caps;
use crate::error::WdError;
use crate::locate::{self, ElementId};
use crate::Face;

type Answer = Result<Json<Value>, WdError>;
/// The answer to input or an action: `null`, with the headers saying how.
type Acted = Result<(HeaderMap, Json<Value>), WdError>;
type FaceState = State<Arc<Face>>;

/// The response header that says why the answer to input or an action came
/// before its window settled (its effect wait ran out): WebDriver has no
/// place for a warning, and `value` stays the `null` the standard says.
const UNSETTLED_HEADER: &str = "wayrig-unsettled";

/// How long a new session's app may take to show its first window.
const APP_WINDOW_WAIT: Duration = Duration::from_secs(30);
/// How long `wayrig: settle` waits at most.
const SETTLE_LIMIT: Duration = Duration::from_secs(10);

/// Start an app in the foreground, waiting for its first window.
fn launch_of(app: wayrig_services::AppSpec, args: Vec<String>) -> Launch {
    Launch {
        app: Some(app),
        args,
        env: Vec::new(),
        cwd: None,
        background: false,
        wait_for_window: Some(APP_WINDOW_WAIT),
    }
}

/// What a WebDriver session adds to its Wayrig session.
pub struct Driven {
    pub live: Arc<Live>,
    /// The current top-level browsing context: a window of the session.
    window: Mutex<Option<WindowHandle>>,
    implicit_ms: AtomicU64,
    /// What the session's actions hold down, and where its pointer is.
    held: Mutex<actions::Held>,
}

fn ok(value: Value) -> Answer {
    Ok(Json(json!({ "value": value })))
}

/// Input's or an action's answer, with `Wayrig-Unsettled` when the window
/// had not settled.
fn acted(unsettled: Option<String>) -> Acted {
    let mut headers = HeaderMap::new();
    if let Some(why) = unsettled {
        let visible = wayrig_services::unsettled_in_ascii(&why);
        if let Ok(value) = HeaderValue::from_str(&visible) {
            headers.insert(UNSETTLED_HEADER, value);
        }
    }
    Ok((headers, Json(json!({ "value": Value::Null }))))
}

/// The request's JSON parameters; an empty body is an empty object.
fn params(body: &Bytes) -> Result<Map<String, Value>, WdError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(WdError::invalid("the parameters must be a JSON object")),
        Err(e) => Err(WdError::invalid(format!("the body is not JSON: {e}"))),
    }
}

fn string<'a>(p: &'a Map<String, Value>, key: &str) -> Result<&'a str, WdError> {
    p.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| WdError::invalid(format!("{key} must be a string")))
}

fn driven(face: &Face, id: &str) -> Result<Arc<Driven>, WdError> {
    face.driven.lock().unwrap().get(id).cloned().ok_or_else(|| {
        WdError::new(
            "invalid session id",
            format!("no session {id}; it ended or never began"),
        )
    })
}

impl Driven {
    /// The current window: the one switched to, else the session's default
    /// (focused, else frontmost); gone is `no such window`.
    async fn window(&self) -> Result<WindowInfo, WdError> {
        let pick = match *self.window.lock().unwrap() {
            Some(h) => WindowPick::Handle(h),
            None => WindowPick::Default,
        };
        let info = self.live.window(&pick).await?;
        *self.window.lock().unwrap() = Some(info.handle);
        Ok(info)
    }

    fn implicit(&self) -> Duration {
        Duration::from_millis(self.implicit_ms.load(Ordering::Relaxed))
    }

    /// The element a reference names, as the window's tree has it now.
    async fn element(&self, id: &str) -> Result<(Tree, Node, ElementId), WdError> {
        let eid = ElementId::parse(id)?;
        let tree = self.live.tree(eid.window).await.map_err(|e| match e {
            wayrig_services::Error::NoWindow(_) | wayrig_services::Error::StaleWindow(_) => {
                WdError::new(
                    "stale element reference",
                    format!("element {id}'s window is gone"),
                )
            }
            e => e.into(),
        })?;
        let node = tree.node(eid.node).cloned().ok_or_else(|| {
            WdError::new(
                "stale element reference",
                format!("element {id} is no longer in its window; find it again"),
            )
        })?;
        Ok((tree, node, eid))
    }
}

pub async fn status(State(face): FaceState) -> Answer {
    let ready = face.sessions.has_room();
    ok(json!({
        "ready": ready,
        "message": if ready { "Wayrig can start a session" } else { "every session place is taken" },
    }))
}

pub async fn new_session(State(face): FaceState, body: Bytes) -> Answer {
    let asked = caps::process(&Value::Object(params(&body)?))?;
    let mut spec = Spec {
        accessibility: true,
        read_ahead: true,
        ..Spec::default()
    };
    if let Some((w, h)) = asked.size {
        (spec.compositor.width, spec.compositor.height) = (w, h);
    }
    if let Some(scale) = asked.scale {
        spec.compositor.scale = scale;
    }
    spec.compositor.app_env = face.options.env.clone();
    spec.compositor.app_env.extend(asked.env.iter().cloned());
    let (id, live) = face.sessions.create(spec).await.map_err(|e| match e {
        SessionsFull::Full(_) => WdError::new("session not created", e.to_string()),
        SessionsFull::Start(e) => WdError::new("session not created", e.to_string()),
    })?;
    let mut window = None;
    if let Some((app, args)) = asked.app.clone() {
        let launched = live.launch(launch_of(app, args)).await;
        match launched {
            Ok(l) if !l.windows.is_empty() => window = Some(l.windows[0].handle),
            Ok(_) => {
                face.sessions.end(&id).await;
                return Err(WdError::new(
                    "session not created",
                    format!("the app showed no window within {APP_WINDOW_WAIT:?}"),
                ));
            }
            Err(e) => {
                face.sessions.end(&id).await;
                return Err(WdError::new(
                    "session not created",
                    format!("the app did not start: {e}"),
                ));
            }
        }
    }
    let implicit = asked.implicit_ms.unwrap_or(0);
    face.driven.lock().unwrap().insert(
        id.clone(),
        Arc::new(Driven {
            live,
            window: Mutex::new(window),
            implicit_ms: AtomicU64::new(implicit),
            held: Mutex::default(),
        }),
    );
    let mut capabilities = asked.matched;
    capabilities.insert("platformName".into(), json!("linux"));
    capabilities.insert("setWindowRect".into(), json!(true));
    capabilities.insert(
        "timeouts".into(),
        json!({"implicit": implicit, "pageLoad": 300000, "script": 30000}),
    );
    ok(json!({ "sessionId": id, "capabilities": capabilities }))
}

pub async fn delete_session(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let removed = face.driven.lock().unwrap().remove(&id);
    if removed.is_none() {
        return Err(WdError::new(
            "invalid session id",
            format!("no session {id}"),
        ));
    }
    face.sessions.end(&id).await;
    ok(Value::Null)
}

pub async fn get_timeouts(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    ok(
        json!({"implicit": d.implicit_ms.load(Ordering::Relaxed), "pageLoad": 300000, "script": 30000}),
    )
}

pub async fn set_timeouts(State(face): FaceState, Path(id): Path<String>, body: Bytes) -> Answer {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    for (k, v) in &p {
        let ms = match v {
            Value::Null => continue,
            v => v
                .as_u64()
                .filter(|ms| *ms <= 9_007_199_254_740_991)
                .ok_or_else(|| {
                    WdError::invalid(format!("timeout {k} must be whole milliseconds"))
                })?,
        };
        match k.as_str() {
            "implicit" => d.implicit_ms.store(ms, Ordering::Relaxed),
            "pageLoad" | "script" => {}
            other => return Err(WdError::invalid(format!("unknown timeout {other:?}"))),
        }
    }
    ok(Value::Null)
}

/// The strategy and value of a find request, as a query.
fn located(p: &Map<String, Value>) -> Result<Query, WdError> {
    locate::query(string(p, "using")?, string(p, "value")?)
}

/// Elements the query matches in the window, in document order, under
/// `under` when given; with an implicit wait, waits for one to show.
async fn find(
    d: &Driven,
    window: WindowHandle,
    query: Query,
    under: Option<u64>,
    one: bool,
) -> Result<Vec<ElementId>, WdError> {
    let matching = |tree: &Tree| -> Vec<ElementId> {
        let mut found: Vec<&Node> = query
            .find(tree)
            .into_iter()
            .filter(|n| under.is_none_or(|a| locate::within(tree, n, a)))
            .collect();
        // Find Element: the one a person means by it, as every face picks.
        if one {
            prefer_controls(&mut found);
        }
        found
            .into_iter()
            .map(|n| ElementId { window, node: n.id })
            .collect()
    };
    let found = matching(&d.live.tree(window).await?);
    let wait = d.implicit();
    if !found.is_empty() || wait.is_zero() {
        return Ok(found);
    }
    // Waited on the window's frames and accessibility events, not a timer.
    match d
        .live
        .wait_for(window, &Expect::Shown(query.clone()), wait)
        .await
    {
        Ok(_) => Ok(matching(&d.live.tree(window).await?)),
        Err(wayrig_services::Error::Timeout(_)) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

fn first(found: Vec<ElementId>, p: &Map<String, Value>) -> Answer {
    match found.first() {
        Some(e) => ok(e.reference()),
        None => Err(WdError::new(
            "no such element",
            format!(
                "no element shows that {} {:?} finds",
                p.get("using").and_then(Value::as_str).unwrap_or(""),
                p.get("value").and_then(Value::as_str).unwrap_or("")
            ),
        )),
    }
}

pub async fn find_element(State(face): FaceState, Path(id): Path<String>, body: Bytes) -> Answer {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    let w = d.window().await?;
    first(find(&d, w.handle, located(&p)?, None, true).await?, &p)
}

pub async fn find_elements(State(face): FaceState, Path(id): Path<String>, body: Bytes) -> Answer {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    let w = d.window().await?;
    let found = find(&d, w.handle, located(&p)?, None, false).await?;
    ok(found.iter().map(ElementId::reference).collect())
}

pub async fn find_element_from(
    State(face): FaceState,
    Path((id, element)): Path<(String, String)>,
    body: Bytes,
) -> Answer {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    let (_, node, eid) = d.element(&element).await?;
    first(
        find(&d, eid.window, located(&p)?, Some(node.id), true).await?,
        &p,
    )
}

pub async fn find_elements_from(
    State(face): FaceState,
    Path((id, element)): Path<(String, String)>,
    body: Bytes,
) -> Answer {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    let (_, node, eid) = d.element(&element).await?;
    let found = find(&d, eid.window, located(&p)?, Some(node.id), false).await?;
    ok(found.iter().map(ElementId::reference).collect())
}

pub async fn active_element(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    let w = d.window().await?;
    let tree = d.live.tree(w.handle).await?;
    let focused = tree.nodes.iter().rev().find(|n| n.states.focused);
    match focused {
        Some(n) => ok(ElementId {
            window: w.handle,
            node: n.id,
        }
        .reference()),
        None => Err(WdError::new(
            "no such element",
            "no element of the window has the focus",
        )),
    }
}

pub async fn element_click(
    State(face): FaceState,
    Path((id, element)): Path<(String, String)>,
) -> Acted {
    let d = driven(&face, &id)?;
    let (_, node, eid) = d.element(&element).await?;
    let click = ElementClick {
        button: Button::Left,
        count: 1,
    };
    let clicked = d
        .live
        .click_element(eid.window, ElementRef::Id(node.id), click)
        .await
        .map_err(interaction)?;
    acted(clicked.steps.last().and_then(|s| s.unsettled.clone()))
}

/// An element that cannot take the interaction is `element not interactable`.
fn interaction(e: wayrig_services::Error) -> WdError {
    match e {
        wayrig_services::Error::InvalidRequest(m) | wayrig_services::Error::Unsupported(m) => {
            WdError::new("element not interactable", m)
        }
        e => e.into(),
    }
}

pub async fn element_clear(
    State(face): FaceState,
    Path((id, element)): Path<(String, String)>,
) -> Acted {
    let d = driven(&face, &id)?;
    let (_, node, eid) = d.element(&element).await?;
    if !node.states.editable || node.states.read_only {
        return Err(WdError::new(
            "invalid element state",
            format!("element {element} is not an editable field"),
        ));
    }
    let report = d
        .live
        .act(
            eid.window,
            ElementRef::Id(node.id),
            Action::SetValue {
                text: String::new(),
            },
            ActOptions::default(),
        )
        .await
        .map_err(interaction)?;
    acted(report.unsettled)
}

pub async fn element_send_keys(
    State(face): FaceState,
    Path((id, element)): Path<(String, String)>,
    body: Bytes,
) -> Acted {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    let text = string(&p, "text")?;
    let events = crate::keys::events(text)?;
    let (_, node, eid) = d.element(&element).await?;
    let mut unsettled = None;
    if !node.states.focused {
        let report = d
            .live
            .act(
                eid.window,
                ElementRef::Id(node.id),
                Action::Focus,
                ActOptions::default(),
            )
            .await
            .map_err(interaction)?;
        unsettled = report.unsettled;
    }
    if !events.is_empty() {
        let steps = d
            .live
            .input_steps(eid.window, vec![Step::drawn(events)], Default::default())
            .await?;
        unsettled = steps.last().and_then(|s| s.unsettled.clone());
    }
    acted(unsettled)
}

/// Answer a read of one element of a session from its window's tree.
async fn read_element(
    face: &Face,
    id: &str,
    element: &str,
    read: impl FnOnce(&Tree, &Node) -> Value,
) -> Answer {
    let d = driven(face, id)?;
    let (tree, node, _) = d.element(element).await?;
    ok(read(&tree, &node))
}

/// The element's path parameters.
type ElementPath = Path<(String, String)>;

pub async fn element_text(State(face): FaceState, Path((id, e)): ElementPath) -> Answer {
    read_element(&face, &id, &e, |_, n| {
        json!(n.value.as_ref().unwrap_or(&n.name))
    })
    .await
}

/// Its tag name, which is also its computed role: the role in camelCase.
pub async fn element_tag(State(face): FaceState, Path((id, e)): ElementPath) -> Answer {
    read_element(&face, &id, &e, |_, n| json!(locate::tag(n.role))).await
}

pub async fn element_rect(State(face): FaceState, Path((id, e)): ElementPath) -> Answer {
    read_element(&face, &id, &e, |_, n| {
        let b = n.bounds.unwrap_or_default();
        json!({"x": b.x, "y": b.y, "width": b.width, "height": b.height})
    })
    .await
}

pub async fn element_enabled(State(face): FaceState, Path((id, e)): ElementPath) -> Answer {
    read_element(&face, &id, &e, |_, n| json!(!n.states.disabled)).await
}

pub async fn element_selected(State(face): FaceState, Path((id, e)): ElementPath) -> Answer {
    read_element(&face, &id, &e, |_, n| {
        let checked = matches!(n.checked(), Some(wayrig_services::Checked::True));
        json!(n.states.selected || checked)
    })
    .await
}

pub async fn element_displayed(State(face): FaceState, Path((id, e)): ElementPath) -> Answer {
    read_element(&face, &id, &e, |_, n| json!(locate::displayed(n))).await
}

/// An element's attribute or property: its name, key, value, role, states.
fn attribute(node: &Node, name: &str) -> Value {
    let s = &node.states;
    match name {
        "name" | "accessibility id" => json!(node.name),
        "id" | "key" => json!(node.key),
        "value" => json!(node.value),
        "role" | "tag" => json!(locate::tag(node.role)),
        "nativeRole" | "native role" => json!(node.native_role),
        "description" => json!(node.description),
        "placeholder" => json!(node.annotations.placeholder),
        "enabled" => json!(!s.disabled),
        "disabled" => json!(s.disabled),
        "focused" => json!(s.focused),
        "focusable" => json!(s.focusable),
        "selected" => json!(s.selected),
        "checked" => json!(matches!(
            node.checked(),
            Some(wayrig_services::Checked::True)
        )),
        "expanded" => json!(s.expanded),
        "editable" => json!(s.editable),
        "readonly" | "readOnly" => json!(s.read_only),
        "offscreen" => json!(s.offscreen),
        "min" => json!(node.range.as_ref().map(|r| r.min)),
        "max" => json!(node.range.as_ref().map(|r| r.max)),
        _ => Value::Null,
    }
}

pub async fn element_attribute(
    State(face): FaceState,
    Path((id, e, name)): Path<(String, String, String)>,
) -> Answer {
    read_element(&face, &id, &e, |_, n| attribute_string(n, &name)).await
}

/// An attribute as a document has it: a string, or null when absent.
fn attribute_string(node: &Node, name: &str) -> Value {
    match attribute(node, name) {
        Value::Bool(b) => json!(b.to_string()),
        Value::Number(n) => json!(n.to_string()),
        v => v,
    }
}

pub async fn element_property(
    State(face): FaceState,
    Path((id, e, name)): Path<(String, String, String)>,
) -> Answer {
    read_element(&face, &id, &e, |_, n| attribute(n, &name)).await
}

pub async fn element_label(State(face): FaceState, Path((id, e)): ElementPath) -> Answer {
    read_element(&face, &id, &e, |_, n| {
        json!(n.read_as().unwrap_or_default())
    })
    .await
}

async fn png_of(d: &Driven, window: WindowHandle, region: Option<LogicalRect>) -> Answer {
    let shot = d
        .live
        .screenshot(&ShotRequest {
            source: ShotSource::Window(window),
            region,
            format: ImageFormat::Png,
            max_dimension: None,
            include_cursor: false,
        })
        .await?;
    ok(json!(
        base64::engine::general_purpose::STANDARD.encode(&shot.image)
    ))
}

pub async fn element_screenshot(
    State(face): FaceState,
    Path((id, element)): Path<(String, String)>,
) -> Answer {
    let d = driven(&face, &id)?;
    let (_, node, eid) = d.element(&element).await?;
    let b = node.bounds.ok_or_else(|| {
        WdError::new(
            "element not interactable",
            format!("element {element} has no place to show"),
        )
    })?;
    let region = LogicalRect {
        x: f64::from(b.x),
        y: f64::from(b.y),
        width: f64::from(b.width),
        height: f64::from(b.height),
    };
    png_of(&d, eid.window, Some(region)).await
}

pub async fn screenshot(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    let w = d.window().await?;
    png_of(&d, w.handle, None).await
}

pub async fn source(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    let w = d.window().await?;
    let tree = d.live.tree(w.handle).await?;
    ok(json!(locate::source(&tree)))
}

pub async fn title(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    ok(json!(d.window().await?.title))
}

fn handle_string(h: WindowHandle) -> Value {
    json!(h.to_string())
}

pub async fn window_handle(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    ok(handle_string(d.window().await?.handle))
}

/// The session's top-level windows, front to back.
fn top_levels(d: &Driven) -> Vec<WindowInfo> {
    d.live.list_windows(&WindowFilter::default())
}

pub async fn window_handles(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    ok(top_levels(&d)
        .iter()
        .map(|w| handle_string(w.handle))
        .collect())
}

pub async fn switch_window(State(face): FaceState, Path(id): Path<String>, body: Bytes) -> Answer {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    let wanted = string(&p, "handle")?;
    let w = top_levels(&d)
        .into_iter()
        .find(|w| w.handle.to_string() == wanted)
        .ok_or_else(|| WdError::new("no such window", format!("no window {wanted}")))?;
    d.live.window_op(w.handle, WindowOp::Activate).await?;
    *d.window.lock().unwrap() = Some(w.handle);
    ok(Value::Null)
}

pub async fn close_window(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    let w = d.window().await?;
    d.live.close(w.handle, false).await?;
    *d.window.lock().unwrap() = None;
    ok(top_levels(&d)
        .iter()
        .map(|w| handle_string(w.handle))
        .collect())
}

fn rect_of(w: &WindowInfo) -> Value {
    json!({"x": w.frame.x, "y": w.frame.y, "width": w.frame.width, "height": w.frame.height})
}

pub async fn window_rect(State(face): FaceState, Path(id): Path<String>) -> Answer {
    let d = driven(&face, &id)?;
    ok(rect_of(&d.window().await?))
}

pub async fn set_window_rect(
    State(face): FaceState,
    Path(id): Path<String>,
    body: Bytes,
) -> Answer {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    let number = |k: &str| -> Result<Option<i32>, WdError> {
        match p.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|n| n.abs() <= 1e6)
                .map(|n| Some(n.round() as i32))
                .ok_or_else(|| WdError::invalid(format!("{k} must be a number"))),
        }
    };
    let (x, y, w, h) = (
        number("x")?,
        number("y")?,
        number("width")?,
        number("height")?,
    );
    if w.is_some_and(|w| w < 1) || h.is_some_and(|h| h < 1) {
        return Err(WdError::invalid("width and height are at least 1"));
    }
    let position = x.zip(y);
    let size = w.zip(h);
    let win = d.window().await?;
    let info = d
        .live
        .window_op(
            win.handle,
            WindowOp::SetBounds {
                area: Area::Frame,
                position,
                size,
            },
        )
        .await?;
    ok(rect_of(&info))
}

async fn window_op(face: &Face, id: &str, op: WindowOp) -> Answer {
    let d = driven(face, id)?;
    let w = d.window().await?;
    let info = d.live.window_op(w.handle, op).await?;
    ok(rect_of(&info))
}

pub async fn maximize(State(face): FaceState, Path(id): Path<String>) -> Answer {
    window_op(&face, &id, WindowOp::Maximize).await
}

pub async fn minimize(State(face): FaceState, Path(id): Path<String>) -> Answer {
    window_op(&face, &id, WindowOp::Minimize).await
}

pub async fn fullscreen(State(face): FaceState, Path(id): Path<String>) -> Answer {
    window_op(&face, &id, WindowOp::Fullscreen).await
}

/// The strings of the array `key` names in a script's first argument
/// (`{"argv": [...]}`), when it is one and not empty.
fn first_arg_strings(args: &[Value], key: &str) -> Option<Vec<String>> {
    let list = args.first()?.get(key)?.as_array()?;
    let strings: Vec<String> = list
        .iter()
        .map(|s| s.as_str().map(str::to_string))
        .collect::<Option<_>>()?;
    (!strings.is_empty()).then_some(strings)
}

/// Wayrig's extensions, as Appium writes them: `wayrig: settle` waits until
/// the current window has settled; `wayrig: launch` starts another app
/// (`{"argv": [...]}`); `wayrig: menu` chooses a menu item by its labels
/// (`{"path": [...]}`); `wayrig: clipboard` reads the clipboard's text, or
/// sets it (`{"text": ...}`). Any other script is an unsupported operation.
pub async fn execute(State(face): FaceState, Path(id): Path<String>, body: Bytes) -> Answer {
    let d = driven(&face, &id)?;
    let p = params(&body)?;
    let script = string(&p, "script")?;
    let args = p
        .get("args")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(atom) = client_atom(script) {
        let element = args
            .first()
            .and_then(|e| e.get(locate::ELEMENT_KEY))
            .and_then(Value::as_str)
            .ok_or_else(|| WdError::invalid("the atom's first argument must be an element"))?;
        let (_, node, _) = d.element(element).await?;
        match atom {
            Atom::Displayed => return ok(json!(locate::displayed(&node))),
            Atom::Clickable => {
                let clickable = locate::displayed(&node) && !node.states.disabled;
                return ok(json!(clickable));
            }
            // No element of a desktop app is laid out by CSS.
            Atom::DisplayStyle => return ok(json!({ "value": "" })),
            Atom::Attribute => {}
        }
        let name = args
            .get(1)
            .and_then(Value::as_str)
            .ok_or_else(|| WdError::invalid("getAttribute takes an attribute name"))?;
        return ok(attribute_string(&node, name));
    }
    match script.trim() {
        "wayrig: settle" => {
            let w = d.window().await?;
            d.live.settle(w.handle, SETTLE_LIMIT).await?;
            ok(Value::Null)
        }
        "wayrig: launch" => {
            let argv = first_arg_strings(&args, "argv").ok_or_else(|| {
                WdError::invalid("wayrig: launch takes {\"argv\": [program, args...]}")
            })?;
            let launched = d
                .live
                .launch(launch_of(
                    wayrig_services::AppSpec::Executable(argv[0].clone()),
                    argv[1..].to_vec(),
                ))
                .await?;
            ok(json!({
                "pid": launched.pid,
                "windows": launched.windows.iter().map(|w| handle_string(w.handle)).collect::<Vec<_>>(),
            }))
        }
        "wayrig: menu" => {
            let path = first_arg_strings(&args, "path").ok_or_else(|| {
                WdError::invalid("wayrig: menu takes {\"path\": [menu, item...]}")
            })?;
            let w = d.window().await?;
            let how = d.live.menu(w.handle, &path).await?;
            let via = match how {
                MenuPath::Exported => "exported",
                MenuPath::Tree(Done::Accessibility) => "accessibility",
                MenuPath::Tree(Done::Pointer | Done::Keyboard) => "input",
            };
            ok(json!({ "chosen": path, "via": via }))
        }
        // Without text, reads the clipboard; with {"text": ...}, sets it.
        "wayrig: clipboard" => match args.first().and_then(|a| a.get("text")) {
            None => {
                let now = d.live.clipboard().await?;
                ok(json!({ "text": now.text, "generation": now.generation }))
            }
            Some(Value::String(text)) => {
                let generation = d.live.set_clipboard(text.clone()).await?;
                ok(json!({ "generation": generation }))
            }
            Some(_) => Err(WdError::invalid(
                "wayrig: clipboard takes {\"text\": \"...\"} to set it, or nothing to read it",
            )),
        },
        other => Err(WdError::new(
            "unsupported operation",
            format!(
                "Wayrig runs no scripts; {:?} is none of \"wayrig: settle\", \"wayrig: \
                 launch\", \"wayrig: menu\", \"wayrig: clipboard\"",
                other.chars().take(60).collect::<String>()
            ),
        )),
    }
}

/// A script a client library runs where a browser would run JavaScript,
/// answered from the element instead.
enum Atom {
    /// Selenium's getAttribute.
    Attribute,
    /// Whether the element shows: Selenium's isDisplayed, WebdriverIO's
    /// `checkVisibility`, its `isElementDisplayed` and `isElementInViewport`.
    Displayed,
    /// WebdriverIO's read of the element's CSS `display`.
    DisplayStyle,
    /// WebdriverIO's `isElementClickable`: shown and enabled.
    Clickable,
}

/// The client atom a script is, by the marks each library's atoms carry.
fn client_atom(script: &str) -> Option<Atom> {
    if script.starts_with("/* getAttribute */") {
        Some(Atom::Attribute)
    } else if script.contains("function isElementClickable(") {
        Some(Atom::Clickable)
    } else if script.starts_with("/* isDisplayed */")
        || script.contains("function checkVisibility(")
        || script.contains("function isElementDisplayed(")
        || script.contains("function isElementInViewport(")
    {
        Some(Atom::Displayed)
    } else if script.contains("window.getComputedStyle(elem)") && script.contains(".display") {
        Some(Atom::DisplayStyle)
    } else {
        None
    }
}

/// Perform Actions: the sources' actions tick by tick, in the current
/// window, each tick answered once the app drew what it caused.
pub async fn perform_actions(State(face): FaceState, Path(id): Path<String>, body: Bytes) -> Acted {
    let d = driven(&face, &id)?;
    let ticks = actions::ticks(&params(&body)?)?;
    let w = d.window().await?;
    // Elements are placed as their ticks come, once the ticks before ran and
    // the app drew what they did: a click that reflows a page moves what the
    // next tick aims at. A run lasts its pauses and moves before the next.
    let runs = actions::runs_placing_elements(&ticks);
    let mut unsettled = None;
    for (i, run) in runs.iter().enumerate() {
        let places = place_elements(&d, w.handle, run).await?;
        let place = |e: &ElementId| -> Result<(f64, f64), WdError> {
            places.get(e).copied().ok_or_else(|| {
                WdError::new("no such element", format!("element {e} was not placed"))
            })
        };
        let steps = {
            let mut held = d.held.lock().unwrap().clone();
            let steps = actions::steps(run, &mut held, &place)?;
            *d.held.lock().unwrap() = held;
            steps
        };
        let began = tokio::time::Instant::now();
        if !steps.is_empty() {
            let reports = d
                .live
                .input_steps(w.handle, steps, Default::default())
                .await?;
            unsettled = reports.last().and_then(|s| s.unsettled.clone());
        }
        if i + 1 < runs.len() {
            tokio::time::sleep_until(began + actions::lasting(run)).await;
        }
    }
    acted(unsettled)
}

/// Where a click on each element a run of ticks starts at would land, as the
/// session aims (the middle of what shows of it, checked to be it).
async fn place_elements(
    d: &Driven,
    window: WindowHandle,
    run: &[Vec<actions::Act>],
) -> Result<std::collections::HashMap<ElementId, (f64, f64)>, WdError> {
    let mut places = std::collections::HashMap::new();
    for e in actions::element_origins(run) {
        if e.window != window {
            return Err(WdError::new(
                "stale element reference",
                format!("element {e} is not in the current window"),
            ));
        }
        let at = d
            .live
            .aim(e.window, e.node)
            .await
            .map_err(|err| match err {
                wayrig_services::Error::NotShown(m) => WdError::new("move target out of bounds", m),
                err => err.into(),
            })?;
        places.insert(e, at);
    }
    Ok(places)
}

/// Release Actions: every key and button the session's actions hold is let go.
pub async fn release_actions(State(face): FaceState, Path(id): Path<String>) -> Acted {
    let d = driven(&face, &id)?;
    let events = actions::release(&mut d.held.lock().unwrap());
    if events.is_empty() {
        return acted(None);
    }
    let w = d.window().await?;
    let steps = d
        .live
        .input_steps(w.handle, vec![Step::drawn(events)], Default::default())
        .await?;
    acted(steps.last().and_then(|s| s.unsettled.clone()))
}
