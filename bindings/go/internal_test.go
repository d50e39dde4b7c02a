package fabric

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

func TestStatusesMatchHeader(t *testing.T) {
	for status, header := range headerStatuses() {
		if int32(status) != header {
			t.Errorf("Status %d differs from the header's %d", status, header)
		}
	}
	if ABIVersion != headerABIVersion() {
		t.Fatalf("generated ABIVersion %d differs from the header's FABRIC_ABI_VERSION %d", ABIVersion, headerABIVersion())
	}
}

// TestErrorClasses checks that the generated tables give each status and code the class
// earlier (hand-written) versions of this package gave it.
func TestErrorClasses(t *testing.T) {
	cases := []struct {
		status Status
		code   string
		want   any
	}{
		{StatusConfig, "invalid_value", &ConfigError{}},
		{StatusCapability, "config_incompatible", &CapabilityError{}},
		{StatusRuntime, "host_crashed", &RuntimeError{}},
		{StatusInternal, "internal_panic", &RuntimeError{}},
		{StatusState, "runtime_busy", &StateError{}},
		{StatusResourceUnavailable, "resource_observation_unavailable", &ResourceUnavailableError{}},
		{StatusResourceUnsupported, "resource_observation_unsupported", &ResourceUnsupportedError{}},
		{StatusInvalidArgument, "null_argument", &ConfigError{}},
		{StatusInvalidArgument, "invalid_utf8", &ConfigError{}},
		{StatusInvalidArgument, "null_handle", &StateError{}},
		{StatusInvalidArgument, "stale_handle", &StateError{}},
		{StatusInvalidArgument, "unknown_handle", &StateError{}},
		{StatusInvalidArgument, "wrong_handle_kind", &StateError{}},
		{Status(42), "whatever", &RuntimeError{}},
	}
	for _, c := range cases {
		err := newError(c.status, &Info{ErrorInfo: ErrorInfo{Code: c.code}})
		if got, want := fmt.Sprintf("%T", err), fmt.Sprintf("%T", c.want); got != want {
			t.Errorf("status %d code %s: got %s, want %s", c.status, c.code, got, want)
		}
	}
}

func TestOptionsJSON(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{nil, `{}`},
		{[]Option{WithBaseDir("/w"), WithExpectedDescriptorSHA256("ab")}, `{"base_dir":"/w","expected_descriptor_sha256":"ab"}`},
	} {
		full, err := collect(tc.opts).json()
		var decoded map[string]json.RawMessage
		if err == nil {
			err = json.Unmarshal([]byte(full), &decoded)
		}
		binding := string(decoded["binding"])
		delete(decoded, "binding")
		stripped, _ := json.Marshal(decoded)
		if want := `{"name":"` + modulePath + `","runtime_name":"go","runtime_version":"` + runtime.Version() + `","version":"unknown"}`; binding != want {
			t.Errorf("options %v: binding %s, want %s", tc.opts, binding, want)
		}
		got := string(stripped)
		if err != nil || got != tc.want {
			t.Errorf("options %v: got %q, %v; want %q", tc.opts, got, err, tc.want)
		}
	}
	if _, err := collect([]Option{WithBaseDir("a\x00b")}).json(); err == nil {
		t.Error("a NUL byte in base dir must be rejected")
	}
}
