//! The output backend: headless, the output existing only as frame callbacks and
//! captures, or nested, the output also shown in a window on the user's desktop.

pub mod nested;

use smithay::backend::renderer::pixman::PixmanRenderer;
use smithay::desktop::{PopupKind, Space, Window};
use smithay::output::Output;

use crate::capture::{self, OutputCanvas, Pixels};
use nested::Nested;

/// Where the output's pixels go.
pub struct Backend {
    /// Renders captures offscreen, whether or not the output is also shown nested.
    capture_renderer: PixmanRenderer,
    /// The nested window's renderer and damage, when running nested.
    nested: Option<Nested>,
}

impl Backend {
    pub fn headless() -> Result<Self, String> {
        let capture_renderer =
            PixmanRenderer::new().map_err(|e| format!("cannot create the pixman renderer: {e}"))?;
        Ok(Backend {
            capture_renderer,
            nested: None,
        })
    }

    /// Show the output in the nested window from now on.
    pub fn show_nested(&mut self, nested: Nested) {
        self.nested = Some(nested);
    }

    /// Draw the output where it is shown: the nested window, if any.
    pub fn render(&mut self, space: &Space<Window>, output: &Output) {
        if let Some(nested) = self.nested.as_mut() {
            nested.render(space, output);
        }
    }

    pub fn capture_window(&mut self, window: &Window, scale: f64) -> Result<Pixels, String> {
        capture::render_window(&mut self.capture_renderer, window, scale)
    }

    pub fn capture_popup(&mut self, popup: &PopupKind, scale: f64) -> Result<Pixels, String> {
        capture::render_surface(
            &mut self.capture_renderer,
            popup.wl_surface(),
            popup.geometry(),
            scale,
        )
    }

    /// Draw the output onto `canvas`: the rows that changed, or `None`
    /// when nothing did.
    pub fn draw_output(
        &mut self,
        canvas: &mut OutputCanvas,
        space: &Space<Window>,
        output: &Output,
    ) -> Result<Option<(u32, u32)>, String> {
        canvas.draw(&mut self.capture_renderer, space, output)
    }

    pub fn capture_output(
        &mut self,
        space: &Space<Window>,
        output: &Output,
    ) -> Result<Pixels, String> {
        capture::render_output(&mut self.capture_renderer, space, output)
    }
}
