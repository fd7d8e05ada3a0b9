package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	data := []float32{1.5, -2, 3.25, 0, 7, -0.125}
	if err := WriteFloat32(&b, data, []int{2, 3}); err != nil {
		t.Fatal(err)
	}
	if b.Len()%64 != len(data)*4%64 {
		t.Errorf("header not padded to 64 bytes: file of %d bytes", b.Len())
	}
	a, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Descr != "<f4" || len(a.Shape) != 2 || a.Shape[0] != 2 || a.Shape[1] != 3 {
		t.Fatalf("descr %q shape %v", a.Descr, a.Shape)
	}
	for k, v := range data {
		if a.Float[k] != float64(v) {
			t.Fatalf("element %d: %v, want %v", k, a.Float[k], v)
		}
	}
	b.Reset()
	if err := WriteInt32(&b, []int32{-3, 9}, []int{2}); err != nil {
		t.Fatal(err)
	}
	if a, err = Read(&b); err != nil || a.Int[0] != -3 || a.Int[1] != 9 || len(a.Shape) != 1 {
		t.Fatalf("int32 round trip: %+v, %v", a, err)
	}
}

// A file NumPy wrote (int64 token ids of the ONNX transformer test).
func TestReadsNumPyInt64(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "onnx", "transformer.input.npy"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if a.Descr != "<i8" || len(a.Int) != 36 || a.Shape[0] != 3 || a.Shape[1] != 12 {
		t.Fatalf("descr %q shape %v, %d values", a.Descr, a.Shape, len(a.Int))
	}
	for _, v := range a.Int {
		if v < 0 || v >= 50 {
			t.Fatalf("token %d outside the vocabulary [0, 50)", v)
		}
	}
}

func TestBadFiles(t *testing.T) {
	var b bytes.Buffer
	_ = WriteFloat32(&b, []float32{1, 2, 3}, []int{3})
	good := b.Bytes()
	for _, bad := range [][]byte{nil, []byte("hello world"), good[:20], good[:len(good)-1],
		bytes.Replace(good, []byte("(3,)"), []byte("(9999999999,)"), 1),
		bytes.Replace(good, []byte("<f4"), []byte("<c8"), 1)} {
		if _, err := Read(bytes.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
