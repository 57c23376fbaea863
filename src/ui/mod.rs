//! The app's egui side: state (GPU-free, testable), panels and plots, reference data.

pub mod panel;
pub mod reference;
pub mod rewind;
pub mod speed;
pub mod state;
