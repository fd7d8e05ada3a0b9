//go:build cgo

package wgpu

import "runtime"

// worker runs every WebGPU call of the process on one goroutine locked to
// one OS thread: WebGPU error scopes are per thread, and a single thread
// also serializes access to objects the API does not make thread-safe.
type worker struct {
	calls chan func()
}

func startWorker() *worker {
	w := &worker{calls: make(chan func(), 1024)}
	go func() {
		runtime.LockOSThread()
		for f := range w.calls {
			f()
		}
	}()
	return w
}

// run executes f on the worker and waits for it.
func (w *worker) run(f func()) {
	done := make(chan struct{})
	w.calls <- func() {
		defer close(done)
		f()
	}
	<-done
}

// post queues f on the worker without waiting. Work posted and run from
// one goroutine executes in the order it was issued.
func (w *worker) post(f func()) { w.calls <- f }

var theWorker = startWorker()
