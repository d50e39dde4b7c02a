package fabric

/*
#cgo pkg-config: fabric
#include <stdlib.h>
#include "fabric.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"sync"
)

// Batch is a data set of items running through one config on the core's batch engine
// (fabric_batch_*): concurrency, retries, per-item timeouts, resume and the summary are the
// core's. Range over Lines for the finished items in completion order, then call Wait:
//
//	b, err := f.Batch(ctx, config, items, fabric.BatchSettings{Concurrency: &eight})
//	for done := range b.Lines() {
//		fmt.Println(done.ID, done.Attempts, done.Result != nil)
//	}
//	summary, err := b.Wait()
//
// Items are read from the channel as the core frees a slot (back-pressure). Cancelling ctx
// stops the batch at once; Cancel stops taking items (a second call stops in-flight ones).
type Batch struct {
	handle  uint64
	lines   chan BatchLine
	done    chan struct{}
	summary *BatchSummary
	mu      sync.Mutex
	err     error // guarded by mu: the feeder and the drain both set it
	freed   sync.Once
}

// fail records the first error of the batch.
func (b *Batch) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
}

// Batch starts a batch of config over items (each a RunRequest, a map, or any other JSON
// value used as the input; a map may be {"id": ..., "requests": [...]}). Close items when
// there are no more.
func (f *Fabric) Batch(ctx context.Context, config any, items <-chan any, settings BatchSettings) (*Batch, error) {
	configText, err := configJSON(config)
	if err != nil {
		return nil, err
	}
	settingsText, err := json.Marshal(settings)
	if err != nil {
		return nil, err
	}
	started := nativeBatchStart(configText, string(settingsText))
	if _, err := started.decode(); err != nil {
		return nil, err
	}
	handle := started.handle
	b := &Batch{handle: handle, lines: make(chan BatchLine), done: make(chan struct{})}
	go b.feed(ctx, items)
	go b.drain()
	go func() {
		select {
		case <-ctx.Done():
			b.Cancel()
			b.Cancel()
		case <-b.done:
		}
	}()
	return b, nil
}

// Lines yields every finished item, in completion order; it is closed when the batch ended.
func (b *Batch) Lines() <-chan BatchLine { return b.lines }

// Cancel: the first call stops taking items (in-flight ones get grace_seconds), the second
// stops them now.
func (b *Batch) Cancel() {
	select {
	case <-b.done:
	default:
		C.fabric_batch_cancel(C.fabric_batch(b.handle))
	}
}

// Wait returns the summary once Lines is drained; an invalid item (malformed, duplicate id)
// is a ConfigError naming its line.
func (b *Batch) Wait() (*BatchSummary, error) {
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.summary, b.err
}

func (b *Batch) feed(ctx context.Context, items <-chan any) {
	defer C.fabric_batch_close(C.fabric_batch(b.handle))
	for {
		var item any
		var open bool
		select {
		case item, open = <-items:
		case <-ctx.Done():
			return
		case <-b.done:
			return
		}
		if !open {
			return
		}
		text, err := json.Marshal(item)
		if err != nil {
			b.fail(err)
			b.Cancel()
			b.Cancel()
			return
		}
		if Status(nativeBatchPush(b.handle, string(text)).status) == StatusEnd {
			return
		}
	}
}

func (b *Batch) drain() {
	defer func() {
		close(b.lines)
		b.freed.Do(func() { C.fabric_batch_free(C.fabric_batch(b.handle)) })
		close(b.done)
	}()
	for {
		result := nativeBatchPull(b.handle, false)
		if Status(result.status) == StatusEnd {
			break
		}
		if Status(result.status) != StatusOK {
			continue
		}
		// Every line that was ready, in one array: a burst costs one cgo call.
		// A line that does not decode is reported by Wait, never dropped silently.
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(result.text), &raw); err != nil {
			b.fail(err)
			continue
		}
		for _, text := range raw {
			var line BatchLine
			if err := json.Unmarshal(text, &line); err != nil {
				b.fail(err)
				continue
			}
			b.lines <- line
		}
	}
	result := nativeBatchPull(b.handle, true)
	summary := &BatchSummary{}
	if err := decodeInto(result, summary); err != nil {
		b.fail(err)
		return
	}
	b.summary = summary
	if summary.InputError != nil {
		text, _ := json.Marshal(summary.InputError)
		b.fail(errorFromNative(nativeResult{status: int32(StatusConfig), text: string(text), has: true}))
	}
}

func nativeBatchStart(config, settings string) nativeResult {
	cConfig, err := cstring(config, "config")
	if err != nil {
		return errorResult(err)
	}
	defer free(cConfig)
	cSettings, err := cstring(settings, "batch settings")
	if err != nil {
		return errorResult(err)
	}
	defer free(cSettings)
	var handle C.fabric_batch
	var out *C.char
	status := C.fabric_batch_start(cConfig, cSettings, &handle, &out)
	return finish(status, out, uint64(handle))
}

// nativeBatchPush queues one item, waiting while the queue is full.
func nativeBatchPush(batch uint64, item string) nativeResult {
	cItem, err := cstring(item, "item")
	if err != nil {
		return errorResult(err)
	}
	defer free(cItem)
	var out *C.char
	status := C.fabric_batch_push(C.fabric_batch(batch), cItem, -1, &out)
	return finish(status, out, 0)
}

// nativeBatchPull waits for the next lines (every finished one ready, as a JSON array) or,
// with summary, for the summary.
func nativeBatchPull(batch uint64, summary bool) nativeResult {
	var out *C.char
	var status C.int32_t
	if summary {
		status = C.fabric_batch_summary(C.fabric_batch(batch), -1, &out)
	} else {
		status = C.fabric_batch_next_lines(C.fabric_batch(batch), -1, 0, &out)
	}
	return finish(status, out, 0)
}
