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

	mu     sync.Mutex
	batch  []Chunk
	pos    int
	ended  bool  // no more chunks will be returned
	closed bool  // Close began
	err    error // what Next returns once ended (io.EOF or the stream's error)

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
	req, err := requestJSON(request)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closedLocked() || r.stopStarted {
		r.mu.Unlock()
		return nil, &StateError{Info{ErrorInfo: ErrorInfo{Stage: StageInvoke, Code: "runtime_stopped", Message: "cannot invoke a stopped runtime"}}}
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
	result, err := await(ctx, func() nativeResult { return nativeInvokeOpenAIStream(r.handle, req) }, func(late nativeResult) {
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
	s.pull.Lock()
	defer s.pull.Unlock()
	for {
		s.mu.Lock()
		if s.pos < len(s.batch) && !s.closed {
			chunk := s.batch[s.pos]
			s.pos++
			s.mu.Unlock()
			return chunk, nil
		}
		if s.ended || s.closed {
			err := s.err
			s.mu.Unlock()
			if err == nil {
				err = io.EOF
			}
			return Chunk{}, err
		}
		s.mu.Unlock()
		if err := ctx.Err(); err != nil {
			s.closeInBackground()
			return Chunk{}, err
		}
		result := nativeStreamNextBatch(s.handle, 0)
		if result.err == nil && Status(result.status) == StatusTimeout {
			done := make(chan nativeResult, 1)
			go func() { done <- nativeStreamNextBatch(s.handle, -1) }()
			select {
			case result = <-done:
			case <-ctx.Done():
				s.closeInBackground() // wakes the waiting goroutine with END
				return Chunk{}, ctx.Err()
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
	case result.err == nil && Status(result.status) == StatusOK:
		var batch []Chunk
		if err := json.Unmarshal([]byte(result.text), &batch); err != nil {
			s.ended = true
			s.err = &RuntimeError{Info{ErrorInfo: ErrorInfo{Stage: StageInvoke, Code: "invalid_native_json", Message: "library returned JSON this package cannot decode: " + err.Error()}}}
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
		s.batch, s.pos = nil, 0
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
		s.batch, s.pos = nil, 0
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
