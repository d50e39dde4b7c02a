package fabric_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDocsShowQuickstartVerbatim(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "go.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join("examples", "quickstart", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), strings.TrimSpace(string(example))) {
		t.Fatal("docs/go.md must contain examples/quickstart/main.go verbatim")
	}
}

func TestQuickstartRuns(t *testing.T) {
	scriptedDescriptor(t)
	cmd := exec.Command("go", "run", "./examples/quickstart")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "adapter: fabric.scripted\nrun: succeeded you said hello\nturn first: you said first\nturn second: before that you said first\n"
	if string(out) != want {
		t.Fatalf("got:\n%s", out)
	}
}

func TestHealthExampleRuns(t *testing.T) {
	scriptedDescriptor(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "go.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join("examples", "health", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), strings.TrimSpace(string(example))) {
		t.Fatal("docs/go.md must contain examples/health/main.go verbatim")
	}
	out, err := exec.Command("go", "run", "./examples/health").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "processes: 1 rss > 0: true\nafter: available sampled peak >= 350 MiB: true\ncheck: passed [live active ready]\n"
	if string(out) != want {
		t.Fatalf("got:\n%s", out)
	}
}

func TestStreamExampleRuns(t *testing.T) {
	scriptedDescriptor(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "go.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join("examples", "stream", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), strings.TrimSpace(string(example))) {
		t.Fatal("docs/go.md must contain examples/stream/main.go verbatim")
	}
	out, err := exec.Command("go", "run", "./examples/stream").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "streaming: true\nStreaming, one small piece at a time.\n7 chunks, succeeded\nfirst: Stream\nwhole: Streaming, one small piece at a time.\n"
	if string(out) != want {
		t.Fatalf("got:\n%s", out)
	}
}
