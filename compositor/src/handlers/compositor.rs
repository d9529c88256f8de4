//! wl_compositor and wl_subcompositor: commits feed the window registry and the
//! frame accounting.

use smithay::backend::renderer::utils::on_commit_buffer_handler;
use smithay::delegate_compositor;
use smithay::reexports::wayland_server::protocol::wl_output;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::Client;
use smithay::wayland::compositor::{
    get_children, get_parent, is_sync_subsurface, with_states, CompositorClientState,
    CompositorHandler, CompositorState, Damage as SurfaceDamage, SurfaceAttributes,
};
use smithay::wayland::shell::xdg::SurfaceCachedState;
use smithay::wayland::viewporter::ViewportCachedState;
use wayrig_host::Rect;

use crate::rig::clients::ClientState;
use crate::rig::windows::{root_surface, Surface};
use crate::state::State;

impl CompositorHandler for State {
    fn compositor_state(&mut self) -> &mut CompositorState {
        &mut self.protocols.compositor_state
    }

    fn client_compositor_state<'a>(&self, client: &'a Client) -> &'a CompositorClientState {
        &client
            .get_data::<ClientState>()
            .expect("client inserted by wayrig")
            .compositor_state
    }

    fn commit(&mut self, surface: &WlSurface) {
        // Read before the buffer handler takes the damage.
        let own_damage = (get_parent(surface).is_none()).then(|| commit_damage(surface));
        on_commit_buffer_handler::<Self>(surface);
        if is_sync_subsurface(surface) {
            return;
        }
        let root = root_surface(surface);
        self.rig.windows.popups.commit(surface);
        let Some(id) = self.rig.windows.id_for_surface(&root) else {
            return;
        };
        let kind = self
            .rig
            .windows
            .registry
            .get(id)
            .map(|r| r.surface.surface.clone());
        match kind {
            Some(Surface::Toplevel(_)) => {
                if let (Some((rects, content, scale)), Some(rec)) =
                    (own_damage, self.rig.windows.registry.get_mut(id))
                {
                    rec.surface.damage.committed(rects, content, scale);
                }
                self.toplevel_committed(id)
            }
            Some(Surface::Popup(popup)) => self.rig.windows.popup_committed(id, &popup),
            None => {}
        }
        self.rig.note_commit(id);
        self.record_commit(id);
    }
}
delegate_compositor!(State);

/// A span of buffer pixels (start, length) as points at `scale`, rounded
/// outwards. Apps damage "everything" as (0, i32::MAX): the sums saturate
/// rather than overflow.
fn pixels_to_points(start: i32, length: i32, scale: i32) -> (i32, i32) {
    let from = start.div_euclid(scale);
    let to = start
        .saturating_add(length)
        .saturating_add(scale - 1)
        .div_euclid(scale);
    (from, to.saturating_sub(from))
}

/// What a root surface's commit damaged, in its content's coordinates
/// (logical points), with where the content lies in the surface and the
/// buffer scale. The rectangles are `None` where they cannot be placed: a
/// transformed or viewported buffer, or subsurfaces drawing beside it
/// (winit's title bar), whose own commits are not followed.
fn commit_damage(surface: &WlSurface) -> (Option<Vec<Rect>>, Rect, i32) {
    let has_subsurfaces = !get_children(surface).is_empty();
    with_states(surface, |states| {
        let geometry = states
            .cached_state
            .get::<SurfaceCachedState>()
            .current()
            .geometry;
        let viewported = {
            let mut viewport = states.cached_state.get::<ViewportCachedState>();
            let v = viewport.current();
            v.src.is_some() || v.dst.is_some()
        };
        let mut attrs = states.cached_state.get::<SurfaceAttributes>();
        let attrs = attrs.current();
        let scale = attrs.buffer_scale.max(1);
        let content = geometry
            .map(|g| Rect::new(g.loc.x, g.loc.y, g.size.w, g.size.h))
            .unwrap_or_default();
        let placeable = !has_subsurfaces
            && !viewported
            && attrs.buffer_transform == wl_output::Transform::Normal;
        let rects = placeable.then(|| {
            attrs
                .damage
                .iter()
                .map(|d| {
                    let (x, y, w, h) = match d {
                        SurfaceDamage::Surface(r) => (r.loc.x, r.loc.y, r.size.w, r.size.h),
                        SurfaceDamage::Buffer(r) => {
                            let (x, w) = pixels_to_points(r.loc.x, r.size.w, scale);
                            let (y, h) = pixels_to_points(r.loc.y, r.size.h, scale);
                            (x, y, w, h)
                        }
                    };
                    Rect::new(
                        x.saturating_sub(content.x),
                        y.saturating_sub(content.y),
                        w,
                        h,
                    )
                })
                .collect()
        });
        (rects, content, scale)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_damage_is_rounded_out_to_points_and_everything_saturates() {
        assert_eq!(
            pixels_to_points(3, 4, 2),
            (1, 3),
            "pixels 3..7 are points 1..4"
        );
        assert_eq!(
            pixels_to_points(-3, 2, 2),
            (-2, 2),
            "pixels -3..-1 are points -2..0"
        );
        // damage_buffer(0, 0, INT32_MAX, INT32_MAX), as EGL sends for "all".
        assert_eq!(pixels_to_points(0, i32::MAX, 1), (0, i32::MAX));
        assert_eq!(pixels_to_points(0, i32::MAX, 2), (0, i32::MAX / 2));
        assert_eq!(pixels_to_points(i32::MAX, i32::MAX, 3).1, 0);
        assert_eq!(
            pixels_to_points(i32::MIN, i32::MAX, 1),
            (i32::MIN, i32::MAX)
        );
    }
}
