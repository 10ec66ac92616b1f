//! `FerroError` -> JS `Error`: the message is the core's `Display`, unchanged, and the
//! error's `name` is the variant's `FerroError::kind()` (`"InvalidParameter"`, `"NoImpact"`,
//! ...), so JS can tell failures apart without parsing the message.

use ferromotion_core::FerroError;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `Reflect.set(target, key, value)`: set a property without pulling in js-sys.
    #[wasm_bindgen(js_namespace = Reflect, js_name = set)]
    fn reflect_set(target: &JsValue, key: &str, value: &str) -> bool;
}

/// A JS `Error` carrying the core's message, named after the variant.
pub fn js_error(e: FerroError) -> JsError {
    let err = JsError::new(&e.to_string());
    // A clone is a second handle on the same JS object, so the name lands on `err` too.
    reflect_set(&JsValue::from(err.clone()), "name", e.kind());
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
