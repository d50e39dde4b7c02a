//! One scripted runtime: conversation state, replies, directives.

use fabric_config::codes;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use fabric_reactor::beneath::{Beneath, Refusal};
use std::process::Child;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::contract::{AgentConfig, AgentRunRequest, InstructionMode, RuntimeContext};
use crate::load::{self, Ballast};
use crate::observer::StopObserver;
use crate::settings::{Directives, ErrorSpec, ProtocolFault, Reply, Settings, WhenExhausted};
use crate::wire::LifecycleError;

pub const ADAPTER_ID: &str = "fabric.scripted";

/// What an invocation asks the host loop to do.
#[derive(Debug)]
pub enum Step {
    /// Answer with this AgentRunResult (Ok) or a lifecycle failure that latches (Err).
    Answer(Result<Value, LifecycleError>),
    /// Break the protocol in the given way (`oversized_bytes` for `Oversized`).
    Fault(ProtocolFault, u64),
    /// Exit at once without answering.
    Crash,
}

#[derive(Debug)]
struct Turn {
    input: String,
    response: String,
}

/// State owned by one started runtime; dropped (children reaped, memory freed) at stop.
#[derive(Debug)]
pub struct ScriptedRuntime {
    pub runtime_id: String,
    pub settings: Settings,
    /// The Relay config's `nemo-fabric-stream` sink, when it has one (set after start).
    pub atof_sink: Option<crate::atof::Sink>,
    /// The shared service store (service hosts and connected runtimes).
    pub service: Option<crate::service::Link>,
    max_turns: Option<u32>,
    system: Option<(String, InstructionMode)>,
    models: Map<String, Value>,
    turn: u64,
    next_reply: usize,
    history: VecDeque<Turn>,
    ballast: Ballast,
    children: Vec<Child>,
    stop: StopObserver,
}

impl ScriptedRuntime {
    /// `start`: validates settings, applies `start_delay_ms` and `start_fail`.
    pub fn start(
        runtime_id: String,
        config: &AgentConfig,
    ) -> Result<ScriptedRuntime, LifecycleError> {
        let empty = Map::new();
        let raw = config.harness.as_ref().map_or(&empty, |h| &h.settings);
        let settings = Settings::parse(raw).map_err(|invalid| {
            LifecycleError::new(codes::INVALID_SETTINGS, invalid.to_string())
                .with_metadata("path", invalid.path.clone())
        })?;
        if settings.start_delay_ms > 0 {
            std::thread::sleep(Duration::from_millis(settings.start_delay_ms));
        }
        if let Some(fail) = &settings.start_fail {
            return Err(lifecycle_error(fail));
        }
        let system = config
            .instructions
            .as_ref()
            .and_then(|i| i.system.as_ref())
            .map(|s| (s.content.clone(), s.mode));
        let models = config
            .models
            .iter()
            .map(|(role, m)| {
                (
                    role.clone(),
                    Value::from(format!("{}/{}", m.provider, m.model)),
                )
            })
            .collect();
        Ok(ScriptedRuntime {
            runtime_id,
            max_turns: config.runtime.as_ref().and_then(|r| r.max_turns),
            system,
            models,
            settings,
            atof_sink: None,
            service: None,
            turn: 0,
            next_reply: 0,
            history: VecDeque::new(),
            ballast: Ballast::default(),
            children: Vec::new(),
            stop: StopObserver::default(),
        })
    }

    /// `stop`: reaps spawned children and frees held memory.
    pub fn stop(&mut self) {
        if let Some(service) = &self.service {
            service.stop();
        }
        load::reap_all(&mut self.children);
        self.ballast.clear();
    }

    /// `invoke`.
    pub fn invoke(&mut self, request: &AgentRunRequest, context: &RuntimeContext) -> Step {
        self.turn += 1;
        let input_directives = request.input.as_object().and_then(|o| o.get("scripted"));
        let directives = match Directives::parse(input_directives, request.context.get("scripted"))
        {
            Ok(d) => d,
            Err(invalid) => {
                self.ballast.clear();
                let error = ErrorSpec {
                    code: "scripted_invalid_directive".into(),
                    message: invalid.to_string(),
                    retryable: false,
                };
                return Step::Answer(Ok(failed_result(&error, None, Vec::new())));
            }
        };
        let extensions = match RequestExtensions::parse(&request.extensions) {
            Ok(extensions) => extensions,
            Err(message) => {
                let error = ErrorSpec {
                    code: "scripted_invalid_extension".into(),
                    message,
                    retryable: false,
                };
                return Step::Answer(Ok(failed_result(&error, None, Vec::new())));
            }
        };
        let mut meta = Map::new();
        meta.insert("adapter_id".into(), ADAPTER_ID.into());
        if let Some(temperature) = extensions.temperature {
            meta.insert("temperature".into(), temperature.into());
        }

        if let Some(text) = &directives.stderr {
            eprintln!("{text}");
        }
        if !directives.write_files.is_empty() {
            match edit_files(&directives.write_files) {
                Ok(count) => {
                    meta.insert("files_edited".into(), count.into());
                }
                Err(error) => return Step::Answer(Ok(failed_result(&error, None, Vec::new()))),
            }
        }
        if directives.spawn_orphans > 0 {
            match load::spawn_orphans(directives.spawn_orphans) {
                Ok(pids) => {
                    meta.insert("orphans".into(), json!(pids));
                }
                Err(_) => {
                    let error = ErrorSpec {
                        code: "scripted_spawn_failed".into(),
                        message: "could not spawn the requested orphans".into(),
                        retryable: false,
                    };
                    return Step::Answer(Ok(failed_result(&error, None, Vec::new())));
                }
            }
        }
        if directives.spawn_children > 0 {
            match load::spawn_sleepers(&mut self.children, directives.spawn_children) {
                Ok(pids) => {
                    meta.insert("children".into(), json!(pids));
                }
                Err(_) => {
                    let error = ErrorSpec {
                        code: "scripted_spawn_failed".into(),
                        message: "could not spawn the requested `sleep` children".into(),
                        retryable: false,
                    };
                    return Step::Answer(Ok(failed_result(&error, None, Vec::new())));
                }
            }
        }
        if directives.sleep_ms > 0 {
            std::thread::sleep(Duration::from_millis(directives.sleep_ms));
            meta.insert("slept_ms".into(), directives.sleep_ms.into());
        }
        if directives.memory_mib.is_empty() {
            self.ballast.clear();
        } else {
            let peak = load::run_memory_steps(
                &mut self.ballast,
                &directives.memory_mib,
                directives.step_ms,
            );
            if !directives.memory_hold {
                self.ballast.clear();
            }
            meta.insert("memory_peak_mib".into(), peak.into());
            meta.insert("memory_held_mib".into(), self.ballast.held_mib().into());
        }
        if directives.burn_cpu_ms > 0 {
            load::burn_cpu(directives.burn_cpu_ms);
            meta.insert("cpu_burned_ms".into(), directives.burn_cpu_ms.into());
        }
        if directives.crash {
            return Step::Crash;
        }
        if let Some(raise) = &directives.raise {
            return Step::Answer(Err(lifecycle_error(raise)));
        }
        if let Some(fault) = directives.protocol_fault {
            return Step::Fault(fault, directives.oversized_bytes);
        }

        let mut artifacts = Vec::new();
        if !directives.artifacts.is_empty() {
            match write_artifacts(&directives, context) {
                Ok(refs) => artifacts = refs,
                Err(error) => return Step::Answer(Ok(failed_result(&error, None, Vec::new()))),
            }
        }
        if directives.cancel {
            let mut result = Map::new();
            result.insert("status".into(), "cancelled".into());
            result.insert("output".into(), Value::Null);
            put_usage_and_artifacts(&mut result, directives.usage.clone(), artifacts);
            return Step::Answer(Ok(Value::Object(result)));
        }
        if let Some(fail) = &directives.fail {
            return Step::Answer(Ok(failed_result(fail, directives.usage.clone(), artifacts)));
        }

        let input = input_text(&request.input);
        let reply = match self.pick_reply(extensions.reply_index) {
            Ok(reply) => reply,
            Err(error) => {
                return Step::Answer(Ok(failed_result(
                    &error,
                    directives.usage.clone(),
                    artifacts,
                )));
            }
        };
        let usage = directives
            .usage
            .clone()
            .or_else(|| reply.as_ref().and_then(|(_, r)| r.usage.clone()));
        let turns_used = directives
            .turns
            .or_else(|| reply.as_ref().and_then(|(_, r)| r.turns))
            .unwrap_or(1);
        if let Some(max) = self.max_turns {
            if turns_used > u64::from(max) {
                let error = ErrorSpec {
                    code: "max_turns_exceeded".into(),
                    message: format!(
                        "the scripted reply needs {turns_used} turns; runtime.max_turns is {max}"
                    ),
                    retryable: false,
                };
                // The turn limit is this harness's iteration limit.
                self.stop.on_iteration_limit_reached(&context.invocation_id);
                let mut result = failed_result(&error, usage, artifacts);
                self.stop.finish(&context.invocation_id, &mut result);
                return Step::Answer(Ok(result));
            }
        }
        if let Some(fail) = reply.as_ref().and_then(|(_, r)| r.fail.as_ref()) {
            return Step::Answer(Ok(failed_result(fail, usage, artifacts)));
        }

        let (response, verbatim) = match &reply {
            Some((
                _,
                Reply {
                    output: Some(out), ..
                },
            )) => (String::new(), Some(out.clone())),
            Some((
                _,
                Reply {
                    response: Some(template),
                    ..
                },
            )) => (self.render(template, &input), None),
            _ => (input.clone(), None),
        };
        meta.insert(
            "source".into(),
            if reply.is_some() { "reply" } else { "echo" }.into(),
        );
        if let Some((index, _)) = &reply {
            meta.insert("reply_index".into(), (*index as u64).into());
        }
        meta.insert("turns_used".into(), turns_used.into());
        if let Some(max) = self.max_turns {
            meta.insert("max_turns".into(), max.into());
        }
        if let Some((content, mode)) = &self.system {
            meta.insert(
                "system_instruction".into(),
                json!({"content": content, "mode": mode.as_str()}),
            );
        }
        if !self.models.is_empty() {
            meta.insert("models".into(), Value::Object(self.models.clone()));
        }
        let output = match verbatim {
            Some(out) => out,
            None => json!({
                "response": response,
                "turn": self.turn,
                "history": self.history.len(),
                "metadata": Value::Object(meta),
            }),
        };
        self.history.push_back(Turn { input, response });
        while self.history.len() > self.settings.history_limit {
            self.history.pop_front();
        }
        let mut result = Map::new();
        result.insert("status".into(), "succeeded".into());
        result.insert("output".into(), output);
        put_usage_and_artifacts(&mut result, usage, artifacts);
        Step::Answer(Ok(Value::Object(result)))
    }

    /// The next scripted reply and its index, `None` to echo. `chosen` (the request
    /// extension `reply_index`) picks a reply without moving the cursor.
    fn pick_reply(&mut self, chosen: Option<u64>) -> Result<Option<(usize, Reply)>, ErrorSpec> {
        let replies = &self.settings.replies;
        if let Some(chosen) = chosen {
            let found = usize::try_from(chosen)
                .ok()
                .and_then(|index| replies.get(index).map(|reply| (index, reply.clone())));
            return match found {
                Some(found) => Ok(Some(found)),
                None => Err(ErrorSpec {
                    code: "scripted_reply_index_out_of_range".into(),
                    message: format!(
                        "request.extensions.reply_index: there are {} scripted replies",
                        replies.len()
                    ),
                    retryable: false,
                }),
            };
        }
        if replies.is_empty() {
            return Ok(None);
        }
        if self.next_reply >= replies.len() {
            match self.settings.when_exhausted {
                WhenExhausted::Cycle => self.next_reply = 0,
                WhenExhausted::Echo => return Ok(None),
                WhenExhausted::Fail => {
                    return Err(ErrorSpec {
                        code: "scripted_replies_exhausted".into(),
                        message: format!("all {} scripted replies have been used", replies.len()),
                        retryable: false,
                    });
                }
            }
        }
        let index = self.next_reply;
        self.next_reply += 1;
        Ok(Some((index, replies[index].clone())))
    }

    /// Expands `{input}`, `{previous_input}`, `{previous_response}`, `{turn}`, `{history}`,
    /// `{max_turns}`, `{system}`, `{runtime_id}`; `{{`/`}}` are literal braces; unknown
    /// placeholders stay as written.
    fn render(&self, template: &str, input: &str) -> String {
        let last = self.history.back();
        let mut out = String::with_capacity(template.len() + input.len());
        let mut rest = template;
        while let Some(pos) = rest.find(['{', '}']) {
            out.push_str(&rest[..pos]);
            let tail = &rest[pos..];
            if tail.starts_with("{{") || tail.starts_with("}}") {
                out.push_str(&tail[..1]);
                rest = &tail[2..];
                continue;
            }
            if let Some(after) = tail.strip_prefix('}') {
                out.push('}');
                rest = after;
                continue;
            }
            let Some(end) = tail.find('}') else {
                out.push_str(tail);
                rest = "";
                break;
            };
            let name = &tail[1..end];
            let value = match name {
                "input" => Some(input.to_owned()),
                "previous_input" => Some(last.map(|t| t.input.clone()).unwrap_or_default()),
                "previous_response" => Some(last.map(|t| t.response.clone()).unwrap_or_default()),
                "turn" => Some(self.turn.to_string()),
                "history" => Some(self.history.len().to_string()),
                "max_turns" => Some(self.max_turns.map(|m| m.to_string()).unwrap_or_default()),
                "system" => Some(
                    self.system
                        .as_ref()
                        .map(|s| s.0.clone())
                        .unwrap_or_default(),
                ),
                "runtime_id" => Some(self.runtime_id.clone()),
                _ => None,
            };
            match value {
                Some(v) => out.push_str(&v),
                None => out.push_str(&tail[..=end]),
            }
            rest = &tail[end + 1..];
        }
        out.push_str(rest);
        out
    }
}

impl Drop for ScriptedRuntime {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lifecycle_error(spec: &ErrorSpec) -> LifecycleError {
    LifecycleError {
        code: spec.code.clone(),
        message: spec.message.clone(),
        retryable: spec.retryable,
        metadata: Map::new(),
    }
}

fn failed_result(
    error: &ErrorSpec,
    usage: Option<Map<String, Value>>,
    artifacts: Vec<Value>,
) -> Value {
    let mut result = Map::new();
    result.insert("status".into(), "failed".into());
    result.insert("output".into(), Value::Null);
    result.insert(
        "error".into(),
        json!({"code": error.code, "message": error.message, "retryable": error.retryable}),
    );
    put_usage_and_artifacts(&mut result, usage, artifacts);
    Value::Object(result)
}

fn put_usage_and_artifacts(
    result: &mut Map<String, Value>,
    usage: Option<Map<String, Value>>,
    artifacts: Vec<Value>,
) {
    if let Some(usage) = usage.filter(|u| !u.is_empty()) {
        result.insert("usage".into(), Value::Object(usage));
    }
    if !artifacts.is_empty() {
        result.insert("artifacts".into(), Value::Array(artifacts));
    }
}

/// The text an input stands for: a string as is; an object's `text`/`input`/`prompt`/
/// `message` string; otherwise compact JSON (without the `scripted` directives).
pub fn input_text(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Object(map) => {
            for key in ["text", "input", "prompt", "message"] {
                if let Some(Value::String(s)) = map.get(key) {
                    return s.clone();
                }
            }
            let rest: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| k.as_str() != "scripted")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if rest.is_empty() {
                String::new()
            } else {
                Value::Object(rest).to_string()
            }
        }
        other => other.to_string(),
    }
}

/// The artifact root: `environment.artifacts`, else `artifacts.root`, else `$FABRIC_ARTIFACTS`.
fn artifact_root(context: &RuntimeContext) -> Option<PathBuf> {
    context
        .environment
        .artifacts
        .clone()
        .or_else(|| context.artifacts.root.clone())
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("FABRIC_ARTIFACTS")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        })
}

fn write_artifacts(
    directives: &Directives,
    context: &RuntimeContext,
) -> Result<Vec<Value>, ErrorSpec> {
    let root = artifact_root(context).ok_or_else(|| ErrorSpec {
        code: "artifact_root_unavailable".into(),
        message: "no artifact root: RuntimeContext.environment.artifacts, artifacts.root and \
                  FABRIC_ARTIFACTS are all unset"
            .into(),
        retryable: false,
    })?;
    let mut refs = Vec::new();
    for spec in &directives.artifacts {
        write_private(&root, &spec.name, spec.content.as_bytes()).map_err(|refusal| {
            if refusal.is_unsafe_path() {
                ErrorSpec {
                    code: codes::PATH_REFUSED.into(),
                    message: format!("refused to write artifact `{}`: {refusal}", spec.name),
                    retryable: false,
                }
            } else {
                ErrorSpec {
                    code: "artifact_write_failed".into(),
                    message: format!(
                        "could not write artifact `{}` under the artifact root",
                        spec.name
                    ),
                    retryable: false,
                }
            }
        })?;
        let mut r = Map::new();
        r.insert("name".into(), spec.name.clone().into());
        r.insert("kind".into(), spec.kind.clone().into());
        r.insert("path".into(), spec.name.clone().into());
        if let Some(media_type) = &spec.media_type {
            r.insert("media_type".into(), media_type.clone().into());
        }
        refs.push(Value::Object(r));
    }
    Ok(refs)
}

/// Applies `write_files` in the working directory (the workspace): writes create missing
/// parent directories; deleting a missing file is not an error. Paths resolve beneath the
/// workspace without following a symbolic link, and only regular files are written or
/// removed: anything else fails the edit with `path_refused`.
fn edit_files(edits: &[crate::settings::FileEdit]) -> Result<usize, ErrorSpec> {
    let failed = |path: &str| ErrorSpec {
        code: "scripted_write_failed".into(),
        message: format!("could not edit workspace file `{path}`"),
        retryable: false,
    };
    let workspace = Beneath::open(Path::new(".")).map_err(|_| failed("."))?;
    for edit in edits {
        let path = Path::new(&edit.path);
        let outcome = match &edit.content {
            Some(bytes) => workspace.edit(path, bytes, 0o666),
            None => workspace.remove_file(path).map(drop),
        };
        match outcome {
            Ok(()) => {}
            Err(refusal) if refusal.is_unsafe_path() => {
                return Err(ErrorSpec {
                    code: codes::PATH_REFUSED.into(),
                    message: format!("refused to edit workspace file `{}`: {refusal}", edit.path),
                    retryable: false,
                });
            }
            Err(_) => return Err(failed(&edit.path)),
        }
    }
    Ok(edits.len())
}

/// Writes an artifact (mode 0600) under the artifact root, never through a link.
fn write_private(root: &Path, name: &str, bytes: &[u8]) -> Result<(), Refusal> {
    std::fs::create_dir_all(root).map_err(Refusal::Io)?;
    Beneath::open(root)
        .map_err(Refusal::Io)?
        .write(Path::new(name), bytes, 0o600)
}

/// Request extensions this adapter declares (`extension_schemas.run_request` in its
/// descriptor; the core validates them first, this re-checks what it relies on).
#[derive(Debug, Default, PartialEq)]
struct RequestExtensions {
    /// Per-request sampling temperature, reported in `output.metadata.temperature`.
    temperature: Option<f64>,
    /// Use this scripted reply (0-based) instead of the next one.
    reply_index: Option<u64>,
}

impl RequestExtensions {
    fn parse(extensions: &Map<String, Value>) -> Result<RequestExtensions, String> {
        let mut out = RequestExtensions::default();
        for (key, value) in extensions {
            match key.as_str() {
                "temperature" => match value.as_f64() {
                    Some(t) if (0.0..=2.0).contains(&t) => out.temperature = Some(t),
                    _ => {
                        return Err(
                            "request.extensions.temperature: must be a number in 0..=2".into()
                        );
                    }
                },
                "reply_index" => match value.as_u64() {
                    Some(index) => out.reply_index = Some(index),
                    None => {
                        return Err(
                            "request.extensions.reply_index: must be a non-negative integer".into(),
                        );
                    }
                },
                other => return Err(format!("request.extensions.{other}: not declared")),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(settings: Value) -> ScriptedRuntime {
        let config = AgentConfig::decode(&json!({
            "harness": {"settings": settings},
            "runtime": {"max_turns": 3},
            "instructions": {"system": {"content": "Be brief.", "mode": "append"}}
        }))
        .unwrap();
        ScriptedRuntime::start("rt".into(), &config).unwrap()
    }

    #[test]
    fn templates_expand_and_keep_unknowns() {
        let mut rt = runtime(json!({}));
        rt.turn = 2;
        rt.history.push_back(Turn {
            input: "first".into(),
            response: "r1".into(),
        });
        assert_eq!(
            rt.render("{{x}} {input} after {previous_input}/{previous_response} t{turn} h{history} m{max_turns} {nope} {system} }", "second"),
            "{x} second after first/r1 t2 h1 m3 {nope} Be brief. }"
        );
        assert_eq!(rt.render("open {input", "x"), "open {input");
    }

    #[test]
    fn input_text_rules() {
        assert_eq!(input_text(&json!("hi")), "hi");
        assert_eq!(input_text(&json!({"text": "t", "scripted": {}})), "t");
        assert_eq!(input_text(&json!({"scripted": {"sleep_ms": 1}})), "");
        assert_eq!(input_text(&json!({"a": 1})), r#"{"a":1}"#);
        assert_eq!(input_text(&json!([1, 2])), "[1,2]");
    }

    #[test]
    fn replies_cycle_fail_or_echo() {
        let mut rt = runtime(json!({"replies": ["a", "b"], "when_exhausted": "fail"}));
        assert_eq!(rt.pick_reply(None).unwrap().unwrap().0, 0);
        assert_eq!(rt.pick_reply(None).unwrap().unwrap().0, 1);
        assert_eq!(
            rt.pick_reply(None).unwrap_err().code,
            "scripted_replies_exhausted"
        );
        let mut rt = runtime(json!({"replies": ["a"]}));
        assert_eq!(rt.pick_reply(None).unwrap().unwrap().0, 0);
        assert_eq!(rt.pick_reply(None).unwrap().unwrap().0, 0);
        let mut rt = runtime(json!({"replies": ["a"], "when_exhausted": "echo"}));
        assert!(rt.pick_reply(None).unwrap().is_some());
        assert!(rt.pick_reply(None).unwrap().is_none());
    }

    #[test]
    fn reply_index_extension_picks_without_moving_the_cursor() {
        let mut rt = runtime(json!({"replies": ["a", "b", "c"]}));
        assert_eq!(rt.pick_reply(Some(2)).unwrap().unwrap().0, 2);
        assert_eq!(rt.pick_reply(None).unwrap().unwrap().0, 0);
        assert_eq!(
            rt.pick_reply(Some(3)).unwrap_err().code,
            "scripted_reply_index_out_of_range"
        );
        let parsed = |v: Value| RequestExtensions::parse(v.as_object().unwrap());
        assert_eq!(
            parsed(json!({"temperature": 0.5, "reply_index": 1})).unwrap(),
            RequestExtensions {
                temperature: Some(0.5),
                reply_index: Some(1)
            }
        );
        assert!(parsed(json!({"temperature": 3})).is_err());
        assert!(parsed(json!({"reply_index": -1})).is_err());
        assert!(parsed(json!({"other": 1})).is_err());
    }

    #[test]
    fn invalid_settings_fail_start_with_path() {
        let config =
            AgentConfig::decode(&json!({"harness": {"settings": {"replies": 3}}})).unwrap();
        let err = ScriptedRuntime::start("rt".into(), &config).unwrap_err();
        assert_eq!(err.code, "invalid_settings");
        assert_eq!(err.metadata["path"], json!("harness.settings.replies"));
    }
}
