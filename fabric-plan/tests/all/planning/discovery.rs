//! Descriptor discovery: precedence, merging, ambiguity and invalid files.

use fabric_config::plan::DescriptorSource;
use fabric_plan::{DiscoveryOptions, PlanOptions};
use serde_json::{Value, json};

use super::world::{World, options, repo};

#[test]
fn discovery_precedence_merging_and_ambiguity() {
    let Some(world) = World::new() else {
        return;
    };
    let root = world.base();
    let claude = world.catalog["adapters"]["nvidia.fabric.claude"]["descriptor"].clone();
    let write = |dir: &str, name: &str, value: &Value| {
        let dir = root.join(dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join(name), value.to_string()).expect("write");
    };
    write("dup", "a.fabric-adapter.json", &claude);
    write("dup", "b.fabric-adapter.json", &claude);
    let config = |paths: Value| {
        world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "discovery": {"local_paths": paths}}))
    };
    let plan = fabric_plan::plan(&config(json!(["dup"])), root, &options())
        .expect("identical duplicates merge");
    let provenance = plan.adapter_descriptor.expect("a").provenance;
    assert_eq!(provenance.len(), 2);
    assert_eq!(provenance[0].root, root.join("dup").display().to_string());

    let mut changed = claude.clone();
    changed["x_variant"] = json!(1);
    write("dup", "c.fabric-adapter.json", &changed);
    let error =
        fabric_plan::plan(&config(json!(["dup"])), root, &options()).expect_err("ambiguous");
    assert_eq!(error.code(), "descriptor_ambiguous");
    let message = error.to_string();
    assert!(
        message.contains("a.fabric-adapter.json") && message.contains("c.fabric-adapter.json"),
        "{message}"
    );

    // Explicit local beats FABRIC_ADAPTER_PATH-style env paths, which beat installed and bundled.
    write("env", "claude.fabric-adapter.json", &changed);
    write(
        "prefix/share/nemo-fabric/adapters/claude",
        "claude.fabric-adapter.json",
        &changed,
    );
    let sources = DiscoveryOptions {
        local_paths: Vec::new(),
        env_paths: vec![root.join("env")],
        interpreter_prefix: None,
        installed_prefixes: vec![root.join("prefix")],
        bundled_root: Some(root.join("catalog")),
        builtin: false,
        development_root: None,
    };
    let opts = PlanOptions {
        discovery: Some(sources.clone()),
        ..PlanOptions::default()
    };
    let no_local = world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "discovery": {"local_paths": []}}));
    let plan = fabric_plan::plan(&no_local, root, &opts).expect("env path");
    assert_eq!(
        plan.adapter_descriptor.as_ref().expect("a").provenance[0].source,
        DescriptorSource::EnvPath
    );
    let plan = fabric_plan::plan(&config(json!(["catalog"])), root, &opts).expect("explicit");
    assert_eq!(
        plan.adapter_descriptor.as_ref().expect("a").provenance[0].source,
        DescriptorSource::ExplicitLocal
    );
    let installed_only = PlanOptions {
        discovery: Some(DiscoveryOptions {
            env_paths: Vec::new(),
            ..sources.clone()
        }),
        ..PlanOptions::default()
    };
    let plan = fabric_plan::plan(&no_local, root, &installed_only).expect("installed");
    assert_eq!(
        plan.adapter_descriptor.as_ref().expect("a").provenance[0].source,
        DescriptorSource::InstalledPackage
    );
    // The calling interpreter's prefix (CallOptions.python_prefix) beats the installed ones.
    write(
        "caller/share/nemo-fabric/adapters/claude",
        "claude.fabric-adapter.json",
        &changed,
    );
    let from_caller = PlanOptions {
        python_prefix: Some(root.join("caller")),
        ..installed_only.clone()
    };
    let plan = fabric_plan::plan(&no_local, root, &from_caller).expect("interpreter prefix");
    let provenance = &plan.adapter_descriptor.as_ref().expect("a").provenance[0];
    assert_eq!(provenance.source, DescriptorSource::InterpreterPrefix);
    assert!(
        provenance.path.contains("/caller/share/"),
        "{}",
        provenance.path
    );
    let bundled_only = PlanOptions {
        discovery: Some(DiscoveryOptions {
            bundled_root: Some(root.join("catalog")),
            ..DiscoveryOptions::default()
        }),
        ..PlanOptions::default()
    };
    let plan = fabric_plan::plan(&no_local, root, &bundled_only).expect("bundled");
    assert_eq!(
        plan.adapter_descriptor.as_ref().expect("a").provenance[0].source,
        DescriptorSource::Bundled
    );
    let error = fabric_plan::plan(
        &world.config(json!({"harness": {"adapter_id": "nope"}})),
        root,
        &options(),
    )
    .expect_err("unknown");
    assert_eq!(error.code(), "adapter_not_found");
    assert!(
        error.to_string().contains("nvidia.fabric.claude"),
        "lists available adapters: {error}"
    );
}

#[test]
fn invalid_files_in_searched_directories_are_skipped_unless_selected() {
    let Some(world) = World::new() else {
        return;
    };
    let mixed = world.base().join("mixed");
    std::fs::create_dir_all(&mixed).expect("mkdir");
    std::fs::write(
        mixed.join("claude.fabric-adapter.json"),
        world.catalog["adapters"]["nvidia.fabric.claude"]["descriptor"].to_string(),
    )
    .expect("write");
    for entry in std::fs::read_dir(repo().join("tests/fixtures/descriptors/invalid")).expect("dir")
    {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, mixed.join(path.file_name().expect("name"))).expect("copy");
    }
    let config = |id: &str, paths: Value| {
        world.config(json!({"harness": {"adapter_id": id}, "discovery": {"local_paths": paths}}))
    };
    fabric_plan::plan(
        &config("nvidia.fabric.claude", json!(["mixed"])),
        world.base(),
        &options(),
    )
    .expect("invalid neighbours are skipped");
    // Selecting an invalid descriptor reports its own error.
    let error = fabric_plan::plan(
        &config("test.fabric.legacy", json!(["mixed"])),
        world.base(),
        &options(),
    )
    .expect_err("selected invalid");
    assert_eq!(error.path(), Some("harness"));
    // Not found: the skipped files are named.
    let error = fabric_plan::plan(&config("nope", json!(["mixed"])), world.base(), &options())
        .expect_err("missing");
    assert!(
        error.to_string().contains("v1alpha1.fabric-adapter.json"),
        "{error}"
    );
    // An explicitly named invalid file fails.
    let error = fabric_plan::plan(
        &config(
            "nvidia.fabric.claude",
            json!(["mixed/remote-ref.fabric-adapter.json", "mixed"]),
        ),
        world.base(),
        &options(),
    )
    .expect_err("explicit invalid file");
    assert_eq!(error.code(), "descriptor_invalid_schema");
    let catalog = fabric_plan::discovery::discover_all(&DiscoveryOptions::explicit(vec![mixed]))
        .expect("catalog");
    assert_eq!(catalog.adapters.len(), 1);
    assert_eq!(catalog.invalid.len(), 4);
}

#[test]
fn invalid_fixture_descriptors_are_rejected_with_file_and_path() {
    let dir = repo().join("tests/fixtures/descriptors/invalid");
    let expected = [
        ("legacy-harness.fabric-adapter.json", "harness"),
        ("v1alpha1.fabric-adapter.json", "contract_version"),
        (
            "remote-ref.fabric-adapter.json",
            "settings_schema.properties.a.$ref",
        ),
        (
            "modes-without-system.fabric-adapter.json",
            "config.system_instruction_modes",
        ),
    ];
    for (name, path) in expected {
        let file = dir.join(name);
        let error = fabric_plan::load_adapter_descriptor(&file).expect_err(name);
        assert_eq!(error.path(), Some(path), "{error}");
        assert_eq!(error.file(), Some(file.as_path()));
        assert!(error.to_string().contains(name), "{error}");
    }
}
