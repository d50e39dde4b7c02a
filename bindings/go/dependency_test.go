package fabric_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// missingDependency is the one rule for a test whose dependency is missing (the same rule
// as the repository's Rust, pytest and node suites): the test FAILS, naming what to
// install, unless FABRIC_ALLOW_SKIPS=1 asks for a partial run, which skips it.
func missingDependency(t *testing.T, what, install string) {
	t.Helper()
	reason := fmt.Sprintf("%s is missing; install it: %s", what, install)
	if strings.TrimSpace(os.Getenv("FABRIC_ALLOW_SKIPS")) == "1" {
		t.Skip(reason + " (FABRIC_ALLOW_SKIPS=1)")
	}
	t.Fatal(reason + " (or set FABRIC_ALLOW_SKIPS=1 for a partial run that skips this test)")
}

// requireProc fails (or skips, by the rule above) without /proc on Linux; elsewhere /proc
// does not exist at all and the test does not apply.
func requireProc(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if runtime.GOOS != "linux" {
		t.Skipf("platform: no /proc on %s", runtime.GOOS)
	}
	missingDependency(t, "/proc", "mount procfs (mount -t proc proc /proc)")
}

// TestDependencyProbe needs the tool FABRIC_DEPENDENCY_PROBE names; it passes at once when
// the variable is unset (every ordinary run).
func TestDependencyProbe(t *testing.T) {
	tool := os.Getenv("FABRIC_DEPENDENCY_PROBE")
	if tool == "" {
		return
	}
	if _, err := os.Stat(tool); err != nil {
		missingDependency(t, "the probe tool", "apt-get install fabric-probe-tool")
	}
}

// The rule, proven on TestDependencyProbe run by this test binary with a tool that does not
// exist: it fails naming what to install (CI changes nothing) unless FABRIC_ALLOW_SKIPS=1.
func TestMissingDependencyFailsUnlessSkipsAreAllowed(t *testing.T) {
	probe := func(env ...string) (string, error) {
		command := exec.Command(os.Args[0], "-test.run=^TestDependencyProbe$", "-test.v")
		for _, entry := range os.Environ() {
			if !strings.HasPrefix(entry, "FABRIC_ALLOW_SKIPS=") && !strings.HasPrefix(entry, "CI=") {
				command.Env = append(command.Env, entry)
			}
		}
		command.Env = append(command.Env, "FABRIC_DEPENDENCY_PROBE=/nonexistent/fabric-probe-tool")
		command.Env = append(command.Env, env...)
		out, err := command.CombinedOutput()
		return string(out), err
	}
	for _, env := range [][]string{nil, {"CI=true"}, {"FABRIC_ALLOW_SKIPS=0"}} {
		out, err := probe(env...)
		if err == nil {
			t.Fatalf("%v: the probe passed:\n%s", env, out)
		}
		if !strings.Contains(out, "the probe tool is missing; install it: apt-get install fabric-probe-tool") ||
			!strings.Contains(out, "FABRIC_ALLOW_SKIPS=1") {
			t.Fatalf("%v: the failure does not say what to install:\n%s", env, out)
		}
	}
	out, err := probe("FABRIC_ALLOW_SKIPS=1")
	if err != nil || !strings.Contains(out, "--- SKIP: TestDependencyProbe") {
		t.Fatalf("FABRIC_ALLOW_SKIPS=1 did not skip (%v):\n%s", err, out)
	}
}
