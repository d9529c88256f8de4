//! The nested backend: the output shown in a window on the user's Wayland or X11
//! desktop (smithay's winit backend, GLES); everything else runs as headless.

use smithay::backend::renderer::damage::OutputDamageTracker;
use smithay::backend::renderer::gles::GlesRenderer;
use smithay::backend::winit::{self, WinitEventLoop, WinitGraphicsBackend};
use smithay::desktop::{Space, Window};
use smithay::output::Output;
use smithay::reexports::winit::dpi::LogicalSize;
use smithay::reexports::winit::window::Window as WinitWindow;
use smithay::utils::Transform;

use crate::config::Config;

const BACKGROUND: [f32; 4] = [0.18, 0.18, 0.18, 1.0];

pub struct Nested {
    backend: WinitGraphicsBackend<GlesRenderer>,
    damage: OutputDamageTracker,
}

impl Nested {
    /// Open the window; its events are the caller's to put on the event loop.
    pub fn open(output: &Output, config: &Config) -> Result<(Self, WinitEventLoop), String> {
        let attributes = WinitWindow::default_attributes()
            .with_inner_size(LogicalSize::new(config.width as f64, config.height as f64))
            .with_title("Wayrig")
            .with_visible(true);
        let (backend, events) =
            winit::init_from_attributes::<GlesRenderer>(attributes).map_err(|e| e.to_string())?;
        let mode = output
            .current_mode()
            .ok_or("the output has no mode to show")?;
        // The window's framebuffer is GL's: its rows go bottom up, while the
        // output's go top down as clients and captures see them. The flip is
        // the window's alone: the output itself keeps its normal transform.
        let damage = OutputDamageTracker::new(
            mode.size,
            output.current_scale().fractional_scale(),
            Transform::Flipped180,
        );
        let nested = Nested { backend, damage };
        Ok((nested, events))
    }

    /// Draw what changed since the last frame into the window.
    pub fn render(&mut self, space: &Space<Window>, output: &Output) {
        let age = self.backend.buffer_age().unwrap_or(0);
        let damage = {
            let (renderer, mut framebuffer) = match self.backend.bind() {
                Ok(bound) => bound,
                Err(e) => {
                    tracing::warn!(?e, "cannot bind the nested window");
                    return;
                }
            };
            let elements = match space.render_elements_for_output(renderer, output, 1.0) {
                Ok(elements) => elements,
                Err(e) => {
                    tracing::warn!(?e, "cannot collect the output's elements");
                    return;
                }
            };
            match self
                .damage
                .render_output(renderer, &mut framebuffer, age, &elements, BACKGROUND)
            {
                Ok(result) => result.damage.cloned(),
                Err(e) => {
                    tracing::warn!(?e, "rendering the nested window failed");
                    return;
                }
            }
        };
        if let Some(damage) = damage {
            if let Err(e) = self.backend.submit(Some(&damage)) {
                tracing::warn!(?e, "presenting the nested window failed");
            }
        }
    }
}
