// Package recoverytest holds the end-to-end test of device-loss recovery:
// a training loop on WebGPU loses its device mid-step, notices, restores
// its model and optimizer from the last checkpoint onto the recovered
// device and finishes exactly where an uninterrupted run does. It is a
// package of its own because the test loses the process's shared WebGPU
// device, which no other package's tests should have to survive.
package recoverytest
