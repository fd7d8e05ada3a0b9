//go:build cgo

package wgpu

// LimitEpilogueWords makes epilogues with more than n words render them as
// literals until the returned function runs, so that tests reach that
// fallback with short chains. Not for concurrent tests.
func LimitEpilogueWords(n int) (restore func()) {
	old := epilogueUniformWords
	epilogueUniformWords = n
	return func() { epilogueUniformWords = old }
}
