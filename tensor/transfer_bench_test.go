package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkTransfer measures host↔device bandwidth through the public
// API: upload is FromFloat32 (then Sync, so the copy has landed), download
// is Float32s of a resident tensor, at 1 Mi and 16 Mi float32 elements.
// MB/s counts the payload bytes.
//
//	go test ./tensor -run '^$' -bench Transfer -benchtime 10x
func BenchmarkTransfer(b *testing.B) {
	forEachBenchDevice(b, func(b *testing.B, dev *Device) {
		for _, n := range []int{1 << 20, 16 << 20} {
			host := make([]float32, n)
			for i := range host {
				host[i] = float32(i % 1000)
			}
			b.Run(fmt.Sprintf("upload/%dMi", n>>20), func(b *testing.B) {
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					t := FromFloat32(dev, host, n)
					if err := dev.Sync(); err != nil {
						b.Fatal(err)
					}
					t.Release()
				}
			})
			b.Run(fmt.Sprintf("download/%dMi", n>>20), func(b *testing.B) {
				t := FromFloat32(dev, host, n)
				defer t.Release()
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					got, err := t.Float32s()
					if err != nil || got[n-1] != host[n-1] {
						b.Fatalf("read back %v (%v), want %v", got[n-1], err, host[n-1])
					}
				}
			})
		}
	})
}
