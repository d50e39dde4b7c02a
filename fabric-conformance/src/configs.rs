//! The `configs` group: the accepted config plans, and for each declared schema generated
//! rejections (unknown field, wrong type, missing required) that the core refuses before
//! start, naming the field (the model schema's in `configs_models.rs`).

use fabric_config::{ErrorInfo, FabricConfig};
use serde_json::{Map, Value, json};

use crate::Context;
use crate::recorder::{Outcome, Recorder};

/// A name no schema declares.
pub(crate) const UNKNOWN: &str = "conformance_unknown_property";

pub(crate) fn run(context: &Context, recorder: &mut Recorder) {
    if !recorder.wants("configs") {
        return;
    }
    recorder.check("configs.accepted", || match context.plan(&context.config) {
        Ok(_) => Outcome::Passed("the accepted config plans".to_owned()),
        Err(info) => Outcome::Failed(
            "the accepted config does not plan".to_owned(),
            json!({"error": info}),
        ),
    });
    let accepted = !recorder.failed("configs");
    let schema = context.subject.loaded.descriptor.settings_schema.clone();
    for case in ["unknown_property", "wrong_type", "missing_required"] {
        let id = format!("configs.settings.{case}");
        recorder.check(&id, || {
            if !accepted {
                return Outcome::Skipped("the accepted config does not plan".to_owned());
            }
            let Some(schema) = &schema else {
                return Outcome::Skipped("the descriptor declares no settings_schema".to_owned());
            };
            match mutation(case, schema, &context.config) {
                Err(reason) => Outcome::Skipped(reason),
                Ok((field, config)) => rejected(
                    context,
                    "harness.settings",
                    &field,
                    config,
                    "/harness/settings",
                ),
            }
        });
    }
    crate::configs_models::run(context, recorder, accepted);
}

/// The settings of `config` changed as `case` says, with the field it concerns; `Err`
/// with the reason when the schema offers nothing to vary.
fn mutation(
    case: &str,
    schema: &Map<String, Value>,
    config: &FabricConfig,
) -> Result<(String, Value), String> {
    let mut value =
        serde_json::to_value(config).map_err(|_| "the config does not encode".to_owned())?;
    let properties = schema.get("properties").and_then(Value::as_object);
    let Some(harness) = value.get_mut("harness").and_then(Value::as_object_mut) else {
        return Err("the config selects a workflow target, not a harness".to_owned());
    };
    let settings = harness.entry("settings").or_insert_with(|| json!({}));
    let Some(settings) = settings.as_object_mut() else {
        return Err("the config's harness.settings is not an object".to_owned());
    };
    match case {
        "unknown_property" => {
            if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
                return Err("the settings schema allows unknown fields".to_owned());
            }
            settings.insert(UNKNOWN.to_owned(), json!(1));
            Ok((UNKNOWN.to_owned(), value))
        }
        "wrong_type" => {
            let Some((name, wrong)) = wrong_type(properties) else {
                return Err("no settings property declares a single type".to_owned());
            };
            settings.insert(name.clone(), wrong);
            Ok((name, value))
        }
        _ => {
            let Some(name) = crate::descriptor::required(schema).into_iter().next() else {
                return Err("the settings schema requires no field".to_owned());
            };
            settings.remove(&name);
            Ok((name, value))
        }
    }
}

/// The first property of `properties` declaring a single type, with a value of another type.
pub(crate) fn wrong_type(properties: Option<&Map<String, Value>>) -> Option<(String, Value)> {
    properties
        .into_iter()
        .flatten()
        .find_map(|(name, property)| {
            let wrong = match property.get("type")?.as_str()? {
                "string" => json!(12345),
                "integer" | "number" | "boolean" | "array" | "object" => {
                    json!("conformance-wrong-type")
                }
                _ => return None,
            };
            Some((name.clone(), wrong))
        })
}

/// Passes when the core refuses `config` before start with a message or path naming `field`
/// (`section.field` in the reasons; `pointer` is what the evidence shows of the config).
pub(crate) fn rejected(
    context: &Context,
    section: &str,
    field: &str,
    config: Value,
    pointer: &str,
) -> Outcome {
    let planned = FabricConfig::parse(&config.to_string())
        .map_err(ErrorInfo::from)
        .and_then(|parsed| context.plan(&parsed));
    let shown = config.pointer(pointer).cloned();
    match planned {
        Ok(_) => Outcome::Failed(
            format!("a config with a bad `{section}.{field}` was accepted"),
            json!({section: shown}),
        ),
        Err(info)
            if info.message.contains(field) || info.path().is_some_and(|p| p.contains(field)) =>
        {
            Outcome::Passed(format!(
                "`{section}.{field}` is refused before start ({})",
                info.code
            ))
        }
        Err(info) => Outcome::Failed(
            format!("the refusal does not name `{section}.{field}`"),
            json!({section: shown, "error": info}),
        ),
    }
}
