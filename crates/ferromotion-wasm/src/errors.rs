//! `FerroError` -> JS `Error`: the message is the core's `Display`, unchanged, the error's
//! `name` is the variant's `FerroError::kind()` (`"InvalidParameter"`, `"NoImpact"`, ...),
//! and its `fields` the variant's fields as a plain object (`{name, value, limit}`, NaN
//! kept), so JS can tell failures apart and read their numbers without parsing the message.

use ferromotion_core::FerroError;
use wasm_bindgen::prelude::*;

/// A JS `Error` carrying the core's message, named after the variant, with its fields.
pub fn js_error(e: FerroError) -> JsError {
    let err = JsError::new(&e.to_string());
    // A clone is a second handle on the same JS object, so the properties land on `err` too.
    let target = JsValue::from(err.clone());
    let _ = js_sys::Reflect::set(&target, &"name".into(), &e.kind().into());
    if let Ok(fields) = crate::door::to_js(&e) {
        let _ = js_sys::Reflect::set(&target, &"fields".into(), &fields);
    }
    err
}

/// `.into_js()` on a core result: the `?`-friendly form of [`js_error`].
pub trait IntoJs<T> {
    /// Map the core's error to a named JS `Error`.
    fn into_js(self) -> Result<T, JsError>;
}

impl<T> IntoJs<T> for ferromotion_core::Result<T> {
    fn into_js(self) -> Result<T, JsError> {
        self.map_err(js_error)
    }
}
