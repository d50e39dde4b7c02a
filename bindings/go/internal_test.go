package fabric

import "testing"

func TestStatusesMatchHeader(t *testing.T) {
	for status, header := range headerStatuses() {
		if int32(status) != header {
			t.Errorf("Status %d differs from the header's %d", status, header)
		}
	}
	if ABIVersion != 2 {
		t.Fatal("ABIVersion must match the header's FABRIC_ABI_VERSION (checked by the preamble)")
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
		got, err := collect(tc.opts).json()
		if err != nil || got != tc.want {
			t.Errorf("options %v: got %q, %v; want %q", tc.opts, got, err, tc.want)
		}
	}
	if _, err := collect([]Option{WithBaseDir("a\x00b")}).json(); err == nil {
		t.Error("a NUL byte in base dir must be rejected")
	}
}
