//! Properties of the strict parser and the canonical writer.
#![allow(clippy::unwrap_used)]

use cq::json::{self, Limits, Value};
use proptest::prelude::*;

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[0-9]{1,40}".prop_map(|digits| json::parse(
            digits.trim_start_matches('0').as_bytes(),
            &Limits::default()
        )
        .unwrap_or(Value::Null)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| {
                json::parse(format!("{f:e}").as_bytes(), &Limits::default()).unwrap()
            }),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..8).prop_map(Value::Object),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn canonical_text_is_a_fixed_point(value in arb_value()) {
        let first = json::canonical(&value).unwrap();
        let reparsed = json::parse(first.as_bytes(), &Limits::default()).unwrap();
        prop_assert_eq!(json::canonical(&reparsed).unwrap(), first);
    }

    #[test]
    fn parser_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = json::parse(&bytes, &Limits::default());
        let _ = json::parse_python(&bytes);
    }

    #[test]
    fn parser_never_panics_on_json_like_text(text in r#"[\[\]{}",:0-9eE.+\-\\u a-fntrsl]{0,64}"#) {
        let _ = json::parse(text.as_bytes(), &Limits::default());
        let _ = json::parse_python(text.as_bytes());
    }
}
