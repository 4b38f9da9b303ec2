//! Generated schemas match the types. Regenerate with `COR_UPDATE_SCHEMAS=1 cargo test schema`.

use crate::common::root;

#[test]
fn checked_in_schemas_are_current() {
    let update = std::env::var_os("COR_UPDATE_SCHEMAS").is_some();
    for (name, fresh) in coroner::cli::schema::published() {
        let path = root().join("schemas").join(name);
        if update {
            std::fs::write(&path, &fresh).unwrap();
            continue;
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(on_disk == fresh, "schemas/{name} is stale: run `COR_UPDATE_SCHEMAS=1 cargo test schema` and commit it");
    }
}

#[test]
fn the_trajectory_schema_names_the_contract_fields() {
    let (_, s) = coroner::cli::schema::published().into_iter().find(|(n, _)| *n == "trajectory.schema.json").unwrap();
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    let props = v["properties"].as_object().unwrap();
    for field in
        ["id", "task_id", "arm", "trial", "harness", "model", "steps", "termination", "outcome", "declared_tools", "usage", "provenance"]
    {
        assert!(props.contains_key(field), "schema lacks {field}");
    }
    let required: Vec<&str> = v["required"].as_array().unwrap().iter().filter_map(|x| x.as_str()).collect();
    assert!(required.contains(&"termination") && required.contains(&"outcome") && required.contains(&"provenance"));
}
