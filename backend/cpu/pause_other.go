//go:build !amd64

package cpu

// cpuPause is a no-op off amd64: the wait loops in workers.go then poll
// back to back, and their clock checks still bound how long they spin.
func cpuPause(n int) {}
