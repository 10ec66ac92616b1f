//! Conversions between Python objects and the core's types, and nothing else.
//!
//! Options enter as the core's own serde structs, read from a dict ([`Options`]); scalar
//! results leave as the core's serde document ([`document`]: dicts, lists, floats, NaN kept);
//! sweeps, trajectories and matrices leave as numpy arrays.
//!
//! Matrices leave in row-major order: `J[i, j] = d x_i(T) / d x_j(0)`. nalgebra stores
//! column-major; `matrix_array` / `matrix_from` here are the only place that reshapes.
//!
//! Python callables the core calls back (`check_gradient`'s objective, a Python-defined
//! `HybridSystem`) go through [`Raised`]: the first exception is kept and re-raised unchanged
//! once the core returns.

use crate::errors::{invalid_parameter, py_result};
use ferromotion_core::experiments::descent::Arm;
use ferromotion_core::{Drop, FerroError};
use nalgebra::DMatrix;
use numpy::{
    AllowTypeChange, PyArray1, PyArrayDyn, PyArrayLikeDyn, PyArrayMethods, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use std::cell::RefCell;

/// Options as the core's own serde struct, read from a dict, or from a pair of tuples
/// `(names, values)` that stands for `dict(zip(names, values))` (the routes' form: two tuples
/// cost a Python function far less to build than a dict): missing keys take the core's
/// defaults; an unknown key or a wrong type is refused as the core refuses a document it
/// cannot read (`ScenarioError`, naming the key).
///
/// Flat entries, `None`, bools, floats, ints and strings (every route's options), are read
/// straight into the struct by [`flat`], with no intermediate document and no allocation (a
/// route called in a loop pays it per call); anything else, and anything that struct
/// refuses, goes through pythonize as a dict, whose error the caller sees.
pub struct Options<T>(pub T);

impl<'a, 'py, T: DeserializeOwned> FromPyObject<'a, 'py> for Options<T> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        use pyo3::types::PyDict;
        let py = obj.py();
        let mut obj = obj.to_owned();
        if let Some((names, values)) = flat::pair(&obj) {
            let entries = || names.iter().zip(values.iter());
            match T::deserialize(flat::Entries::new(entries())) {
                Ok(t) => return Ok(Options(t)),
                Err(e) => flat::refuse::<T, _>(entries, &e)?,
            }
            let dict = PyDict::new(py);
            for (name, value) in entries() {
                dict.set_item(name, value)?;
            }
            obj = dict.into_any();
        } else if let Ok(dict) = obj.cast::<PyDict>() {
            match T::deserialize(flat::Entries::new(dict.iter())) {
                Ok(t) => return Ok(Options(t)),
                Err(e) => flat::refuse::<T, _>(|| dict.iter(), &e)?,
            }
        }
        let read = pythonize::depythonize(&obj).map_err(|e| {
            FerroError::Scenario(named(&obj, &e.to_string(), |one| {
                pythonize::depythonize::<T>(one).is_err()
            }))
        });
        py_result(read).map(Options)
    }
}

/// A serde deserializer over flat entries (a dict's, or a pair of tuples'): string keys; values `None`, bools, floats, ints
/// (i64/u64) and strings (read as a unit enum variant where the struct wants one). Anything
/// else is an error, and the caller then reads the dict through pythonize instead.
///
/// Keys and variant names are matched against the struct's own names as interned Python
/// strings (a key written in Python source is that same object), so a route called in a
/// loop copies no text; any other string is read as text.
mod flat {
    use pyo3::prelude::*;
    use pyo3::sync::PyOnceLock;
    use pyo3::types::{PyBool, PyFloat, PyInt, PyString, PyTuple};
    use serde::de::{self, value::Error, DeserializeOwned, IntoDeserializer, Visitor};
    use std::sync::Mutex;

    /// The entries, as a deserializer of the whole struct and then as its map.
    pub struct Entries<'py, I> {
        items: I,
        fields: &'static [&'static str],
        interned: Option<Interned>,
        value: Option<Bound<'py, PyAny>>,
    }

    impl<'py, I: Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>> Entries<'py, I> {
        pub fn new(items: I) -> Self {
            Entries {
                items,
                fields: &[],
                interned: None,
                value: None,
            }
        }
    }

    /// `(names, values)`: two tuples of the same length.
    pub fn pair<'py>(
        obj: &Bound<'py, PyAny>,
    ) -> Option<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
        let pair = obj.cast::<PyTuple>().ok()?;
        if pair.len() != 2 {
            return None;
        }
        let names = pair.get_item(0).ok()?.cast_into::<PyTuple>().ok()?;
        let values = pair.get_item(1).ok()?.cast_into::<PyTuple>().ok()?;
        (names.len() == values.len()).then_some((names, values))
    }
    struct Value<'py>(Bound<'py, PyAny>);

    /// What [`refused`] says: the entries are not all flat, and pythonize reads them instead.
    const NOT_FLAT: &str = "not a flat value";

    fn refused<T>() -> Result<T, Error> {
        Err(de::Error::custom(NOT_FLAT))
    }

    /// `Ok(())` when the flat reading failed only because some entry is not flat (pythonize
    /// then reads the whole); otherwise the flat reading's own refusal, final: every value is
    /// a plain None, bool, float, int or string that the struct does not take as it is, and
    /// pythonize would be laxer about it (it reads any object as a bool by its truth, so
    /// `events="no"` would mean True). The refusal names the entry whose one-entry reading
    /// fails the same way (a struct with required fields fails otherwise with one entry).
    pub fn refuse<'py, T, I>(entries: impl Fn() -> I, error: &Error) -> PyResult<()>
    where
        T: DeserializeOwned,
        I: Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    {
        let message = error.to_string();
        if message == NOT_FLAT {
            return Ok(());
        }
        let key = entries().find_map(|(key, value)| {
            let one = T::deserialize(Entries::new(std::iter::once((key.clone(), value))));
            matches!(one, Err(e) if e.to_string() == message).then(|| key.to_string())
        });
        let words = ferromotion_core::error::option_message(key.as_deref(), &message);
        crate::errors::py_result(Err(ferromotion_core::FerroError::Scenario(words)))
    }

    type Interned = &'static [Py<PyString>];

    /// `names` (a struct's fields or an enum's variants) as interned Python strings, made
    /// once per list.
    fn interned(py: Python<'_>, names: &'static [&'static str]) -> Option<Interned> {
        static LISTS: PyOnceLock<Mutex<Vec<(usize, Interned)>>> = PyOnceLock::new();
        if names.is_empty() {
            return None;
        }
        let mut lists = LISTS.get_or_init(py, Default::default).lock().ok()?;
        let at = names.as_ptr() as usize;
        if let Some((_, made)) = lists.iter().find(|(list, _)| *list == at) {
            return Some(made);
        }
        let made: Vec<Py<PyString>> = names
            .iter()
            .map(|n| PyString::intern(py, n).unbind())
            .collect();
        let made: Interned = Box::leak(made.into_boxed_slice());
        lists.push((at, made));
        Some(made)
    }

    /// A string's text: one of `names` without a copy when it is that name's interned
    /// string (`interned`, the same list), else read from Python.
    fn read<T>(
        text: &Bound<'_, PyString>,
        names: &'static [&'static str],
        interned: Option<Interned>,
        visit: impl FnOnce(&str) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let known = interned.and_then(|i| i.iter().position(|n| n.as_ptr() == text.as_ptr()));
        match known {
            Some(at) => visit(names[at]),
            None => match text.to_cow() {
                Ok(owned) => visit(&owned),
                Err(_) => refused(),
            },
        }
    }

    impl<'de, 'py, I: Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>> de::Deserializer<'de>
        for Entries<'py, I>
    {
        type Error = Error;
        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.deserialize_struct("", &[], visitor)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Error> {
            let mut entries = self;
            entries.fields = fields;
            visitor.visit_map(entries)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }

    impl<'de, 'py, I: Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>> de::MapAccess<'de>
        for Entries<'py, I>
    {
        type Error = Error;
        fn next_key_seed<K: de::DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, Error> {
            let Some((key, value)) = self.items.next() else {
                return Ok(None);
            };
            let Ok(key) = key.cast::<PyString>() else {
                return refused();
            };
            if self.interned.is_none() {
                self.interned = interned(key.py(), self.fields);
            }
            self.value = Some(value);
            read(key, self.fields, self.interned, |k| {
                seed.deserialize(k.into_deserializer()).map(Some)
            })
        }
        fn next_value_seed<V: de::DeserializeSeed<'de>>(
            &mut self,
            seed: V,
        ) -> Result<V::Value, Error> {
            match self.value.take() {
                Some(value) => seed.deserialize(Value(value)),
                None => refused(),
            }
        }
    }

    impl<'de> de::Deserializer<'de> for Value<'_> {
        type Error = Error;
        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let v = &self.0;
            if v.is_none() {
                visitor.visit_unit()
            } else if let Ok(b) = v.cast::<PyBool>() {
                visitor.visit_bool(b.is_true())
            } else if let Ok(f) = v.cast::<PyFloat>() {
                visitor.visit_f64(f.value())
            } else if v.cast::<PyInt>().is_ok() {
                match v.extract::<i64>() {
                    Ok(i) => visitor.visit_i64(i),
                    Err(_) => match v.extract::<u64>() {
                        Ok(u) => visitor.visit_u64(u),
                        Err(_) => refused(),
                    },
                }
            } else if let Ok(text) = v.cast::<PyString>() {
                read(text, &[], None, |t| visitor.visit_str(t))
            } else {
                refused()
            }
        }
        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            if self.0.is_none() {
                visitor.visit_none()
            } else {
                visitor.visit_some(self)
            }
        }
        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _name: &'static str,
            variants: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Error> {
            let Ok(text) = self.0.cast::<PyString>() else {
                return refused();
            };
            let interned = interned(text.py(), variants);
            read(text, variants, interned, |t| {
                visitor.visit_enum(t.into_deserializer())
            })
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf unit unit_struct newtype_struct seq tuple tuple_struct map
            struct identifier ignored_any
        }
    }
}

/// `message` prefixed with the key at fault when it names nothing: pythonize reports a wrong
/// Python type or value (`max_steps = -1` for a count) as the Python exception alone
/// ("OverflowError: can't convert negative int to unsigned"). serde's unknown key or variant
/// is put in the user's words by the core (`option_message`: an unknown variant names its key
/// and the choices), the same text as the WebAssembly door's. The key is the first whose
/// one-entry dict is refused on its own (`fails`); the options structs take defaults for the rest.
fn named(
    obj: &Bound<'_, PyAny>,
    message: &str,
    fails: impl Fn(&Bound<'_, PyAny>) -> bool,
) -> String {
    let words = ferromotion_core::error::option_message;
    let Ok(dict) = obj.cast::<pyo3::types::PyDict>() else {
        return words(None, message);
    };
    // serde's other messages with a name in backticks (unknown or missing field) name it already.
    if message.contains('`') && !message.starts_with("unknown variant") {
        return words(None, message);
    }
    for (key, value) in dict.iter() {
        let one = pyo3::types::PyDict::new(obj.py());
        if one.set_item(&key, value).is_ok() && fails(one.as_any()) {
            return words(Some(&key.to_string()), message);
        }
    }
    words(None, message)
}

/// The clock the routes, the workbench and sweeps are timed with: the core's
/// `Instant`-based monotonic seconds (the readouts' `wall_s`), its resolution estimated once.
pub fn clock() -> ferromotion_core::Clock {
    static CLOCK: std::sync::OnceLock<ferromotion_core::Clock> = std::sync::OnceLock::new();
    *CLOCK.get_or_init(|| {
        ferromotion_core::Clock::new(ferromotion_core::lab::clock::monotonic_seconds)
    })
}

/// A core value as JSON text, for the export paths that write a file (`to_json`).
pub fn to_json<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// `None` (or no argument) takes the core's defaults.
pub fn options<T: Default>(o: Option<Options<T>>) -> T {
    o.map(|o| o.0).unwrap_or_default()
}

/// A core value as its serde document: dicts, numbers (NaN stays NaN), tuples for the
/// core's fixed-size arrays, lists for its vectors.
pub fn document<'py, T: serde::Serialize>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, value)?)
}

/// A core value as the JSON document the lab reads (lists; a non-finite number is None),
/// without the text: for `evaluate` (the golden files' format) and the workbench readout.
pub fn json_document<'py, T: serde::Serialize>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let v = serde_json::to_value(value).map_err(FerroError::from);
    Ok(pythonize::pythonize(py, &py_result(v)?)?)
}

/// A drop read from any object with the attributes `height`, `velocity`, `t_final`,
/// `gravity`, `mass` and `zeta` (the public `ferromotion.Drop`), validated by the core.
pub struct DropArg(pub Drop);

impl<'a, 'py> FromPyObject<'a, 'py> for DropArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        // Interned names: a route called in a loop reads six attributes per call.
        let get = |name: &Bound<'py, pyo3::types::PyString>| obj.getattr(name)?.extract::<f64>();
        let drop = Drop::new(
            get(pyo3::intern!(py, "height"))?,
            get(pyo3::intern!(py, "velocity"))?,
            get(pyo3::intern!(py, "t_final"))?,
            get(pyo3::intern!(py, "gravity"))?,
            get(pyo3::intern!(py, "mass"))?,
            get(pyo3::intern!(py, "zeta"))?,
        );
        Ok(DropArg(py_result(drop)?))
    }
}

/// Stiffnesses from a float64 array of shape (n,).
pub fn ks_from(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let py = obj.py();
    let Ok(arr) = obj.cast::<PyArrayDyn<f64>>() else {
        let what = match obj.getattr("dtype") {
            Ok(dtype) => format!("an array of dtype {dtype}"),
            Err(_) => format!("{}", obj.get_type().name()?),
        };
        return Err(invalid_parameter(
            py,
            format!(
                "invalid parameter `k`: expected a float64 numpy array of shape (n,), got {what}"
            ),
        ));
    };
    if arr.ndim() != 1 {
        return Err(invalid_parameter(
            py,
            format!(
                "invalid parameter `k`: expected array of shape (n,), got {:?}",
                Shape(arr.shape())
            ),
        ));
    }
    let view = arr.readonly();
    Ok(view.as_array().iter().copied().collect())
}

/// A shape printed the numpy way: `(3, 2)`, `(4,)`, `()`.
struct Shape<'a>(&'a [usize]);

impl std::fmt::Debug for Shape<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            [n] => write!(f, "({n},)"),
            dims => {
                let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
                write!(f, "({})", parts.join(", "))
            }
        }
    }
}

/// A gradient arm of the descent experiment, read from any object with the attributes
/// `route` (`"exact"`, `"fixed"`, `"tolerance"`, `"corrected"` or `"central_differences"`)
/// and `k`, `dt`, `rtol` (floats, or None where the route takes none; the public
/// `ferromotion.Arm`). The core validates the numbers when the arm runs.
pub struct ArmArg(pub Arm);

impl<'a, 'py> FromPyObject<'a, 'py> for ArmArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        let route: String = obj.getattr("route")?.extract()?;
        let number = |name: &str| -> PyResult<f64> {
            obj.getattr(name)?.extract::<Option<f64>>()?.ok_or_else(|| {
                invalid_parameter(
                    py,
                    format!("invalid parameter `{name}`: the `{route}` arm needs {name}, got None"),
                )
            })
        };
        Ok(ArmArg(match route.as_str() {
            "exact" => Arm::Exact,
            "fixed" => Arm::Fixed {
                k: number("k")?,
                dt: number("dt")?,
            },
            "tolerance" => Arm::Tolerance {
                k: number("k")?,
                rtol: number("rtol")?,
            },
            "corrected" => Arm::Corrected {
                k: number("k")?,
                dt: number("dt")?,
            },
            "central_differences" => Arm::CentralDifferences,
            other => {
                return Err(invalid_parameter(
                    py,
                    format!(
                    "invalid parameter `route` = {other:?}: must be one of \"exact\", \"fixed\", \
                         \"tolerance\", \"corrected\", \"central_differences\""
                ),
                ))
            }
        }))
    }
}

/// Numbers of a given shape from any array-like (lists, other dtypes), read in row-major
/// order; a wrong shape raises `InvalidParameter` naming `what` and both shapes.
/// `None` in `shape` accepts any length along that axis.
pub fn floats(obj: &Bound<'_, PyAny>, what: &str, shape: &[Option<usize>]) -> PyResult<Vec<f64>> {
    Ok(shaped(obj, what, shape)?.0)
}

/// `floats` with the shape found.
fn shaped(
    obj: &Bound<'_, PyAny>,
    what: &str,
    shape: &[Option<usize>],
) -> PyResult<(Vec<f64>, Vec<usize>)> {
    let py = obj.py();
    let arr: PyArrayLikeDyn<'_, f64, AllowTypeChange> = obj.extract().map_err(|e: PyErr| {
        invalid_parameter(
            py,
            format!("invalid parameter `{what}`: expected numbers: {e}"),
        )
    })?;
    let fits = arr.ndim() == shape.len()
        && arr
            .shape()
            .iter()
            .zip(shape)
            .all(|(&n, s)| s.is_none_or(|s| s == n));
    if !fits {
        let dims: Vec<String> = shape
            .iter()
            .zip(["n", "m"].iter().chain(std::iter::repeat(&"k")))
            .map(|(s, letter)| s.map_or_else(|| letter.to_string(), |n| n.to_string()))
            .collect();
        let expected = match dims.as_slice() {
            [one] => format!("({one},)"),
            many => format!("({})", many.join(", ")),
        };
        return Err(invalid_parameter(
            py,
            format!(
                "invalid parameter `{what}`: expected array of shape {expected}, got {:?}",
                Shape(arr.shape())
            ),
        ));
    }
    Ok((
        arr.as_array().iter().copied().collect(),
        arr.shape().to_vec(),
    ))
}

/// A row-major (rows, cols) array from a (column-major) nalgebra matrix.
pub fn matrix_array<'py>(py: Python<'py>, m: &DMatrix<f64>) -> PyResult<Bound<'py, PyAny>> {
    let (r, c) = m.shape();
    let flat = (0..r).flat_map(|i| (0..c).map(move |j| m[(i, j)]));
    Ok(PyArray1::from_iter(py, flat).reshape([r, c])?.into_any())
}

/// A (rows, cols) array of any shape as an nalgebra matrix: `J[i, j]` stays `J[i, j]`.
pub fn matrix_from(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<DMatrix<f64>> {
    let (data, shape) = shaped(obj, what, &[None, None])?;
    Ok(DMatrix::from_row_slice(shape[0], shape[1], &data))
}

/// The first exception a Python callback raised while the core ran. The core sees a
/// placeholder error (or, inside `HybridSystem` methods, NaN), every later callback is
/// skipped, and `finish` raises the kept exception unchanged.
#[derive(Default)]
pub struct Raised(RefCell<Option<PyErr>>);

impl Raised {
    /// Run `f` unless a callback already raised; keep its exception.
    pub fn call<T>(&self, f: impl FnOnce() -> PyResult<T>) -> Option<T> {
        if self.0.borrow().is_some() {
            return None;
        }
        f().map_err(|e| *self.0.borrow_mut() = Some(e)).ok()
    }

    /// `call` as a core result.
    pub fn core<T>(&self, f: impl FnOnce() -> PyResult<T>) -> ferromotion_core::Result<T> {
        self.call(f).ok_or_else(|| FerroError::InvalidParameter {
            name: "callback",
            value: f64::NAN,
            limit: "a Python callback raised (its exception is re-raised)".into(),
        })
    }

    /// The kept exception if there is one, else the core's result.
    pub fn finish<T>(self, r: ferromotion_core::Result<T>) -> PyResult<T> {
        match self.0.into_inner() {
            Some(e) => Err(e),
            None => py_result(r),
        }
    }
}
