//! What the browser lab and the Python package show: the workbench (the lab's controls and
//! every readout for them), sweeps over stiffness, the readouts' definitions, and the
//! scenario documents behind golden files and presets; the clock the bindings inject so
//! that the cost readouts carry wall time.

pub mod clock;
pub mod readout;
pub mod scenario;
pub mod sweep;
pub mod workbench;
