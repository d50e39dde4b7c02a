#!/usr/bin/env python3
"""Plan a corpus of configs with upstream nemo-fabric 0.5.0 and with our `fabric plan`.

Run with the interpreter of an environment where nemo-fabric 0.5.0 is installed:

    /path/to/venv/bin/python bench/plan/compare_upstream.py [--fabric target/debug/fabric]
        [--catalog CATALOG_JSON] [--json] [--verbose]

The catalog defaults to `catalog.json` of the `nemo-fabric-adapter-catalog` 0.5.0 package
installed in that environment (`scripts/setup.sh` installs it into `.venv`).

For every catalog adapter (and both registered targets) the script builds config variants
that exercise each compatibility rule (models, instruction modes, turn limits, tools, skills,
MCP routes and authentication, telemetry providers, settings schemas, extensions, workflow
targets, env/env_names), plans each with upstream `Fabric().plan(...)` and with our CLI, and
prints how often the two agree on accept/reject. Disagreements are listed with both error
messages. Exit status: 0 when every disagreement is listed in KNOWN_DIFFERENCES, else 1.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "upstream"))
from oracle import catalog_path as installed_catalog  # noqa: E402

# Variant names where the spec (v0.6 docs) and upstream 0.5.0 are known to disagree; ours
# follows the spec. Keyed by variant name (any adapter).
KNOWN_DIFFERENCES = {
    # Upstream 0.5.0 accepts a model role with an empty name; DESIGN §12 rejects it.
    "model_role_empty",
    # Upstream 0.5.0 accepts an empty MCP server name; DESIGN §12 rejects it.
    "mcp_server_empty_name",
    # Upstream 0.5.0 accepts CR/LF inside MCP header values; DESIGN §12 rejects them.
    "mcp_header_crlf",
    # Upstream 0.5.0 passes any `environment.env` key to the adapter host; a key containing
    # `=` then adds a second `FABRIC_HOME` (or `LD_PRELOAD`, ...) entry to its environment.
    # Issue 21 item 6: keys follow the env-name rule (`invalid_env_name`).
    "env_key_with_equals",
    # Upstream 0.5.0 lets config set or forward the variables the core sets itself
    # (FABRIC_HOME, FABRIC_RUNTIME_ID, FABRIC_ARTIFACTS); issue 21 item 6 rejects them
    # (`env_name_reserved`). Other FABRIC_* names stay valid (`env_other_fabric_name`).
    "env_reserved_fabric_home",
    "env_names_reserved_runtime_id",
    # Upstream 0.5.0 accepts any string as `models.*.base_url` and a network MCP `url`;
    # issue 21 item 6 parses them as absolute URLs and rejects CR/LF (`invalid_url`). MCP
    # variants only disagree for adapters upstream plans MCP for.
    "model_base_url_not_url",
    "model_base_url_crlf",
    "mcp_url_not_url",
    "mcp_url_crlf",
}


def model(**extra):
    base = {
        "provider": "openai",
        "model": "gpt-5",
        "api_key_env": "OPENAI_API_KEY",
        "base_url": "http://127.0.0.1:9/v1",
    }
    base.update(extra)
    return base


def valid_setting(schema: dict | None) -> dict | None:
    """One settings entry satisfying a simple property of the descriptor's settings_schema."""
    for name, prop in (schema or {}).get("properties", {}).items():
        if "enum" in prop:
            return {name: prop["enum"][0]}
        kind = prop.get("type")
        if kind == "boolean":
            return {name: True}
        if kind == "integer":
            return {name: max(int(prop.get("minimum", 1)), int(prop.get("exclusiveMinimum", 0)) + 1)}
        if kind == "number":
            return {name: float(max(prop.get("minimum", 1), prop.get("exclusiveMinimum", 0) + 1))}
        if kind == "string" and "pattern" not in prop and "format" not in prop:
            return {name: "x" * max(1, prop.get("minLength", 1))}
    return None


def wrong_type_setting(schema: dict | None) -> dict | None:
    for name, prop in (schema or {}).get("properties", {}).items():
        if prop.get("type") in ("boolean", "integer", "number"):
            return {name: "not-a-" + prop["type"]}
    return None


def variants(adapter_id: str, descriptor: dict | None = None) -> list[tuple[str, dict]]:
    harness = {"adapter_id": adapter_id}
    settings_schema = (descriptor or {}).get("settings_schema")
    m = {"default": model()}
    out: list[tuple[str, dict]] = [
        ("bare", {"harness": harness}),
        ("model_default", {"harness": harness, "models": m}),
        ("model_minimal", {"harness": harness, "models": {"default": {"provider": "openai", "model": "gpt-5"}}}),
        ("model_anthropic", {"harness": harness, "models": {"default": {"provider": "anthropic", "model": "claude-x"}}}),
        ("model_two_roles_no_default", {"harness": harness, "models": {"a": model(), "b": model()}}),
        ("model_two_roles_default", {"harness": harness, "models": {"default": model(), "b": model()}}),
        ("model_single_named_role", {"harness": harness, "models": {"planner": model()}}),
        ("model_temperature", {"harness": harness, "models": {"default": model(temperature=0.2)}}),
        ("model_top_p", {"harness": harness, "models": {"default": model(top_p=0.5)}}),
        ("model_max_tokens", {"harness": harness, "models": {"default": model(max_tokens=64)}}),
        ("model_settings", {"harness": harness, "models": {"default": model(settings={"x": 1})}}),
        ("model_ext_api", {"harness": harness, "models": {"default": model(api="openai-completions")}}),
        ("model_ext_unknown", {"harness": harness, "models": {"default": model(zzz_custom=1)}}),
        ("model_role_empty", {"harness": harness, "models": {"": model()}}),
        ("instructions_replace", {"harness": harness, "instructions": {"system": {"content": "Be brief.", "mode": "replace"}}}),
        ("instructions_append", {"harness": harness, "instructions": {"system": {"content": "Be brief.", "mode": "append"}}}),
        ("max_turns", {"harness": harness, "runtime": {"max_turns": 3}}),
        ("runtime_timeout", {"harness": harness, "runtime": {"timeout_seconds": 30}}),
        ("runtime_extension", {"harness": harness, "runtime": {"zzz_custom": 1}}),
        ("tools_enabled", {"harness": harness, "tools": {"enabled": ["Read"]}}),
        ("tools_enabled_empty", {"harness": harness, "tools": {"enabled": []}}),
        ("tools_blocked", {"harness": harness, "tools": {"blocked": ["Bash"]}}),
        ("tools_both_same", {"harness": harness, "tools": {"enabled": ["Bash"], "blocked": ["Bash"]}}),
        ("tools_definition_module", {"harness": harness, "tools": {"definitions": {"t": {"kind": "module", "ref": "./tool.js"}}}}),
        ("tools_definition_bad", {"harness": harness, "tools": {"definitions": {"t": {"kind": "function", "ref": "x", "settings": {"a": 1}}}}}),
        ("skills", {"harness": harness, "skills": {"paths": ["./skills/review"]}}),
        ("skills_extension", {"harness": harness, "skills": {"paths": ["./s"], "zzz_custom": 1}}),
        ("mcp_stdio", {"harness": harness, "mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh-mcp", "args": ["stdio"]}}}}),
        ("mcp_http_headers", {"harness": harness, "mcp": {"servers": {"web": {"transport": "streamable-http", "url": "https://mcp.example.com/mcp", "custom_headers": {"X-Tenant": "t"}}}}}),
        ("mcp_header_crlf", {"harness": harness, "mcp": {"servers": {"web": {"transport": "sse", "url": "https://x", "custom_headers": {"X-A": "a\r\nB: c"}}}}}),
        ("mcp_oauth2", {"harness": harness, "mcp": {"servers": {"web": {"transport": "streamable-http", "url": "https://x", "authentication": {"type": "oauth2", "scopes": ["repo:read"]}}}}}),
        ("mcp_service_account", {"harness": harness, "mcp": {"servers": {"web": {"transport": "streamable-http", "url": "https://x", "authentication": {"type": "service_account", "client_id": "c", "client_secret_env": "SECRET_ENV", "token_url": "https://t/token", "token_endpoint_auth_method": "client_secret_post"}}}}}),
        ("mcp_allowed_tools", {"harness": harness, "mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh", "allowed_tools": ["a"]}}}}),
        ("mcp_blocked_tools", {"harness": harness, "mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh", "blocked_tools": ["a"]}}}}),
        ("mcp_fabric_managed", {"harness": harness, "mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh", "exposure": "fabric_managed"}}}}),
        ("mcp_server_empty_name", {"harness": harness, "mcp": {"servers": {"": {"transport": "stdio", "url": "gh"}}}}),
        ("mcp_env_on_http", {"harness": harness, "mcp": {"servers": {"w": {"transport": "sse", "url": "https://x", "env": {"A": "b"}}}}}),
        ("telemetry_relay", {"harness": harness, "telemetry": {"providers": {"relay": {}}}}),
        ("telemetry_native", {"harness": harness, "telemetry": {"providers": {"native": {}}}}),
        ("relay_atif", {"harness": harness, "models": m, "telemetry": {"providers": {"relay": {}}}, "relay": {"output_dir": "./artifacts/relay", "observability": {"atif": {"enabled": True}}}}),
        ("settings_empty", {"harness": {**harness, "settings": {}}}),
        ("settings_unknown_key", {"harness": {**harness, "settings": {"zzz_unknown": 1}}}),
        ("harness_extension", {"harness": {**harness, "zzz_custom": 1}}),
        ("workflow_unknown_target", {"harness": harness, "workflow": {"target_id": "nvidia.nooa.arc-solver"}}),
        ("env_conflict", {"harness": harness, "environment": {"env": {"A": "1"}, "env_names": ["A"]}}),
        ("env_ok", {"harness": harness, "environment": {"workspace": "./ws", "env": {"A": "1"}, "env_names": ["B"]}}),
        ("resolution", {"harness": {**harness, "resolution": "preinstalled"}}),
        ("model_provider_upper", {"harness": harness, "models": {"default": model(provider="OpenAI")}}),
        ("instructions_default_mode", {"harness": harness, "instructions": {"system": {"content": "x"}}}),
        ("relay_without_provider", {"harness": harness, "relay": {"project": "p"}}),
        ("relay_project_only", {"harness": harness, "telemetry": {"providers": {"relay": {}}}, "relay": {"project": "p"}}),
        ("relay_two_observability", {"harness": harness, "models": m, "telemetry": {"providers": {"relay": {}}}, "relay": {"observability": {"atif": {"enabled": True}}, "components": [{"kind": "observability", "config": {"atif": {"enabled": True}}}]}}),
        ("relay_component", {"harness": harness, "telemetry": {"providers": {"relay": {}}}, "relay": {"components": [{"kind": "custom", "config": {"a": 1}}]}}),
        # issue 15 item 4: integral floats are integers (2.5 is not), as upstream's pydantic.
        ("model_max_tokens_integral_float", {"harness": harness, "models": {"default": model(max_tokens=64.0)}}),
        ("model_max_tokens_fraction", {"harness": harness, "models": {"default": model(max_tokens=64.5)}}),
        ("max_turns_integral_float", {"harness": harness, "runtime": {"max_turns": 3.0}}),
        ("max_turns_fraction", {"harness": harness, "runtime": {"max_turns": 3.5}}),
        ("mcp_oauth2_timeout_integral_float", {"harness": harness, "mcp": {"servers": {"web": {"transport": "streamable-http", "url": "https://x", "authentication": {"type": "oauth2", "authorization_timeout_seconds": 120.0}}}}}),
        ("mcp_service_account_buffer_integral_float", {"harness": harness, "mcp": {"servers": {"web": {"transport": "streamable-http", "url": "https://x", "authentication": {"type": "service_account", "client_id": "c", "client_secret_env": "SECRET_ENV", "token_url": "https://t/token", "token_cache_buffer_seconds": 60.0}}}}}),
        ("mcp_oauth2_no_client_no_registration", {"harness": harness, "mcp": {"servers": {"web": {"transport": "streamable-http", "url": "https://x", "authentication": {"type": "oauth2", "enable_dynamic_registration": False}}}}}),
        # Unknown keys upstream tolerates inside Fabric-owned sections (ours: kept, warned).
        ("environment_unknown_key", {"harness": harness, "environment": {"wokspace": "./ws"}}),
        ("discovery_unknown_key", {"harness": harness, "discovery": {"local_paths": ["descriptors"], "zzz_unknown": 1}}),
        ("telemetry_unknown_key", {"harness": harness, "telemetry": {"providers": {"relay": {"zzz_unknown": 1}}, "zzz_unknown": 1}}),
        ("relay_unknown_key", {"harness": harness, "models": m, "telemetry": {"providers": {"relay": {}}}, "relay": {"projct": "p", "observability": {"atif": {"enabled": True}}}}),
        ("mcp_headers_on_stdio", {"harness": harness, "mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh", "custom_headers": {"A": "b"}}}}}),
        # issue 21 item 6: env keys, variables the core sets, URLs.
        ("env_key_with_equals", {"harness": harness, "environment": {"env": {"FABRIC_HOME=/tmp/x": "1"}}}),
        ("env_reserved_fabric_home", {"harness": harness, "environment": {"env": {"FABRIC_HOME": "/tmp/x"}}}),
        ("env_names_reserved_runtime_id", {"harness": harness, "environment": {"env_names": ["FABRIC_RUNTIME_ID"]}}),
        ("env_other_fabric_name", {"harness": harness, "environment": {"env": {"FABRIC_LOG_LEVEL": "debug"}}}),
        ("model_base_url_not_url", {"harness": harness, "models": {"default": model(base_url="integrate.api.nvidia.com/v1")}}),
        ("model_base_url_crlf", {"harness": harness, "models": {"default": model(base_url="https://x/v1\r\nX-A: b")}}),
        ("mcp_url_not_url", {"harness": harness, "mcp": {"servers": {"web": {"transport": "streamable-http", "url": "mcp.example.com/mcp"}}}}),
        ("mcp_url_crlf", {"harness": harness, "mcp": {"servers": {"web": {"transport": "sse", "url": "https://x/\r\nsse"}}}}),
    ]
    valid = valid_setting(settings_schema)
    if valid is not None:
        out.append(("settings_valid", {"harness": {**harness, "settings": valid}}))
    wrong = wrong_type_setting(settings_schema)
    if wrong is not None:
        out.append(("settings_wrong_type", {"harness": {**harness, "settings": wrong}}))
    return out


def target_variants() -> list[tuple[str, dict]]:
    m = {"default": model()}
    return [
        ("target_arc_ok", {"workflow": {"target_id": "nvidia.nooa.arc-solver", "settings": {"png_scale": 2}}, "models": m}),
        ("target_arc_bad_setting", {"workflow": {"target_id": "nvidia.nooa.arc-solver", "settings": {"png_scale": 0}}, "models": m}),
        ("target_arc_unknown_setting", {"workflow": {"target_id": "nvidia.nooa.arc-solver", "settings": {"zzz": 1}}, "models": m}),
        ("target_coding_ok", {"workflow": {"target_id": "nvidia.nooa.coding-agent"}, "models": m}),
        ("target_coding_setting", {"workflow": {"target_id": "nvidia.nooa.coding-agent", "settings": {"x": 1}}, "models": m}),
        ("target_with_matching_harness", {"harness": {"adapter_id": "nvidia.fabric.nooa"}, "workflow": {"target_id": "nvidia.nooa.coding-agent"}, "models": m}),
        ("target_with_other_harness", {"harness": {"adapter_id": "nvidia.fabric.claude"}, "workflow": {"target_id": "nvidia.nooa.coding-agent"}, "models": m}),
        ("target_unknown", {"workflow": {"target_id": "nvidia.nooa.nope"}, "models": m}),
        ("target_workflow_extension", {"workflow": {"target_id": "nvidia.nooa.coding-agent", "zzz": 1}, "models": m}),
    ]


# Variants both sides reject, where the error must name the same field: variant ->
# (text in upstream's message, text in ours).
ERROR_NAMES = {
    "mcp_oauth2_no_client_no_registration": ("requires client_id", "authentication.client_id`"),
}


def upstream_plan(config: dict, base_dir: Path) -> tuple[bool, str, dict | None]:
    from nemo_fabric import Fabric, FabricConfig

    try:
        typed = FabricConfig.model_validate(config)
        mapping = Fabric().plan(typed, base_dir=base_dir).to_mapping()
        native = Fabric()._require_native_module("plan")
        raw = json.loads(native.plan_config(json.dumps(typed.to_mapping()), str(base_dir)))
        # The SDK's `RunPlan.to_mapping()` adds `adapter` (the descriptor with `metadata`).
        raw["adapter"] = json.loads(json.dumps(mapping["adapter"], default=str))
        raw["_mapping_keys"] = sorted(mapping)
        return True, "", raw
    except Exception as error:  # noqa: BLE001 - any failure is a rejection
        return False, f"{type(error).__name__}: {' '.join(str(error).split())[:240]}", None


def our_plan(fabric: Path, config_file: Path, base_dir: Path) -> tuple[bool, str, dict | None]:
    # Upstream always searches the prefix of the interpreter it runs in; give ours the same
    # prefix (VIRTUAL_ENV) so installed adapters (share/nemo-fabric) are found by both.
    env = dict(os.environ, VIRTUAL_ENV=sys.prefix)
    result = subprocess.run(
        [str(fabric), "plan", str(config_file), "--base-dir", str(base_dir)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if result.returncode == 0:
        return True, "", json.loads(result.stdout)
    try:
        error = json.loads(result.stdout)["error"]
        return False, f"{error['code']}: {error['message'][:240]}", None
    except (ValueError, KeyError):
        return False, f"exit {result.returncode}: {result.stderr.strip()[:240]}", None


# Plan fields compared when both sides accept a config (the southbound projection, routing,
# telemetry outputs, lifecycle capabilities and the selected descriptor).
COMPARED_FIELDS = [
    ("agent_config",),
    ("capabilities",),
    ("capability_plan", "routes"),
    ("capability_plan", "skill_paths"),
    ("telemetry_plan", "providers"),
    ("telemetry_plan", "relay_enabled"),
    ("telemetry_plan", "adapter_outputs"),
    ("telemetry_plan", "relay_config"),
    ("telemetry_plan", "relay_project"),
    ("environment_plan",),
    ("resolution",),
    ("capability_plan", "tools"),
    ("capability_plan", "mcp_servers"),
    ("capability_plan", "native"),
    ("capability_plan", "unsupported"),
    ("adapter_descriptor", "provenance"),
    ("adapter_descriptor", "descriptor"),
    ("adapter_target_descriptor", "descriptor"),
    ("adapter",),
]

# Top-level plan keys ours has and upstream's SDK mapping does not (documented extras).
OUR_EXTRA_KEYS = {"descriptor_sha256"}


def field(plan: dict, path: tuple[str, ...]):
    value = plan
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def caller_provenance(plan: dict) -> list | None:
    """Provenance of the records the caller listed. Upstream also lists identical records
    of the same id found in lower-precedence sources (the interpreter prefix's installed
    adapters); ours stops at the first source that has the id (DESIGN §4)."""
    resolved = plan.get("adapter_descriptor")
    if not isinstance(resolved, dict):
        return None
    return [p for p in resolved.get("provenance", []) if p.get("source") == "explicit_local"]


def shape_differences(upstream: dict, ours: dict) -> list[str]:
    differences = []
    for path in COMPARED_FIELDS:
        if path == ("adapter_descriptor", "provenance"):
            a, b = caller_provenance(upstream), caller_provenance(ours)
        else:
            a, b = field(upstream, path), field(ours, path)
        if a != b:
            differences.append(f"{'.'.join(path)}: upstream={json.dumps(a, sort_keys=True)[:200]} ours={json.dumps(b, sort_keys=True)[:200]}")
    # Every key of upstream's SDK plan mapping is in ours (ours may have more: optional
    # blocks upstream's mapping drops, and OUR_EXTRA_KEYS).
    missing = sorted(set(upstream.get("_mapping_keys", [])) - set(ours))
    if missing:
        differences.append(f"plan keys missing from ours: {missing}")
    extra = sorted(set(ours) - set(upstream) - OUR_EXTRA_KEYS - {"_mapping_keys"})
    if extra:
        differences.append(f"plan keys only in ours: {extra}")
    return differences


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabric", type=Path, default=REPO / "target" / "debug" / "fabric")
    parser.add_argument("--catalog", type=Path, default=None, help="default: the installed package's")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    catalog = json.loads((args.catalog or installed_catalog()).read_text())
    rows = []
    with tempfile.TemporaryDirectory(prefix="fabric-compare-") as tmp:
        base = Path(tmp)
        descriptors = base / "descriptors"
        descriptors.mkdir()
        for adapter_id, entry in catalog["adapters"].items():
            (descriptors / f"{adapter_id}.fabric-adapter.json").write_text(json.dumps(entry["descriptor"]))
        for target_id, entry in catalog["targets"].items():
            (descriptors / f"{target_id}.fabric-target.json").write_text(json.dumps(entry["descriptor"]))
        cases = [
            (adapter_id, name, cfg)
            for adapter_id, entry in catalog["adapters"].items()
            for name, cfg in variants(adapter_id, entry["descriptor"])
        ]
        cases += [("(targets)", name, cfg) for name, cfg in target_variants()]
        for index, (adapter_id, name, partial) in enumerate(cases):
            config = {
                "schema_version": "fabric.agent/v1alpha1",
                "metadata": {"name": f"case-{index}"},
                "discovery": {"local_paths": ["descriptors"]},
            }
            config.update(copy.deepcopy(partial))
            config_file = base / f"case-{index}.json"
            config_file.write_text(json.dumps(config))
            up_ok, up_msg, up_plan = upstream_plan(config, base)
            our_ok, our_msg, our_plan_json = our_plan(args.fabric, config_file, base)
            rows.append(
                {
                    "adapter_id": adapter_id,
                    "variant": name,
                    "upstream": up_ok,
                    "ours": our_ok,
                    "upstream_error": up_msg,
                    "our_error": our_msg,
                    "shape": shape_differences(up_plan, our_plan_json) if up_plan and our_plan_json else [],
                }
            )

    agree = [row for row in rows if row["upstream"] == row["ours"]]
    disagree = [row for row in rows if row["upstream"] != row["ours"]]
    for row in agree:
        names = ERROR_NAMES.get(row["variant"])
        if names and not row["ours"] and not (names[0] in row["upstream_error"] and names[1] in row["our_error"]):
            row["shape"].append(f"error names differ: upstream={row['upstream_error']!r} ours={row['our_error']!r}")
    unexplained = [row for row in disagree if row["variant"] not in KNOWN_DIFFERENCES]
    shape = [row for row in agree if row["shape"]]
    summary = {
        "cases": len(rows),
        "agree": len(agree),
        "disagree": len(disagree),
        "unexplained": len(unexplained),
        "accepted_by_both": sum(1 for row in agree if row["ours"]),
        "rejected_by_both": sum(1 for row in agree if not row["ours"]),
        "shape_differences": len(shape),
        "disagreements": disagree,
        "shape_rows": shape,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"cases {summary['cases']}: agree {summary['agree']} "
            f"(accept {summary['accepted_by_both']}, reject {summary['rejected_by_both']}), "
            f"disagree {summary['disagree']} (unexplained {summary['unexplained']}); "
            f"plans accepted by both with a different shape: {summary['shape_differences']}"
        )
        for row in shape:
            print(f"  [shape] {row['adapter_id']} {row['variant']}")
            for line in row["shape"]:
                print(f"      {line}")
        for row in disagree:
            known = "known" if row["variant"] not in [r["variant"] for r in unexplained] else "UNEXPLAINED"
            print(f"  [{known}] {row['adapter_id']} {row['variant']}: upstream={'accept' if row['upstream'] else 'reject'} ours={'accept' if row['ours'] else 'reject'}")
            print(f"      upstream: {row['upstream_error'] or '-'}")
            print(f"      ours:     {row['our_error'] or '-'}")
        if args.verbose:
            for row in agree:
                print(f"  ok {row['adapter_id']} {row['variant']}: {'accept' if row['ours'] else 'reject'}")
    return 0 if not unexplained and not shape else 1


if __name__ == "__main__":
    sys.exit(main())
