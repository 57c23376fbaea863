//! Writing results: VTK image data, CSV tables and the run summary. The headless runner and
//! the app's data export use the same functions.

pub mod csv;
pub mod vti;
