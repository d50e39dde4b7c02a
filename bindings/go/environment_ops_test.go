package fabric_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fabric "github.com/NVIDIA/fabric-core/bindings/go"
)

// running reports whether pid runs (no zombie), waiting up to 2 s for a SIGKILL to land.
func running(pid string) bool {
	deadline := time.Now().Add(2 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return false
		}
		text := string(stat)
		state := text[strings.LastIndex(text, ") ")+2]
		if state == 'Z' || state == 'X' {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEnvironmentExecAndFilesInASubprocessEnvironment(t *testing.T) {
	f := newFabric(t)
	ctx := context.Background()
	root, err := os.MkdirTemp("/tmp", "fc-go-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	config := attachConfig(t, "relative", "subprocess")
	config.Environment["settings"] = map[string]any{"root": root}
	environment, err := f.PrepareEnvironment(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	defer environment.Close()

	if err := environment.WriteFile(ctx, "task/check.sh", []byte("read a < answer.txt; [ \"$a\" = 42 ]\n"), nil, fabric.FileRootWorkspace); err != nil {
		t.Fatal(err)
	}
	if _, err := environment.Exec(ctx, fabric.ExecRequest{Argv: []string{"sh", "-c", "echo 42 > answer.txt"}, Cwd: "task"}); err != nil {
		t.Fatal(err)
	}
	verdict, err := environment.Exec(ctx, fabric.ExecRequest{Argv: []string{"sh", "check.sh"}, Cwd: "task"})
	if err != nil || verdict.ExitCode == nil || *verdict.ExitCode != 0 {
		t.Fatalf("verdict: %+v %v", verdict, err)
	}
	content, err := environment.ReadFile(ctx, "task/answer.txt", 0, fabric.FileRootWorkspace)
	if data, _ := content.Bytes(); err != nil || string(data) != "42\n" {
		t.Fatalf("read: %+v %v", content, err)
	}
	listing, err := environment.List(ctx, "task", fabric.FileRootWorkspace)
	if err != nil || len(listing.Entries) != 2 || listing.Entries[0].Name != "answer.txt" {
		t.Fatalf("list: %+v %v", listing, err)
	}
	cut, err := environment.Exec(ctx, fabric.ExecRequest{Argv: []string{"sh", "-c", "yes | head -c 4000; exit 5"}, OutputLimitBytes: 4})
	if err != nil || cut.Stdout != "y\ny\n" || !cut.StdoutTruncated || *cut.ExitCode != 5 {
		t.Fatalf("cut: %+v %v", cut, err)
	}
	slow, err := environment.Exec(ctx, fabric.ExecRequest{Argv: []string{"sh", "-c", "sh -c 'echo $$ > gc.pid; sleep 30' & sleep 30"}, TimeoutSeconds: 0.5})
	if err != nil || !slow.TimedOut || slow.ExitCode != nil {
		t.Fatalf("slow: %+v %v", slow, err)
	}
	pid, err := environment.ReadFile(ctx, "gc.pid", 0, fabric.FileRootWorkspace)
	if data, _ := pid.Bytes(); err != nil || running(strings.TrimSpace(string(data))) {
		t.Fatalf("the grandchild survived the deadline: %+v %v", pid, err)
	}
	secret := filepath.Join(root, "secret.txt")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := environment.Exec(ctx, fabric.ExecRequest{Argv: []string{"ln", "-s", secret, "loot"}}); err != nil {
		t.Fatal(err)
	}
	_, err = environment.ReadFile(ctx, "loot", 0, fabric.FileRootWorkspace)
	var runtimeErr *fabric.RuntimeError
	if !errors.As(err, &runtimeErr) || runtimeErr.Code != "path_refused" {
		t.Fatalf("want path_refused, got %v", err)
	}
	if _, err := environment.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
