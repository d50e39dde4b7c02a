//! The model-schema rejections of the `configs` group: derived from the descriptor's
//! declared model requirements (`model_schema`, and whether `config.accepts` names
//! `models.base_url`) as the settings rejections are from `settings_schema`. Each case is a
//! config whose model entry the adapter must refuse; the core must refuse it at plan,
//! naming the field:
//!
//! - `configs.models.unknown_property`: a field the closed model schema does not declare
//!   (an unchecked model extension schema letting it through fails this);
//! - `configs.models.wrong_type`: the first single-typed property with another type;
//! - `configs.models.missing_required`: each required field (the model name, a required
//!   `base_url`, …) removed in turn;
//! - `configs.models.wrong_value`: the first enumerated property (a provider or protocol)
//!   with a value outside its list;
//! - `configs.models.base_url_unaccepted`: a `base_url` for an adapter that does not accept
//!   `models.base_url`.

use fabric_config::descriptor::AdapterConfigField;
use fabric_config::{ErrorInfo, FabricConfig};
use serde_json::{Map, Value, json};

use crate::Context;
use crate::configs::{UNKNOWN, rejected, wrong_type};
use crate::recorder::{Outcome, Recorder};

const CASES: [&str; 5] = [
    "unknown_property",
    "wrong_type",
    "missing_required",
    "wrong_value",
    "base_url_unaccepted",
];

/// Runs the model cases after `configs.accepted` (`accepted`: whether it passed).
pub(crate) fn run(context: &Context, recorder: &mut Recorder, accepted: bool) {
    let base = if accepted {
        base(context)
    } else {
        Err("the accepted config does not plan".to_owned())
    };
    for case in CASES {
        recorder.check(&format!("configs.models.{case}"), || match &base {
            Err(reason) => Outcome::Skipped(reason.clone()),
            Ok(base) => judge(context, case, base),
        });
    }
}

/// The accepted config with one model entry (the config's first, else one built from the
/// model schema) at `models.<role>`, as JSON, with the role and the schema; `Err` with the
/// reason when the kit has nothing to vary.
struct Base {
    config: Value,
    role: String,
    schema: Map<String, Value>,
}

fn base(context: &Context) -> Result<Base, String> {
    let descriptor = &context.subject.loaded.descriptor;
    if !descriptor.config.accepts(AdapterConfigField::Models) {
        return Err("the adapter does not accept `models`".to_owned());
    }
    let Some(schema) = descriptor.model_schema.clone() else {
        return Err("the descriptor declares no model_schema".to_owned());
    };
    let mut config =
        serde_json::to_value(&context.config).map_err(|_| "the config does not encode")?;
    let existing = context.config.models.keys().next().cloned();
    let role = existing.clone().unwrap_or_else(|| "conformance".to_owned());
    if existing.is_none() {
        config["models"] = json!({ role.clone(): built(&schema)? });
        let planned = FabricConfig::parse(&config.to_string())
            .map_err(ErrorInfo::from)
            .and_then(|parsed| context.plan(&parsed));
        if let Err(info) = planned {
            return Err(format!(
                "a config with a model built from the model_schema does not plan ({}); pass \
                 --config with a model",
                info.code
            ));
        }
    }
    Ok(Base {
        config,
        role,
        schema,
    })
}

/// A model entry from `schema`: the first listed value of an enumerated property, else
/// its default, for every required property (`provider` and `model` at least).
fn built(schema: &Map<String, Value>) -> Result<Value, String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut model = json!({"provider": "openai", "model": "conformance-model"});
    for name in crate::descriptor::required(schema) {
        let property = properties.and_then(|p| p.get(&name));
        let value = property
            .and_then(|p| p.get("enum"))
            .and_then(|values| values.get(0))
            .or_else(|| property.and_then(|p| p.get("default")))
            .cloned();
        match (value, model.get(&name)) {
            (Some(value), _) => model[&name] = value,
            (None, Some(_)) => {}
            (None, None) => {
                return Err(format!(
                    "the model_schema requires `{name}` without a default; pass --config with a model"
                ));
            }
        }
    }
    Ok(model)
}

fn judge(context: &Context, case: &str, base: &Base) -> Outcome {
    let role = &base.role;
    let section = format!("models.{role}");
    let pointer = format!("/models/{role}");
    let properties = base.schema.get("properties").and_then(Value::as_object);
    let with = |change: &dyn Fn(&mut Map<String, Value>)| {
        let mut config = base.config.clone();
        if let Some(model) = config.pointer_mut(&pointer).and_then(Value::as_object_mut) {
            change(model);
        }
        config
    };
    match case {
        "unknown_property" => {
            if base.schema.get("additionalProperties") != Some(&Value::Bool(false)) {
                return Outcome::Skipped("the model schema allows unknown fields".to_owned());
            }
            let config = with(&|model| {
                model.insert(UNKNOWN.to_owned(), json!(1));
            });
            rejected(context, &section, UNKNOWN, config, &pointer)
        }
        "wrong_type" => match wrong_type(properties) {
            None => Outcome::Skipped("no model property declares a single type".to_owned()),
            Some((name, wrong)) => {
                let config = with(&|model| {
                    model.insert(name.clone(), wrong.clone());
                });
                rejected(context, &section, &name, config, &pointer)
            }
        },
        "missing_required" => {
            let names = crate::descriptor::required(&base.schema);
            if names.is_empty() {
                return Outcome::Skipped("the model schema requires no field".to_owned());
            }
            let mut refused = Vec::new();
            for name in names {
                let config = with(&|model| {
                    model.remove(&name);
                });
                match rejected(context, &section, &name, config, &pointer) {
                    Outcome::Passed(reason) => refused.push(reason),
                    other => return other,
                }
            }
            Outcome::Passed(refused.join("; "))
        }
        "wrong_value" => {
            let listed = properties
                .into_iter()
                .flatten()
                .find(|(_, property)| property.get("enum").and_then(Value::as_array).is_some());
            match listed {
                None => Outcome::Skipped(
                    "no model property lists its values (a provider or protocol)".to_owned(),
                ),
                Some((name, _)) => {
                    let config = with(&|model| {
                        model.insert(name.clone(), json!("conformance-wrong-value"));
                    });
                    rejected(context, &section, name, config, &pointer)
                }
            }
        }
        _ => {
            let descriptor = &context.subject.loaded.descriptor;
            if descriptor.config.accepts(AdapterConfigField::ModelsBaseUrl) {
                return Outcome::Skipped("the adapter accepts `models.base_url`".to_owned());
            }
            let config = with(&|model| {
                model.insert("base_url".to_owned(), json!("http://127.0.0.1:9/v1"));
            });
            rejected(context, &section, "base_url", config, &pointer)
        }
    }
}
