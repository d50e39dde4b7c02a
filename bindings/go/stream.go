package fabric

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"sync"
)

var _ io.Closer = (*OpenAIStream)(nil)

// OpenAIStream is the native OpenAI chunks of one invocation, pulled from the core
// (fabric_stream_*), with the separate, authoritative RunResult from Result.
//
// Next returns the chunks in order and io.EOF at the end. Every ready chunk is taken in one
// native call on the calling goroutine; only an empty queue waits, on another goroutine, so
// ctx and Close can interrupt it. The runtime takes no other turn until the stream is read
// to its end, its result was taken, or it was closed. Close — and a ctx that is done while
// Next waits — drops unread chunks and waits for the invocation without cancelling it;
// Result stays available afterwards. Safe for concurrent use (Next calls are serialized).
type OpenAIStream struct {
	// Info is what the core reported: kind, runtime, invocation and request ids.
	Info StreamInfo

	handle  uint64
	runtime *Runtime

	pull sync.Mutex // serializes Next

	mu      sync.Mutex
	batch   []Chunk
	raw     bool // items are ATOF records (InvokeStream), kept in records
	records []AtofRecord
	pos     int
	ended   bool  // no more chunks will be returned
	closed  bool  // Close began
	err     error // what Next returns once ended (io.EOF or the stream's error)

	closeOnce sync.Once
	closeDone chan struct{}

	resultOnce sync.Once
	resultDone chan struct{}
	result     *RunResult
	resultErr  error

	freeOnce sync.Once
}

// InvokeOpenAIStream starts one turn that streams native OpenAI chat.completion.chunk
// objects; it returns once the invocation was sent to the adapter.
//
// Errors: *CapabilityError (openai_streaming_unavailable: the adapter does not claim
// streaming; the runtime is untouched), *StateError (runtime_busy while another turn or
// stream is active, runtime_stopped), *ConfigError (invalid request), *RuntimeError, or
// ctx.Err() — a stream that starts after ctx was done is closed and freed (its turn runs
// to its end).
func (r *Runtime) InvokeOpenAIStream(ctx context.Context, request RunRequest) (*OpenAIStream, error) {
	return r.openStream(ctx, request, false)
}

// openStream starts a pull stream: native OpenAI chunks, or (raw) Relay ATOF records.
func (r *Runtime) openStream(ctx context.Context, request RunRequest, raw bool) (*OpenAIStream, error) {
	req, err := requestJSON(request)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closedLocked() || r.stopStarted {
		r.mu.Unlock()
		return nil, &StateError{Info{ErrorInfo: ErrorInfo{Stage: StageInvoke, Code: CodeRuntimeStopped, Message: "cannot invoke a stopped runtime"}}}
	}
	orphan := r.orphan
	r.mu.Unlock()
	if orphan != nil {
		select {
		case <-orphan:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	invoke := nativeInvokeOpenAIStream
	if raw {
		invoke = nativeInvokeStream
	}
	result, err := await(ctx, func() nativeResult { return invoke(r.handle, req) }, func(late nativeResult) {
		if Status(late.status) == StatusOK && late.err == nil && late.handle != 0 {
			nativeStreamFree(late.handle) // closes first: waits for the turn, never cancels it
		}
	})
	runtime.KeepAlive(r)
	if err != nil {
		return nil, err
	}
	info := StreamInfo{}
	if err := decodeInto(result, &info); err != nil {
		r.absorb(result)
		if result.handle != 0 && Status(result.status) == StatusOK {
			nativeStreamFree(result.handle)
		}
		return nil, err
	}
	s := &OpenAIStream{
		Info:       info,
		handle:     result.handle,
		runtime:    r,
		raw:        raw,
		closeDone:  make(chan struct{}),
		resultDone: make(chan struct{}),
	}
	runtime.SetFinalizer(s, func(dropped *OpenAIStream) {
		// A free of an open stream closes it first, which waits for the turn.
		go nativeStreamFree(dropped.handle)
	})
	r.mu.Lock()
	r.streams[s] = struct{}{}
	r.mu.Unlock()
	return s, nil
}

// Next returns the next chunk, io.EOF after the last one (and after Close), or the error
// that ended the stream: a *RuntimeError with code openai_stream_protocol_error when the
// adapter broke the transport (the runtime is then failed). When ctx is done while Next
// waits, the stream is closed in the background (the turn is not cancelled; the next
// Invoke waits for it) and Next returns ctx.Err().
func (s *OpenAIStream) Next(ctx context.Context) (Chunk, error) {
	var chunk Chunk
	err := s.advance(ctx, func() { chunk = s.batch[s.pos] })
	return chunk, err
}

// advance makes the next item available and hands it to take (under the lock), or
// returns the stream's end or error.
func (s *OpenAIStream) advance(ctx context.Context, take func()) error {
	s.pull.Lock()
	defer s.pull.Unlock()
	for {
		s.mu.Lock()
		ready := len(s.batch)
		if s.raw {
			ready = len(s.records)
		}
		if s.pos < ready && !s.closed {
			take()
			s.pos++
			s.mu.Unlock()
			return nil
		}
		if s.ended || s.closed {
			err := s.err
			s.mu.Unlock()
			if err == nil {
				err = io.EOF
			}
			return err
		}
		s.mu.Unlock()
		if err := ctx.Err(); err != nil {
			s.closeInBackground()
			return err
		}
		result := nativeStreamNextBatch(s.handle, 0)
		if result.err == nil && Status(result.status) == StatusTimeout {
			done := make(chan nativeResult, 1)
			go func() { done <- nativeStreamNextBatch(s.handle, -1) }()
			select {
			case result = <-done:
			case <-ctx.Done():
				s.closeInBackground() // wakes the waiting goroutine with END
				return ctx.Err()
			}
		}
		runtime.KeepAlive(s)
		s.absorb(result)
	}
}

// absorb folds one pull into the stream's state.
func (s *OpenAIStream) absorb(result nativeResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	switch {
	case result.err == nil && Status(result.status) == StatusOK && s.raw:
		var records []AtofRecord
		if err := json.Unmarshal([]byte(result.text), &records); err != nil {
			s.ended = true
			s.err = &RuntimeError{Info{ErrorInfo: ErrorInfo{Stage: StageInvoke, Code: CodeInvalidNativeJSON, Message: "library returned JSON this package cannot decode: " + err.Error()}}}
			return
		}
		s.records, s.pos = records, 0
	case result.err == nil && Status(result.status) == StatusOK:
		var batch []Chunk
		if err := json.Unmarshal([]byte(result.text), &batch); err != nil {
			s.ended = true
			s.err = &RuntimeError{Info{ErrorInfo: ErrorInfo{Stage: StageInvoke, Code: CodeInvalidNativeJSON, Message: "library returned JSON this package cannot decode: " + err.Error()}}}
			return
		}
		s.batch, s.pos = batch, 0
	case result.err == nil && Status(result.status) == StatusEnd:
		s.ended = true
	case result.err == nil && Status(result.status) == StatusTimeout:
	default:
		s.ended = true
		_, s.err = result.decode()
		s.runtime.absorb(result)
	}
}

// Close drops unread chunks and waits for the invocation without cancelling it; the
// runtime takes turns again when it returns. A Next waiting on another goroutine returns
// io.EOF. Idempotent; Result stays available.
func (s *OpenAIStream) Close() error {
	s.startClose()
	<-s.closeDone
	return nil
}

func (s *OpenAIStream) startClose() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.batch, s.records, s.pos = nil, nil, 0
		s.mu.Unlock()
		r := s.runtime
		r.mu.Lock()
		r.orphan = s.closeDone
		r.mu.Unlock()
		go func() {
			nativeStreamClose(s.handle)
			runtime.KeepAlive(s)
			close(s.closeDone)
		}()
	})
}

func (s *OpenAIStream) closeInBackground() { s.startClose() }

// Result drops unread chunks, waits for the invocation and returns its RunResult (the
// same on every call). A failed harness turn is a result with Status "failed". Errors: a
// *RuntimeError (openai_stream_protocol_error, or the invocation's own error such as
// lifecycle_openai_stream_unsupported, host_crashed, timeout), or ctx.Err() — the result
// is then still collected in the background.
func (s *OpenAIStream) Result(ctx context.Context) (*RunResult, error) {
	s.resultOnce.Do(func() {
		s.mu.Lock()
		s.ended = true
		s.batch, s.records, s.pos = nil, nil, 0
		s.mu.Unlock()
		go func() {
			defer close(s.resultDone)
			result := nativeStreamResult(s.handle)
			out := &RunResult{}
			if err := decodeInto(result, out); err != nil {
				s.runtime.absorb(result)
				s.resultErr = err
			} else {
				s.result = out
			}
			// The result is kept: the handle is no longer needed.
			s.free()
		}()
	})
	select {
	case <-s.resultDone:
		return s.result, s.resultErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// free releases the handle once (the stream is finished: its result was taken).
func (s *OpenAIStream) free() {
	s.freeOnce.Do(func() {
		runtime.SetFinalizer(s, nil)
		nativeStreamFree(s.handle)
		r := s.runtime
		r.mu.Lock()
		delete(r.streams, s)
		r.mu.Unlock()
	})
}

// finishForStop closes the stream (waiting for its turn) and frees its handle; Stop calls
// it. A Result in flight keeps the native stream alive until it returns.
func (s *OpenAIStream) finishForStop() {
	_ = s.Close()
	s.free()
}

// SupportsOpenAIStreaming reports whether the selected adapter implements native OpenAI
// streaming (the plan's capabilities.streaming and the descriptor's claim): what
// InvokeOpenAIStream needs.
func (r *Runtime) SupportsOpenAIStreaming() bool { return r.Info.SupportsOpenaiStreaming }

// AtofRecord is one raw NeMo Relay ATOF record, as the adapter's Relay published it.
type AtofRecord map[string]any

// InvokeStream is the raw NeMo Relay ATOF records of one invocation (Runtime.InvokeStream),
// pulled from the core like an OpenAIStream, with the separate, authoritative RunResult
// from Result. The stream ends (io.EOF) once the adapter host answered and the records
// routed to the invocation's request id were delivered. Close and a done ctx behave as for
// OpenAIStream: unread records are dropped, the turn is never cancelled.
type InvokeStream struct {
	// Info is what the core reported: kind "relay.atof.record", runtime, invocation and
	// request ids.
	Info StreamInfo

	s *OpenAIStream
}

// InvokeStream starts one turn that streams the raw NeMo Relay ATOF records it publishes;
// it returns once the invocation was sent to the adapter. The runtime must have been
// started WithStreaming (and Relay telemetry).
//
// Errors: *CapabilityError (streaming_unavailable: not started with streaming; the runtime
// is untouched), *StateError (runtime_busy, runtime_stopped), *ConfigError (invalid
// request), *RuntimeError (collector_request_failed: the collector refused the request id),
// or ctx.Err().
func (r *Runtime) InvokeStream(ctx context.Context, request RunRequest) (*InvokeStream, error) {
	s, err := r.openStream(ctx, request, true)
	if err != nil {
		return nil, err
	}
	return &InvokeStream{Info: s.Info, s: s}, nil
}

// Next returns the next record, io.EOF after the last one (and after Close), or the error
// that ended the stream.
func (i *InvokeStream) Next(ctx context.Context) (AtofRecord, error) {
	var record AtofRecord
	err := i.s.advance(ctx, func() { record = i.s.records[i.s.pos] })
	return record, err
}

// Close drops unread records and waits for the invocation without cancelling it.
func (i *InvokeStream) Close() error { return i.s.Close() }

// Result drops unread records, waits for the invocation and returns its RunResult.
func (i *InvokeStream) Result(ctx context.Context) (*RunResult, error) { return i.s.Result(ctx) }

// SupportsStreaming reports whether InvokeStream (raw NeMo Relay ATOF records) is
// available: the runtime was started WithStreaming and Relay telemetry.
func (r *Runtime) SupportsStreaming() bool { return r.Info.SupportsStreaming }
