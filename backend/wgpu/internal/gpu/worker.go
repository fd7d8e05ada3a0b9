//go:build cgo || (js && wasm)

package gpu

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

// Run executes f on the worker and waits for it.
func Run(f func()) { theWorker.run(f) }

// Post queues f on the worker without waiting. Work posted and run from
// one goroutine executes in the order it was issued.
func Post(f func()) { theWorker.post(f) }

func (w *worker) run(f func()) {
	done := make(chan struct{})
	w.calls <- func() {
		defer close(done)
		f()
	}
	<-done
}

func (w *worker) post(f func()) { w.calls <- f }

var theWorker = startWorker()
