package cpu

// cpuPause executes the PAUSE instruction n times (pause_amd64.s). A wait
// loop that polls memory runs one between polls: the core stops issuing
// speculative loads of the polled line (which would otherwise flush the
// pipeline when another core writes it), draws less power and leaves its
// sibling hyperthread the execution units. It touches no memory and no
// runtime state, unlike runtime.Gosched.
//
//go:noescape
func cpuPause(n int)
