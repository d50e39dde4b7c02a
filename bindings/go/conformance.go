package fabric

/*
#include <stdlib.h>
#include "fabric.h"
*/
import "C"

import (
	"context"
	"encoding/json"
)

// CheckAdapter runs the adapter conformance checks (docs/checking-adapters.md), as
// `fabric adapters check` does: the adapter by AdapterID or Descriptor file, optionally an
// accepted Config and the groups to run (Only); ModelStub (a reply script, an empty one for
// the default) serves the config's models from the core's stub model servers so the target
// checks run, StopDeadlineSeconds is how long the adapter has to exit after stop or EOF
// (default 2). A failing check is in the report
// (Summary.Failed), not an error; bad input is a *ConfigError (`adapter_not_found`, …).
// Blocking: starts and stops several runtimes of the adapter.
func (f *Fabric) CheckAdapter(ctx context.Context, request ConformanceRequest) (*ConformanceReport, error) {
	text, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	return decoded[ConformanceReport](await(ctx, func() nativeResult { return nativeAdapterCheck(string(text)) }, nil))
}

func nativeAdapterCheck(request string) nativeResult {
	cRequest, err := cstring(request, "request")
	if err != nil {
		return errorResult(err)
	}
	defer free(cRequest)
	var out *C.char
	status := C.fabric_adapter_check(cRequest, &out)
	return finish(status, out, 0)
}
