//! The crate graph of ARCHITECTURE.md holds (`cargo xtask check-layers`).

use xtask::layers::{self, Rules};

#[test]
fn the_workspace_follows_the_layers_of_architecture_md() {
    let findings = layers::check(&xtask::repo_root()).expect("check");
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}

#[test]
fn an_upward_dependency_is_a_finding() {
    let rules = layers::rules(
        "<!-- layers -->\n| crate | may import | tests may also import |\n| --- | --- | --- |\n\
         | fabric-reactor | | |\n| fabric-relay | fabric-reactor | fabric-config |\n<!-- /layers -->",
    )
    .expect("rules");
    let set = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
    let mut graph = Rules::new();
    graph.insert("fabric-reactor".into(), (set(&["fabric-relay"]), set(&[])));
    graph.insert(
        "fabric-relay".into(),
        (set(&["fabric-reactor"]), set(&["fabric-config"])),
    );
    let findings = layers::findings(&rules, &graph);
    assert_eq!(
        findings,
        ["`fabric-reactor` depends on `fabric-relay`, which ARCHITECTURE.md does not allow"]
    );
    graph.insert("fabric-extra".into(), (set(&[]), set(&[])));
    assert_eq!(layers::findings(&rules, &graph).len(), 2);
}
