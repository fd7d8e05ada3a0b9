package hal

// Flusher is the optional capability of an asynchronous device that holds
// recorded work back (in a batch, or a pending fused group) until
// something needs its results: Flush hands all of it to the device's queue
// now and returns without waiting for it to run. A caller that keeps the
// device busy while it goes on issuing work (bench's result ring) calls it
// before it frees results whose stores must happen; a buffer freed after
// Flush is written by the work already submitted, never skipped.
//
// A synchronous device (the CPU backend) runs each kernel when it is
// called, so it has nothing to flush and does not implement Flusher.
type Flusher interface {
	// Flush submits the work recorded so far without waiting for it.
	// Failures of that work surface at the next Sync or Read, as always;
	// Flush fails only when the device cannot take work (closed or lost).
	Flush() error
}
