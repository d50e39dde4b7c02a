package fabric

/*
#include "fabric.h"
*/
import "C"

import "time"

// Settle waits until every stop begun in this process has ended — the host's exit, its
// reap and its temporary FABRIC_HOME's removal, which Run leaves to the background once the
// host answered stop — or timeout has passed, and returns how many stops are still going.
// Live runtimes and unclaimed prewarmed hosts are not waited for.
//
// Call it right before a program exits after Run: Go's exit (os.Exit, or main returning)
// does not run the library's C atexit handler that does this wait for Python, Node and C
// programs, so without it the exiting program kills the still-exiting host
// (PR_SET_PDEATHSIG) and leaves its home to the next core's sweeper. Four seconds cover the
// default stop policy's whole escalation.
func Settle(timeout time.Duration) int {
	ms := timeout.Milliseconds()
	if ms < 0 {
		ms = 0
	}
	if ms > int64(^uint32(0)) {
		ms = int64(^uint32(0))
	}
	return int(C.fabric_settle(C.uint32_t(ms)))
}
