//! Integer fields that accept integral floats: `max_tokens: 2.0` is `2`, `2.5` is a type
//! error, as upstream 0.5.0's pydantic models read them (JSON Schema 2020-12 also calls
//! `2.0` an integer). Used through `#[serde(deserialize_with = ...)]` on the config's integer
//! fields; serialization is unchanged (the canonical form writes `2`).

use serde::de::{Deserializer, Error, Unexpected, Visitor};

struct Integral;

impl Visitor<'_> for Integral {
    type Value = u64;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a non-negative integer")
    }

    fn visit_u64<E: Error>(self, value: u64) -> Result<u64, E> {
        Ok(value)
    }

    fn visit_i64<E: Error>(self, value: i64) -> Result<u64, E> {
        u64::try_from(value).map_err(|_| E::invalid_value(Unexpected::Signed(value), &self))
    }

    fn visit_f64<E: Error>(self, value: f64) -> Result<u64, E> {
        // 2^64 as f64; every integral float below it converts exactly.
        if value.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&value) {
            Ok(value as u64)
        } else {
            Err(E::invalid_type(Unexpected::Float(value), &self))
        }
    }
}

/// A `u64` from an integer or an integral float.
pub(crate) fn u64_integral<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    deserializer.deserialize_any(Integral)
}

/// An optional `u64` from null, an integer or an integral float.
pub(crate) fn option_u64_integral<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    struct Optional;
    impl<'de> Visitor<'de> for Optional {
        type Value = Option<u64>;

        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            formatter.write_str("a non-negative integer")
        }

        fn visit_none<E: Error>(self) -> Result<Option<u64>, E> {
            Ok(None)
        }

        fn visit_unit<E: Error>(self) -> Result<Option<u64>, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Option<u64>, D::Error> {
            u64_integral(inner).map(Some)
        }
    }
    deserializer.deserialize_option(Optional)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "super::option_u64_integral")]
        value: Option<u64>,
        #[serde(default, deserialize_with = "super::u64_integral")]
        plain: u64,
    }

    fn read(json: &str) -> Result<(Option<u64>, u64), String> {
        serde_json::from_str::<Probe>(json)
            .map(|p| (p.value, p.plain))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn integral_floats_are_integers_and_fractions_are_not() {
        assert_eq!(read(r#"{"value": 2.0, "plain": 3.0}"#), Ok((Some(2), 3)));
        assert_eq!(read(r#"{"value": 2, "plain": 3}"#), Ok((Some(2), 3)));
        assert_eq!(read(r#"{"value": null}"#), Ok((None, 0)));
        assert_eq!(read("{}"), Ok((None, 0)));
        for bad in [
            r#"{"value": 2.5}"#,
            r#"{"value": -1}"#,
            r#"{"value": -1.0}"#,
            r#"{"value": "2"}"#,
            r#"{"value": true}"#,
            r#"{"plain": 1e30}"#,
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }
}
