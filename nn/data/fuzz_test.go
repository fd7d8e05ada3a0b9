package data

import (
	"bytes"
	"compress/gzip"
	"slices"
	"testing"
)

// FuzzReadIDX checks that no input makes ReadIDX (or LoadMNIST, which
// pairs two of them) panic or allocate beyond what the input holds, and
// that what ReadIDX accepts is exactly one well-formed file: re-encoding
// its shape and bytes gives the input back (for raw input) and reads
// back the same. The seeds run with every `go test`; `make fuzz` explores.
func FuzzReadIDX(f *testing.F) {
	f.Add(idx([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6}), uint8(0))
	f.Add(idx([]int{0, 28}, nil), uint8(0))
	f.Add(idx([]int{1 << 30}, []byte{1, 2}), uint8(0))
	f.Add(idx([]int{65536, 65536, 65536}, nil), uint8(0))
	f.Add(gzipped(idx([]int{1, 2, 2}, []byte{9, 8, 7, 6})), uint8(0))
	f.Add([]byte{0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0}, uint8(0))
	f.Add([]byte{0x1f, 0x8b, 0, 0}, uint8(1))
	f.Add(append(idx([]int{2, 1, 1}, []byte{3, 4}), idx([]int{2}, []byte{0, 9})...), uint8(12))
	f.Fuzz(func(t *testing.T, file []byte, split uint8) {
		shape, data, err := ReadIDX(bytes.NewReader(file))
		if err == nil {
			n := 1
			for _, d := range shape {
				n *= d
			}
			if len(data) != n {
				t.Fatalf("shape %v but %d bytes", shape, len(data))
			}
			enc := idx(shape, data)
			if !(len(file) >= 2 && file[0] == 0x1f && file[1] == 0x8b) && !bytes.Equal(enc, file) {
				t.Fatalf("accepted % x, which is not the file of shape %v", file, shape)
			}
			s2, d2, err := ReadIDX(bytes.NewReader(enc))
			if err != nil || !slices.Equal(s2, shape) || !bytes.Equal(d2, data) {
				t.Fatalf("re-encoded file reads back as %v %v, %v", s2, d2, err)
			}
		} else if shape != nil || data != nil {
			t.Fatalf("error %v with a result", err)
		}

		// The same bytes as an images file and a labels file.
		cut := min(int(split), len(file))
		d, err := LoadMNIST(bytes.NewReader(file[:cut]), bytes.NewReader(file[cut:]))
		if err != nil {
			return
		}
		if len(d.Shape) != 3 || d.Shape[0] != 1 || len(d.X) != len(d.Y)*d.Shape[1]*d.Shape[2] {
			t.Fatalf("LoadMNIST gave shape %v with %d pixels and %d labels", d.Shape, len(d.X), len(d.Y))
		}
		for _, v := range d.X {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("pixel %v outside [0, 1]", v)
			}
		}
	})
}

// gzipped compresses raw for a seed (gz needs a *testing.T).
func gzipped(raw []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write(raw)
	_ = w.Close()
	return b.Bytes()
}
