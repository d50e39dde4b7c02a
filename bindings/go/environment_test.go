package fabric_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

func attachConfig(t *testing.T, workspace, provider string) fabric.Config {
	config := scriptedConfig(t, "attach", map[string]any{"replies": []string{"echo: {input}", "turn {turn}: {previous_input}"}})
	config.Environment = map[string]any{"provider": provider, "workspace": workspace}
	return config
}

func TestAttachEnvironmentKeepsCallerOwnership(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	workspace := t.TempDir()
	keep := filepath.Join(workspace, "keep.txt")
	if err := os.WriteFile(keep, []byte("caller data"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := attachConfig(t, workspace, "local")
	prepared, err := f.PrepareEnvironment(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	defer prepared.Close()
	if prepared.Info.Reference == nil || prepared.Info.Reference.Provider != "local" || prepared.Info.Reference.Resource["workspace"] != workspace {
		t.Fatalf("reference: %+v", prepared.Info.Reference)
	}
	attached, err := f.AttachEnvironment(ctx, config, *prepared.Info.Reference)
	if err != nil {
		t.Fatal(err)
	}
	defer attached.Close()
	if !attached.Info.Attached || attached.Info.Ownership != fabric.EnvironmentOwnershipCallerOwned || attached.Info.Workspace != workspace {
		t.Fatalf("attached: %+v", attached.Info)
	}
	rt, err := attached.StartRuntime(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"echo: one", "turn 2: one"} {
		result, err := rt.Invoke(ctx, fabric.RunRequest{Input: []string{"one", "two"}[i]})
		if err != nil || decodeOutput(t, result).Response != want {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	if _, err := rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	rt.Close()
	released, err := attached.Release(ctx)
	if err != nil || !released.Released {
		t.Fatalf("release: %+v %v", released, err)
	}
	if data, err := os.ReadFile(keep); err != nil || string(data) != "caller data" {
		t.Fatalf("release must only detach: %q %v", data, err)
	}
}

func TestAttachEnvironmentErrors(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	workspace := t.TempDir()
	cases := []struct {
		reference fabric.EnvironmentReference
		code      string
		path      string
	}{
		{fabric.EnvironmentReference{Provider: "local", Resource: map[string]any{"workspace": filepath.Join(workspace, "missing")}}, "environment_not_found", "resource.workspace"},
		{fabric.EnvironmentReference{Provider: "local"}, "invalid_environment_reference", "resource.workspace"},
		{fabric.EnvironmentReference{Provider: "other"}, "invalid_environment_reference", "provider"},
	}
	for _, c := range cases {
		_, err := f.AttachEnvironment(ctx, attachConfig(t, workspace, "local"), c.reference)
		var configErr *fabric.ConfigError
		if !errors.As(err, &configErr) || configErr.Code != c.code || configErr.Metadata["path"] != c.path {
			t.Fatalf("%+v: want %s at %s, got %v", c.reference, c.code, c.path, err)
		}
	}
	_, err := f.AttachEnvironment(ctx, attachConfig(t, workspace, "no-such-provider"), fabric.EnvironmentReference{Provider: "no-such-provider"})
	var configErr *fabric.ConfigError
	if !errors.As(err, &configErr) || configErr.Code != "environment_provider_not_found" {
		t.Fatalf("want environment_provider_not_found, got %v", err)
	}
}

func TestSubprocessProviderEnvironment(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	root := t.TempDir()
	config := attachConfig(t, "relative", "subprocess")
	config.Environment["settings"] = map[string]any{"root": root}
	prepared, err := f.PrepareEnvironment(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	defer prepared.Close()
	directory, _ := prepared.Info.Reference.Resource["directory"].(string)
	if filepath.Dir(directory) != root || prepared.Info.Ownership != fabric.EnvironmentOwnershipFabricOwned {
		t.Fatalf("prepared: %+v", prepared.Info)
	}
	attached, err := f.AttachEnvironment(ctx, config, *prepared.Info.Reference)
	if err != nil {
		t.Fatal(err)
	}
	defer attached.Close()
	if _, err := attached.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(directory); err != nil {
		t.Fatalf("detach must keep the environment: %v", err)
	}
	// A two-turn conversation through the runtime server inside the environment.
	rt, err := prepared.StartRuntime(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"echo: one", "turn 2: one"} {
		result, err := rt.Invoke(ctx, fabric.RunRequest{Input: []string{"one", "two"}[i]})
		if err != nil || decodeOutput(t, result).Response != want || result.Metadata["environment_provider"] != "subprocess" {
			t.Fatalf("turn %d: %+v %v", i+1, result, err)
		}
	}
	if _, err := rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	rt.Close()
	if _, err := prepared.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(directory); !os.IsNotExist(err) {
		t.Fatalf("release must delete what Fabric prepared: %v", err)
	}
}
