package fabric_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// The request and config models are written by hand; their JSON names must exist in the
// schemas generated from the Rust types.
func TestRequestModelsMatchSchemas(t *testing.T) {
	agent := loadSchema(t, "agent.schema.json")
	checkStruct(t, agent, agent, reflect.TypeOf(fabric.Config{}), "Config")
	// Config.SystemStats is raw JSON; SystemStatsConfig.JSON produces its object form.
	checkStruct(t, agent, property(t, agent, agent, "system_stats", "Config"), reflect.TypeOf(fabric.SystemStatsConfig{}), "SystemStatsConfig")

	run := loadSchema(t, "run-request.schema.json")
	checkStruct(t, run, run, reflect.TypeOf(fabric.RunRequest{}), "RunRequest")

	check := loadSchema(t, "check-request.schema.json")
	checkStruct(t, check, check, reflect.TypeOf(fabric.CheckRequest{}), "CheckRequest")
}

func loadSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "schemas", "sdk", name))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return schema
}

// resolve follows $ref and picks the object branch of an anyOf/oneOf (`X | null`).
func resolve(t *testing.T, root, node map[string]any, where string) map[string]any {
	t.Helper()
	for i := 0; i < 32; i++ {
		if ref, ok := node["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, "#/$defs/")
			defs, _ := root["$defs"].(map[string]any)
			target, _ := defs[name].(map[string]any)
			if !found || target == nil {
				t.Fatalf("%s: unresolvable $ref %q", where, ref)
			}
			node = target
			continue
		}
		var next map[string]any
		for _, key := range []string{"anyOf", "oneOf"} {
			branches, _ := node[key].([]any)
			for _, branch := range branches {
				b, _ := branch.(map[string]any)
				if b != nil && b["type"] != "null" {
					next = b
					break
				}
			}
		}
		if next == nil {
			return node
		}
		node = next
	}
	t.Fatalf("%s: $ref cycle", where)
	return nil
}

func property(t *testing.T, root, node map[string]any, name, where string) map[string]any {
	t.Helper()
	props, _ := resolve(t, root, node, where)["properties"].(map[string]any)
	prop, ok := props[name].(map[string]any)
	if !ok {
		known := make([]string, 0, len(props))
		for key := range props {
			known = append(known, key)
		}
		sort.Strings(known)
		t.Fatalf("%s: json name %q is not a schema property (schema has %v)", where, name, known)
	}
	return prop
}

// checkStruct checks every json tag of typ against the schema object node and recurses
// into struct-typed fields (through pointers, slices and map values).
func checkStruct(t *testing.T, root, node map[string]any, typ reflect.Type, where string) {
	t.Helper()
	for i := 0; i < typ.NumField(); i++ {
		field := typ.Field(i)
		if !field.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			t.Errorf("%s.%s has no json tag", where, field.Name)
			continue
		}
		path := where + "." + field.Name
		prop := property(t, root, node, name, path)
		checkValue(t, root, prop, field.Type, path)
	}
}

func checkValue(t *testing.T, root, node map[string]any, typ reflect.Type, where string) {
	t.Helper()
	switch typ.Kind() {
	case reflect.Pointer:
		checkValue(t, root, node, typ.Elem(), where)
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 { // json.RawMessage
			return
		}
		items, _ := resolve(t, root, node, where)["items"].(map[string]any)
		if items == nil {
			t.Fatalf("%s: schema has no items", where)
		}
		checkValue(t, root, items, typ.Elem(), where+"[]")
	case reflect.Map:
		values, _ := resolve(t, root, node, where)["additionalProperties"].(map[string]any)
		if values == nil {
			if typ.Elem().Kind() == reflect.Struct {
				t.Fatalf("%s: schema has no additionalProperties schema", where)
			}
			return
		}
		checkValue(t, root, values, typ.Elem(), where+"[]")
	case reflect.Struct:
		checkStruct(t, root, node, typ, where)
	}
}
