package fabric

import "testing"

func TestStatusesMatchHeader(t *testing.T) {
	for status, header := range headerStatuses() {
		if int32(status) != header {
			t.Errorf("Status %d differs from the header's %d", status, header)
		}
	}
	if ABIVersion != 1 {
		t.Fatal("ABIVersion must match the header's FABRIC_ABI_VERSION (checked by the preamble)")
	}
}
