//! The update step: state + event in, new state + effects out. Pure: no I/O, no waiting.

use super::event::{AppEvent, Effect};
use super::state::App;

/// Apply one event to the state; what must happen outside comes back as effects.
pub fn update(_app: &mut App, _event: AppEvent) -> Vec<Effect> {
    Vec::new()
}
