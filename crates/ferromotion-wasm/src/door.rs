//! The door between JS values and the core's serde types: one reader ([`from_js`], [`read`])
//! and one writer ([`to_js`]) for every export, as ruff's wasm crate has one `from_value`.
//!
//! serde-wasm-bindgen alone looks up only a struct's own fields, so a misspelled key never
//! reaches the struct and its `deny_unknown_fields`. The reader here walks the value itself:
//! every key of a plain object is handed to the struct (at every depth: a `Drop` inside a
//! `WorkbenchConfig`, a `ToleranceOptions` inside a `SweepOptions`), so the core's structs
//! refuse what they do not know as natively, in serde's own words ("unknown field `heigth`,
//! expected one of ..."). Anything that is not an object or an array (numbers, strings, enum
//! names, typed arrays) is read by serde-wasm-bindgen as before. A property that is
//! `undefined` counts as absent, as JS's optional properties do.

use crate::errors::js_error;
use ferromotion_core::FerroError;
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

type Error = serde_wasm_bindgen::Error;

/// A core value as a JS value: structs as plain objects (also when flattened), `None` as
/// `null`, f64 as JS numbers (NaN and ±Infinity included), u64 counts as numbers.
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    let s = serde_wasm_bindgen::Serializer::new()
        .serialize_missing_as_null(true)
        .serialize_maps_as_objects(true);
    value
        .serialize(&s)
        .map_err(|e| JsError::new(&format!("could not convert a result for JS: {e}")))
}

/// A JS value as one of the core's serde structs; `undefined` or `null` means its defaults.
pub fn from_js<T: DeserializeOwned + Default>(value: JsValue) -> Result<T, JsError> {
    if value.is_undefined() || value.is_null() {
        return Ok(T::default());
    }
    read(value)
}

/// A JS value as a core serde type. A malformed value is the core's `Scenario` error: an
/// unknown key (refused by the struct's `deny_unknown_fields`) or a wrong type, named by
/// the key it failed on (`` `max_steps` must be a whole number, 0 or more, not ... ``), as the native binding's
/// options reader names it.
pub fn read<T: DeserializeOwned>(value: JsValue) -> Result<T, JsError> {
    core_value(value).map_err(js_error)
}

/// [`read`] with the core's error, for a value read while the core runs (a callback's answer).
pub fn core_value<T: DeserializeOwned>(value: JsValue) -> ferromotion_core::Result<T> {
    T::deserialize(Strict(value)).map_err(|e| {
        // In the user's words, as natively (the core's `option_message`: an unknown option
        // lists the options; an unknown variant was named by its key below).
        FerroError::Scenario(ferromotion_core::error::option_message(None, &message(e)))
    })
}

/// serde's message itself (the error is a JS `Error`; its `String` adds "Error: ").
fn message(e: Error) -> String {
    JsValue::from(e)
        .dyn_into::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .unwrap_or_else(|v| format!("{v:?}"))
}

/// A JS value read with every key of every plain object handed to serde.
struct Strict(JsValue);

impl Strict {
    fn plain(self) -> serde_wasm_bindgen::Deserializer {
        serde_wasm_bindgen::Deserializer::from(self.0)
    }

    /// The value as a plain object (not an array, a typed array, a Map or a function).
    fn object(&self) -> Option<&js_sys::Object> {
        let is_plain = self.0.is_object()
            && !js_sys::Array::is_array(&self.0)
            && !ArrayBuffer::is_view(&self.0)
            && !self.0.is_instance_of::<js_sys::Map>();
        is_plain.then(|| self.0.unchecked_ref())
    }
}

#[wasm_bindgen]
extern "C" {
    type ArrayBuffer;
    /// `ArrayBuffer.isView(value)`: a typed array (read as a sequence by serde-wasm-bindgen).
    #[wasm_bindgen(static_method_of = ArrayBuffer, js_name = isView)]
    fn is_view(value: &JsValue) -> bool;
}

/// The methods read by serde-wasm-bindgen as they are.
macro_rules! plain {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.plain().$method(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Strict {
    type Error = Error;

    plain!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_unit,
        deserialize_identifier,
        deserialize_ignored_any
    );

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.0.is_undefined() || self.0.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.plain().deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.dyn_ref::<js_sys::Array>() {
            Some(items) => {
                visitor.visit_seq(de::value::SeqDeserializer::new(items.iter().map(Strict)))
            }
            None => self.plain().deserialize_seq(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.object() {
            Some(object) => visitor.visit_map(Entries::new(object)),
            None => self.plain().deserialize_map(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.object() {
            Some(object) => visitor.visit_map(Entries::new(object)),
            None => self.plain().deserialize_struct(name, fields, visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.plain().deserialize_enum(name, variants, visitor)
    }
}

impl<'de> IntoDeserializer<'de, Error> for Strict {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// Every own key of a plain object with a defined value, in the object's order.
struct Entries {
    items: std::vec::IntoIter<(String, JsValue)>,
    key: String,
    value: Option<JsValue>,
}

impl Entries {
    fn new(object: &js_sys::Object) -> Self {
        let items: Vec<(String, JsValue)> = js_sys::Object::entries(object)
            .iter()
            .filter_map(|entry| {
                let entry: js_sys::Array = entry.unchecked_into();
                let value = entry.get(1);
                let key = entry.get(0).as_string()?;
                (!value.is_undefined()).then_some((key, value))
            })
            .collect();
        Entries {
            items: items.into_iter(),
            key: String::new(),
            value: None,
        }
    }
}

impl<'de> de::MapAccess<'de> for Entries {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.items.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        let read = seed.deserialize(key.as_str().into_deserializer()).map(Some);
        self.key = key;
        read
    }

    /// The value, an error in it named by its key when serde's message names nothing (a
    /// wrong type, in the core's words): `` `max_steps` must be a whole number, 0 or more, not the string "x" ``.
    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self.value.take().unwrap_or(JsValue::UNDEFINED);
        seed.deserialize(Strict(value)).map_err(|e| {
            let text = message(e);
            if text.starts_with("unknown variant") || text.starts_with("invalid type: ") {
                de::Error::custom(ferromotion_core::error::option_message(
                    Some(&self.key),
                    &text,
                ))
            } else if text.contains('`') {
                de::Error::custom(text)
            } else {
                de::Error::custom(format!("`{}`: {text}", self.key))
            }
        })
    }
}
