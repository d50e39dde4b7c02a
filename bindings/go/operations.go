package fabric

import (
	"os"
	"sync"
	"syscall"
)

// The process's completion queue: Run, StartRuntime, Invoke and Stop begin non-blocking
// operations that report to it, and one goroutine waits for the queue's descriptor through
// Go's network poller (a parked goroutine, no OS thread) and hands each finished outcome to
// the goroutine that awaits it. A blocked cgo call, by contrast, holds an OS thread for the
// whole run (start, turn, stop: seconds), and the blocking invoke polls for a fast answer
// for up to 200 µs, which costs a loaded machine more than it saves (docs/go.md,
// "Concurrency").
type opQueue struct {
	handle  uint64
	file    *os.File
	mu      sync.Mutex
	waiting map[uint64]chan nativeResult
}

var (
	queueOnce sync.Once
	theQueue  *opQueue
)

// completionQueue is the process's queue, made on first use; nil when it cannot be made
// (the caller then runs the blocking call in a goroutine).
func completionQueue() *opQueue {
	queueOnce.Do(func() {
		handle, fd, err := nativeQueueNew()
		if err != nil {
			return
		}
		// A copy of the core's descriptor (the core keeps and closes its own); non-blocking
		// like the original, so os.NewFile registers it with the network poller.
		copyFD, err := syscall.Dup(fd)
		if err != nil {
			return
		}
		syscall.CloseOnExec(copyFD)
		q := &opQueue{handle: handle, file: os.NewFile(uintptr(copyFD), "fabric-completion-queue"), waiting: map[uint64]chan nativeResult{}}
		go q.loop()
		theQueue = q
	})
	return theQueue
}

func (q *opQueue) loop() {
	buf := make([]byte, 64)
	for {
		if _, err := q.file.Read(buf); err != nil {
			q.fail(err)
			return
		}
		q.drain()
	}
}

// drain takes every queued operation and delivers its outcome.
func (q *opQueue) drain() {
	for {
		operation, ok := nativeQueueNext(q.handle)
		if !ok {
			return
		}
		q.mu.Lock()
		done, mine := q.waiting[operation]
		delete(q.waiting, operation)
		q.mu.Unlock()
		if mine {
			done <- nativeOperationTake(operation)
		}
	}
}

// fail ends every waiting operation when the descriptor broke (it never should).
func (q *opQueue) fail(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for operation, done := range q.waiting {
		done <- errorResult(&RuntimeError{Info{ErrorInfo: ErrorInfo{Stage: StageInvoke, Code: CodeEngineUnavailable, Message: "the completion queue failed: " + err.Error()}}})
		delete(q.waiting, operation)
	}
}

// operate begins an operation with begin(queue) and returns the channel its outcome
// arrives on (buffered: nobody has to receive it). Without a queue, fallback runs in a
// goroutine instead.
func operate(begin func(queue uint64) nativeResult, fallback func() nativeResult) <-chan nativeResult {
	q := completionQueue()
	if q == nil {
		return inGoroutine(fallback)
	}
	done := make(chan nativeResult, 1)
	// Registered before the operation exists, so the queue goroutine cannot miss it; the
	// lock is held across begin, and the goroutine takes it before looking up a handle.
	q.mu.Lock()
	begun := begin(q.handle)
	if Status(begun.status) != StatusOK || begun.err != nil {
		q.mu.Unlock()
		done <- begun
		return done
	}
	q.waiting[begun.handle] = done
	q.mu.Unlock()
	return done
}
