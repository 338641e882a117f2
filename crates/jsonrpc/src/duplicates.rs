//! Finding a repeated member name in a JSON text. `serde_json::Value` keeps the last of
//! two equal keys, so `{"decision":"decline","decision":"accept"}` would read as
//! `accept` here while a logging or filtering layer that reads the first sees `decline`.
//! RFC 8259 §4 leaves such objects' meaning open; Airlock refuses them.

use serde::Deserialize;
use serde::Deserializer;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// The first member name that appears twice in one object of `text` (at any depth), or
/// `None` (also for text that is not JSON: parsing it is the caller's job).
pub fn duplicate_key(text: &[u8]) -> Option<String> {
    match serde_json::from_slice::<Checked>(text) {
        Ok(Checked(found)) => found,
        Err(_) => None,
    }
}

/// Walks any JSON value; carries the first duplicate found below it.
struct Checked(Option<String>);

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Walker)
    }
}

struct Walker;

impl<'de> Visitor<'de> for Walker {
    type Value = Checked;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked(None))
    }
    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        let mut found = None;
        while let Some(Checked(inner)) = seq.next_element::<Checked>()? {
            found = found.or(inner);
        }
        Ok(Checked(found))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        let mut seen = std::collections::HashSet::new();
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            let Checked(inner) = map.next_value_seed(ValueSeed)?;
            if found.is_none() && !seen.insert(key.clone()) {
                found = Some(key);
            }
            found = found.or(inner);
        }
        Ok(Checked(found))
    }
}

struct ValueSeed;

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Checked;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Checked, D::Error> {
        Checked::deserialize(deserializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_repeated_members_at_any_depth() {
        assert_eq!(duplicate_key(br#"{"a":1,"b":2}"#), None);
        assert_eq!(
            duplicate_key(br#"{"decision":"decline","decision":"accept"}"#).as_deref(),
            Some("decision")
        );
        assert_eq!(
            duplicate_key(br#"{"result":{"x":[{"k":1,"k":2}]}}"#).as_deref(),
            Some("k")
        );
        // Escapes spell the same name.
        assert_eq!(
            duplicate_key(br#"{"a":1,"\u0061":2}"#).as_deref(),
            Some("a")
        );
        assert_eq!(duplicate_key(b"not json"), None);
    }
}
