package fabric

/*
#include "fabric.h"
*/
import "C"

import (
	"context"
	"io"
	"runtime"
	"sync"
)

var _ io.Closer = (*Prewarm)(nil)

// Prewarm is a pool of adapter hosts launched ahead of time by Fabric.Prewarm, each
// exactly as StartRuntime would launch it and waiting for the adapter's start. While it is
// open, Run and StartRuntime with the same config and options (no WithStreaming) take a
// waiting host and the core launches a replacement in the background; anything else starts
// cold. Close terminates the hosts still waiting.
type Prewarm struct {
	// Info is what the core reported when the pool was opened.
	Info PrewarmInfo

	handle    uint64
	closeOnce sync.Once
	final     *PrewarmInfo
	closeErr  error
}

// Prewarm launches hosts (1 to 64) adapter hosts of config ahead of time. Results,
// evidence and stats of a run that takes one are those of a cold start. Errors: *ConfigError
// (hosts out of range, Metadata["path"] == "hosts"), *CapabilityError (prewarm_unsupported:
// a non-local environment provider, WithStreaming).
func (f *Fabric) Prewarm(ctx context.Context, config any, hosts uint32, opts ...Option) (*Prewarm, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	result, err := await(ctx, func() nativeResult { return nativePrewarmStart(text, hosts, o) }, func(late nativeResult) {
		if Status(late.status) == StatusOK && late.err == nil && late.handle != 0 {
			C.fabric_prewarm_free(C.fabric_prewarm(late.handle))
		}
	})
	if err != nil {
		return nil, err
	}
	info := PrewarmInfo{}
	if err := decodeInto(result, &info); err != nil {
		if result.handle != 0 && Status(result.status) == StatusOK {
			C.fabric_prewarm_free(C.fabric_prewarm(result.handle))
		}
		return nil, err
	}
	p := &Prewarm{Info: info, handle: result.handle}
	runtime.SetFinalizer(p, func(dropped *Prewarm) { C.fabric_prewarm_free(C.fabric_prewarm(dropped.handle)) })
	return p, nil
}

// Status is the pool now: Hosts, the pids of the waiting hosts (ReadyPids), Claimed. After
// Close it is the final status.
func (p *Prewarm) Status() (*PrewarmInfo, error) {
	if p.final != nil {
		return p.final, nil
	}
	var out *C.char
	status := C.fabric_prewarm_status(C.fabric_prewarm(p.handle), &out)
	info, err := decoded[PrewarmInfo](finish(status, out, 0), nil)
	runtime.KeepAlive(p)
	return info, err
}

// Close terminates the hosts still waiting and frees the pool. Idempotent; Final returns
// the pool's last status afterwards.
func (p *Prewarm) Close() error {
	p.closeOnce.Do(func() {
		runtime.SetFinalizer(p, nil)
		var out *C.char
		status := C.fabric_prewarm_close(C.fabric_prewarm(p.handle), &out)
		p.final, p.closeErr = decoded[PrewarmInfo](finish(status, out, 0), nil)
		C.fabric_prewarm_free(C.fabric_prewarm(p.handle))
	})
	return p.closeErr
}

// Final is the status Close returned (nil before Close).
func (p *Prewarm) Final() *PrewarmInfo { return p.final }

func nativePrewarmStart(config string, hosts uint32, o options) nativeResult {
	return callHandle(func(c, b *C.char, h *C.uint64_t, out **C.char) C.int32_t {
		return C.fabric_prewarm_start(c, b, C.uint32_t(hosts), (*C.fabric_prewarm)(h), out)
	}, config, o)
}
