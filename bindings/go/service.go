package fabric

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"sync"
)

var _ io.Closer = (*Service)(nil)

// Service is a long-lived adapter service shared by runtimes: Fabric-owned
// (Fabric.PrepareService) or caller-owned (Fabric.AttachService). Each runtime started on
// it gets its own adapter host connected to the service. Release it after its runtimes
// stopped, then Close (Close releases first). The handle is valid only in this process.
type Service struct {
	// Info is what the core reported when the service started (or was last released).
	Info ServiceInfo

	handle    uint64
	mu        sync.Mutex
	status    ServiceStatus
	closeOnce sync.Once
}

// ID is the service id (`service-…`).
func (s *Service) ID() string { return s.Info.ServiceID }

// Handle is the service handle (service_id, service_binding, ownership, connection).
func (s *Service) Handle() ServiceHandle { return s.Info.Service }

// Status is active, releasing, released or failed.
func (s *Service) Status() ServiceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// PrepareService starts a Fabric-owned service of the configured adapter (its descriptor
// must claim capabilities.service, else *CapabilityError with code service_unsupported).
func (f *Fabric) PrepareService(ctx context.Context, config any, opts ...Option) (*Service, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	return awaitService(ctx, func() nativeResult { return nativeServicePrepare(text, o) })
}

// AttachService attaches to the caller-owned service reference names; releasing the
// result detaches Fabric without stopping the caller's deployment.
func (f *Fabric) AttachService(ctx context.Context, config any, reference ServiceReference, opts ...Option) (*Service, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(reference)
	if err != nil {
		return nil, &ConfigError{Info{ErrorInfo: ErrorInfo{Stage: StageConfig, Code: CodeInvalidServiceReference, Message: "reference cannot be encoded as JSON: " + err.Error()}}}
	}
	o := collect(opts)
	return awaitService(ctx, func() nativeResult { return nativeServiceAttach(text, string(data), o) })
}

func awaitService(ctx context.Context, start func() nativeResult) (*Service, error) {
	result, err := await(ctx, start, func(late nativeResult) {
		if Status(late.status) == StatusOK && late.err == nil && late.handle != 0 {
			nativeServiceRelease(late.handle)
			nativeServiceFree(late.handle)
		}
	})
	if err != nil {
		return nil, err
	}
	info := ServiceInfo{}
	if err := decodeInto(result, &info); err != nil {
		if result.handle != 0 && Status(result.status) == StatusOK {
			nativeServiceFree(result.handle)
		}
		return nil, err
	}
	s := &Service{Info: info, handle: result.handle, status: info.Status}
	runtime.SetFinalizer(s, func(dropped *Service) { nativeServiceFree(dropped.handle) })
	return s, nil
}

// StartRuntime starts a runtime connected to this service. Its config must match the
// service's (*ConfigError service_binding_mismatch, the differing sections in
// Details["fields"]); a released service fails with *ConfigError "service must be active".
func (s *Service) StartRuntime(ctx context.Context, config any, opts ...Option) (*Runtime, error) {
	text, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	handle := s.handle
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	started, err := awaitRuntime(ctx, inGoroutine(func() nativeResult { return nativeServiceStart(handle, text, o) }))
	runtime.KeepAlive(s)
	return started, err
}

// Release stops a Fabric-owned service or detaches from a caller-owned one. While a
// connected runtime still runs it returns a *RuntimeError with code CodeServiceInUse (stage
// stop; Details["fields"] lists the runtime ids) and the service stays active. Idempotent
// after success.
func (s *Service) Release(ctx context.Context) (*ServiceInfo, error) {
	s.mu.Lock()
	if s.status == ServiceStatusReleased || s.status == ServiceStatusFailed {
		info := s.Info
		s.mu.Unlock()
		return &info, nil
	}
	s.mu.Unlock()
	handle := s.handle
	result, err := await(ctx, func() nativeResult { return nativeServiceRelease(handle) }, nil)
	runtime.KeepAlive(s)
	if err != nil {
		return nil, err
	}
	info := ServiceInfo{}
	if err := decodeInto(result, &info); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.Info = info
	s.status = info.Status
	s.mu.Unlock()
	return &info, nil
}

// Close releases the service (waiting for it) and frees its handle. Idempotent.
func (s *Service) Close() error {
	_, err := s.Release(context.Background())
	s.closeOnce.Do(func() {
		runtime.SetFinalizer(s, nil)
		nativeServiceFree(s.handle)
	})
	return err
}
