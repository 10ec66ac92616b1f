//! Measured kinematics ([`Observations`]) and their validation into whitened channels.

use crate::error::{positive, FerroError, Result};
use serde::{Deserialize, Serialize};

/// Measured kinematics: heights and/or velocities at sample times.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Observations {
    /// Sample times, s (strictly increasing, >= 0; the last is the horizon).
    pub t: Vec<f64>,
    /// Heights, m (same length as `t`), if measured.
    pub y: Option<Vec<f64>>,
    /// Velocities, m/s, if measured.
    pub v: Option<Vec<f64>>,
    /// Standard deviation of a height, m.
    pub sigma_y: Option<f64>,
    /// Standard deviation of a velocity, m/s.
    pub sigma_v: Option<f64>,
    /// Which heights count (true) or are missing (false); `None`: every height.
    pub mask_y: Option<Vec<bool>>,
    /// Which velocities count.
    pub mask_v: Option<Vec<bool>>,
}

/// One channel, validated: values, σ and which entries count.
#[derive(Debug, Clone)]
pub(super) struct Channel {
    pub(super) values: Vec<f64>,
    pub(super) sigma: f64,
    pub(super) used: Vec<bool>,
}

/// A number as a person writes it: at most six significant digits, trailing zeros dropped
/// (`0.05003` for 0.050030000000000005), in the errors a user reads.
pub(super) fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (5 - libm::floor(libm::log10(x.abs())) as i32).clamp(0, 17) as usize;
    let text = format!("{x:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Every sample time a whole number of fixed steps `dt` (the grid routes read their state
/// at step ends), refused naming the first sample off the grid.
pub(super) fn on_grid(t: &[f64], dt: f64, route: &str) -> Result<()> {
    positive("dt", dt)?;
    for (i, &ti) in t.iter().enumerate() {
        let n = libm::round(ti / dt);
        if ti > 0.0 && (n < 1.0 || ((n * dt - ti) / ti).abs() > 1e-9) {
            return Err(invalid(
                "t",
                ti,
                format!(
                    "sample {i} (t = {} s) is not a whole number of steps dt = {} s: the {} route reads its state at step ends; give sample times on that grid, a dt that divides them, or the `flow` route (any times)",
                    short(ti),
                    short(dt),
                    route
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn invalid(name: &'static str, value: f64, limit: String) -> FerroError {
    FerroError::InvalidParameter { name, value, limit }
}

impl Observations {
    /// Validate the sample times.
    pub(super) fn times(&self) -> Result<()> {
        for (i, &t) in self.t.iter().enumerate() {
            if !(t.is_finite() && t >= 0.0) {
                return Err(invalid(
                    "t",
                    t,
                    format!("sample {i}: times must be finite and >= 0 s"),
                ));
            }
            if i > 0 && !(t > self.t[i - 1]) {
                return Err(invalid(
                    "t",
                    t,
                    format!(
                        "sample {i}: times must increase strictly (previous {} s)",
                        short(self.t[i - 1])
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Validate and return (heights, velocities).
    pub(super) fn channels(&self) -> Result<(Option<Channel>, Option<Channel>)> {
        let n = self.t.len();
        self.times()?;
        let chan = |vals: &Option<Vec<f64>>,
                    sigma: Option<f64>,
                    mask: &Option<Vec<bool>>,
                    vname: &'static str,
                    sname: &'static str,
                    mname: &'static str|
         -> Result<Option<Channel>> {
            let Some(values) = vals else {
                if mask.is_some() {
                    return Err(invalid(
                        mname,
                        f64::NAN,
                        format!("a mask without the `{vname}` channel"),
                    ));
                }
                return Ok(None);
            };
            if values.len() != n {
                return Err(invalid(
                    vname,
                    values.len() as f64,
                    format!(
                        "expected {n} values (one per sample time), got {}",
                        values.len()
                    ),
                ));
            }
            let sigma = sigma.ok_or_else(|| {
                invalid(
                    sname,
                    f64::NAN,
                    format!("the `{vname}` channel needs its standard deviation `{sname}` (> 0)"),
                )
            })?;
            positive(sname, sigma)?;
            let used = match mask {
                Some(m) if m.len() != n => {
                    return Err(invalid(
                        mname,
                        m.len() as f64,
                        format!(
                            "expected {n} entries (one per sample time), got {}",
                            m.len()
                        ),
                    ))
                }
                Some(m) => m.clone(),
                None => vec![true; n],
            };
            for (i, (&x, &u)) in values.iter().zip(&used).enumerate() {
                if u && !x.is_finite() {
                    return Err(invalid(
                        vname,
                        x,
                        format!(
                            "sample {i} (t = {} s) is not finite; mask it out if it is missing",
                            short(self.t[i])
                        ),
                    ));
                }
            }
            Ok(Some(Channel {
                values: values.clone(),
                sigma,
                used,
            }))
        };
        let y = chan(
            &self.y,
            self.sigma_y,
            &self.mask_y,
            "y",
            "sigma_y",
            "mask_y",
        )?;
        let v = chan(
            &self.v,
            self.sigma_v,
            &self.mask_v,
            "v",
            "sigma_v",
            "mask_v",
        )?;
        if y.is_none() && v.is_none() {
            return Err(invalid(
                "y",
                f64::NAN,
                "no observations: give heights `y` and/or velocities `v`".into(),
            ));
        }
        Ok((y, v))
    }
}

/// Whitened residuals (prediction − value)/σ of one channel at every sample time, NaN where
/// masked or not measured.
pub(super) fn whitened(ch: &Option<Channel>, p: &[f64]) -> Vec<f64> {
    match ch {
        Some(c) => (0..p.len())
            .map(|i| {
                if c.used[i] {
                    (p[i] - c.values[i]) / c.sigma
                } else {
                    f64::NAN
                }
            })
            .collect(),
        None => vec![f64::NAN; p.len()],
    }
}
