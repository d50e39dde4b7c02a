package fabric_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func readScriptedDescriptor(t *testing.T) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(scriptedDescriptor(t))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestInspectAdapter(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	descriptor := readScriptedDescriptor(t)
	config := scriptedConfig(t, "inspect", nil)
	profile, err := f.InspectAdapter(ctx, config, descriptor, nil)
	if err != nil {
		t.Fatal(err)
	}
	if profile.AdapterID != "fabric.scripted" || !profile.Skills || profile.MCP || profile.ATIF {
		t.Fatalf("profile: %+v", profile)
	}
	plan, err := f.Plan(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	if profile.DescriptorSHA256 == "" || profile.DescriptorSHA256 != plan.DescriptorSHA256 {
		t.Fatalf("fingerprint %q, plan %q", profile.DescriptorSHA256, plan.DescriptorSHA256)
	}
	// A decoded descriptor is encoded again; the profile is the same.
	var decoded map[string]any
	if err := json.Unmarshal(descriptor, &decoded); err != nil {
		t.Fatal(err)
	}
	if again, err := f.InspectAdapter(ctx, config, decoded, nil); err != nil || *again != *profile {
		t.Fatalf("decoded descriptor: %+v %v", again, err)
	}
	without, err := f.InspectAdapter(ctx, config, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if without.Skills || without.DescriptorSHA256 != "" {
		t.Fatalf("without a descriptor: %+v", without)
	}
}

func TestInspectAdapterErrors(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	descriptor := readScriptedDescriptor(t)

	unknown := scriptedConfig(t, "inspect-unknown", nil)
	unknown.Harness = &fabric.Harness{AdapterID: "no.such.adapter"}
	_, err := f.InspectAdapter(ctx, unknown, descriptor, nil)
	var capability *fabric.CapabilityError
	if !errors.As(err, &capability) || capability.Code != "config_incompatible" || capability.Metadata["path"] != "harness.adapter_id" {
		t.Fatalf("unknown adapter: want *CapabilityError config_incompatible at harness.adapter_id, got %T %v", err, err)
	}

	skills := map[string]any{"metadata": map[string]any{"name": "inspect-skills"}, "harness": map[string]any{"adapter_id": "fabric.scripted"}, "skills": map[string]any{"paths": []string{"skills/a"}}}
	if _, err := f.InspectAdapter(ctx, skills, nil, nil); !errors.As(err, &capability) || capability.Metadata["path"] != "skills" {
		t.Fatalf("skills without a descriptor: got %T %v", err, err)
	}

	var configErr *fabric.ConfigError
	_, err = f.InspectAdapter(ctx, scriptedConfig(t, "inspect-bad", nil), `{"bogus": 1}`, nil)
	if !errors.As(err, &configErr) || configErr.Code != "descriptor_unsupported_contract" {
		t.Fatalf("bad descriptor: got %T %v", err, err)
	}
	if _, err := f.InspectAdapter(ctx, scriptedConfig(t, "inspect-nul", nil), "{}\x00", nil); !errors.As(err, &configErr) || configErr.Code != "invalid_argument" {
		t.Fatalf("NUL byte: got %v", err)
	}
}
