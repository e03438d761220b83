//! An MCP tool's input schema made acceptable to strict providers.
//!
//! MCP servers send full JSON Schema; OpenAI wants an object schema with `properties`,
//! and Gemini's OpenAI-compatible endpoint takes only an OpenAPI-like subset (no `$ref`,
//! no type arrays, no `additionalProperties`, `const`, `$schema`...). [`for_model`] keeps
//! what both accept: local `$ref`s are inlined (a cycle becomes a plain object with a
//! note), `const` becomes a one-value `enum`, `oneOf` becomes `anyOf`, a one-member
//! `anyOf`/`allOf` is unwrapped (a longer `allOf` of objects is merged), a type array
//! becomes its first non-null type with `nullable`, a missing type is inferred (object,
//! array, string, number), `required` keeps only listed properties, and every other
//! keyword is dropped. A schema whose top level cannot be an object is refused with the
//! reason; the caller then offers the tool with [`permissive`] and says so.

use serde_json::{json, Map, Value};

/// Nesting deeper than this is cut (a plain object), like a `$ref` cycle.
const MAX_DEPTH: usize = 32;

/// Keywords kept as they are (after their values are checked where it matters).
const KEPT: &[&str] = &[
    "description",
    "format",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "default",
    "nullable",
];

/// The schema a tool is offered with when its own cannot be used: any object.
pub fn permissive() -> Value {
    json!({"type": "object", "properties": {}})
}

/// The tool's input schema as the model is sent it, or why it cannot be made valid.
pub fn for_model(schema: &Map<String, Value>) -> Result<Value, String> {
    let mut root = schema.clone();
    // A missing top-level type means "object": that is what tool arguments are.
    root.entry("type").or_insert_with(|| json!("object"));
    let root = Value::Object(root);
    let mut top = simplify(&root, &root, &mut Vec::new(), 0);
    let Value::Object(object) = &mut top else {
        return Err("its input schema is not an object".into());
    };
    match object.get("type").and_then(Value::as_str) {
        Some("object") => {}
        Some(other) => {
            return Err(format!(
                "its input schema is of type {other:?}, and a tool's arguments must be an object"
            ))
        }
        None => {
            object.insert("type".into(), json!("object"));
        }
    }
    object.entry("properties").or_insert_with(|| json!({}));
    Ok(top)
}

/// One schema node, simplified; `refs` holds the `$ref`s being inlined above it.
fn simplify(node: &Value, root: &Value, refs: &mut Vec<String>, depth: usize) -> Value {
    let Value::Object(map) = node else {
        // `true`/`false` schemas (anything / nothing) and junk: a string is what a model
        // can always send.
        return json!({"type": "string"});
    };
    if depth > MAX_DEPTH {
        return json!({"type": "object", "description": "(nested too deeply to describe)"});
    }
    if let Some(Value::String(reference)) = map.get("$ref") {
        if refs.contains(reference) {
            return json!({"type": "object", "description": format!("(recursive: {reference})")});
        }
        let Some(target) = resolve(root, reference) else {
            return json!({"type": "object", "description": format!("(unresolved reference {reference})")});
        };
        refs.push(reference.clone());
        let mut inlined = simplify(target, root, refs, depth + 1);
        refs.pop();
        // Keywords next to the `$ref` (a description, typically) win over the target's.
        if let (Value::Object(out), Some(Value::String(d))) = (&mut inlined, map.get("description"))
        {
            out.insert("description".into(), json!(d));
        }
        return inlined;
    }
    for wrapper in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(members)) = map.get(wrapper) {
            if members.len() == 1 {
                let mut rest = map.clone();
                rest.remove(wrapper);
                let mut inner = simplify(&members[0], root, refs, depth + 1);
                merge_into(
                    &mut inner,
                    simplify(&Value::Object(rest), root, refs, depth + 1),
                );
                return inner;
            }
        }
    }
    let mut out = Map::new();
    for key in KEPT {
        if let Some(v) = map.get(*key) {
            out.insert((*key).into(), v.clone());
        }
    }
    if let Some(v) = map.get("const") {
        out.insert("enum".into(), json!([v]));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        out.insert("enum".into(), json!(values));
    }
    match map.get("type") {
        Some(Value::String(t)) => {
            out.insert("type".into(), json!(t));
        }
        Some(Value::Array(types)) => {
            let named: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            if let Some(t) = named.iter().find(|t| **t != "null") {
                out.insert("type".into(), json!(t));
            }
            if named.contains(&"null") {
                out.insert("nullable".into(), json!(true));
            }
        }
        _ => {}
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        let props: Map<String, Value> = props
            .iter()
            .map(|(k, v)| (k.clone(), simplify(v, root, refs, depth + 1)))
            .collect();
        out.insert("properties".into(), Value::Object(props));
    }
    if let Some(items) = map.get("items") {
        out.insert("items".into(), simplify(items, root, refs, depth + 1));
    }
    for wrapper in ["anyOf", "oneOf"] {
        if let Some(Value::Array(members)) = map.get(wrapper) {
            let members: Vec<Value> = members
                .iter()
                .map(|m| simplify(m, root, refs, depth + 1))
                .collect();
            out.insert("anyOf".into(), Value::Array(members));
        }
    }
    if let Some(Value::Array(members)) = map.get("allOf") {
        for member in members {
            let mut whole = Value::Object(std::mem::take(&mut out));
            merge_into(&mut whole, simplify(member, root, refs, depth + 1));
            if let Value::Object(m) = whole {
                out = m;
            }
        }
    }
    if !out.contains_key("type") && !out.contains_key("anyOf") {
        let first_value = out
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|values| values.first());
        let inferred = if let Some(value) = first_value {
            match value {
                Value::Number(_) => "number",
                Value::Bool(_) => "boolean",
                _ => "string",
            }
        } else if out.contains_key("properties") || map.contains_key("required") {
            "object"
        } else if out.contains_key("items") {
            "array"
        } else if ["minimum", "maximum"].iter().any(|k| out.contains_key(*k)) {
            "number"
        } else {
            "string"
        };
        out.insert("type".into(), json!(inferred));
    }
    match out.get("type").and_then(Value::as_str) {
        Some("object") => {
            out.entry("properties").or_insert_with(|| json!({}));
        }
        Some("array") => {
            out.entry("items")
                .or_insert_with(|| json!({"type": "string"}));
        }
        _ => {}
    }
    if let (Some(Value::Array(required)), Some(Value::Object(props))) =
        (map.get("required"), out.get("properties"))
    {
        let required: Vec<Value> = required
            .iter()
            .filter(|r| r.as_str().is_some_and(|r| props.contains_key(r)))
            .cloned()
            .collect();
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
    }
    Value::Object(out)
}

/// `#/$defs/A`, `#/definitions/A`, or any other JSON pointer into the root.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// Add `extra`'s properties, required names and other keywords to `into` (the first
/// value of a keyword wins; properties and required add up).
fn merge_into(into: &mut Value, extra: Value) {
    let (Value::Object(into), Value::Object(extra)) = (into, extra) else {
        return;
    };
    for (key, value) in extra {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (k, v) in theirs {
                    mine.entry(k).or_insert(v);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for r in theirs {
                    if !mine.contains(&r) {
                        mine.push(r);
                    }
                }
            }
            // An inferred "string" type of a wrapper's leftover keywords must not
            // override the member's real type.
            (_, Some(_), _) => {}
            (_, None, value) => {
                into.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(schema: Value) -> Result<Value, String> {
        for_model(schema.as_object().unwrap())
    }

    #[test]
    fn an_object_schema_gets_properties_and_loses_what_providers_refuse() {
        assert_eq!(
            model(json!({})).unwrap(),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            model(json!({"type": "object"})).unwrap(),
            json!({"type": "object", "properties": {}})
        );
        let python_style = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "get_current_timeArguments",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "timezone": {"title": "Timezone", "type": "string", "description": "IANA name"},
                "when": {"type": ["string", "null"], "format": "date-time"},
                "mode": {"const": "fast"},
            },
            "required": ["timezone", "gone"],
        });
        assert_eq!(
            model(python_style).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "timezone": {"type": "string", "description": "IANA name"},
                    "when": {"type": "string", "format": "date-time", "nullable": true},
                    "mode": {"enum": ["fast"], "type": "string"},
                },
                "required": ["timezone"],
            })
        );
    }

    #[test]
    fn refs_are_inlined_and_cycles_cut() {
        let schema = json!({
            "type": "object",
            "$defs": {
                "Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                "Tree": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Tree"}}},
            },
            "properties": {
                "at": {"$ref": "#/$defs/Point", "description": "where"},
                "tree": {"$ref": "#/$defs/Tree"},
                "lost": {"$ref": "#/$defs/Nowhere"},
                "one": {"anyOf": [{"$ref": "#/definitions/Nope"}]},
            },
        });
        let out = model(schema).unwrap();
        assert_eq!(
            out["properties"]["at"],
            json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "description": "where"})
        );
        assert_eq!(
            out["properties"]["tree"]["properties"]["child"],
            json!({"type": "object", "description": "(recursive: #/$defs/Tree)"})
        );
        assert_eq!(out["properties"]["lost"]["type"], "object");
        assert_eq!(out["properties"]["one"]["type"], "object");
        assert!(out.get("$defs").is_none());
        assert!(!out.to_string().contains("$ref"));
    }

    #[test]
    fn unions_types_and_arrays() {
        let out = model(json!({
            "properties": {
                "a": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "b": {"allOf": [
                    {"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]},
                    {"properties": {"q": {"type": "boolean"}}, "required": ["q"]}
                ]},
                "c": {"items": {"enum": [1, 2]}},
                "d": true,
                "e": {"minimum": 0},
                "f": {"type": "array"},
            }
        }))
        .unwrap();
        assert_eq!(out["type"], "object");
        let p = &out["properties"];
        assert_eq!(
            p["a"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert_eq!(p["b"]["type"], "object");
        assert_eq!(p["b"]["properties"]["p"]["type"], "string");
        assert_eq!(p["b"]["properties"]["q"]["type"], "boolean");
        assert_eq!(p["b"]["required"], json!(["p", "q"]));
        assert_eq!(
            p["c"],
            json!({"type": "array", "items": {"enum": [1, 2], "type": "number"}})
        );
        assert_eq!(p["d"], json!({"type": "string"}));
        assert_eq!(p["e"], json!({"minimum": 0, "type": "number"}));
        assert_eq!(
            p["f"],
            json!({"type": "array", "items": {"type": "string"}})
        );
    }

    #[test]
    fn a_schema_that_cannot_be_an_object_is_refused_with_the_reason() {
        assert_eq!(
            model(json!({"type": "array", "items": {}})).unwrap_err(),
            "its input schema is of type \"array\", and a tool's arguments must be an object"
        );
        assert!(model(json!({"type": "null"})).is_err());
        assert_eq!(permissive()["type"], "object");
    }

    #[test]
    fn deep_nesting_is_cut() {
        let mut schema = json!({"type": "string"});
        for _ in 0..100 {
            schema = json!({"type": "object", "properties": {"n": schema}});
        }
        let out = model(schema).unwrap();
        assert!(out.to_string().contains("nested too deeply"));
    }
}
