package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// idx encodes an unsigned-byte IDX file.
func idx(shape []int, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(shape))})
	for _, s := range shape {
		_ = binary.Write(&b, binary.BigEndian, uint32(s))
	}
	b.Write(data)
	return b.Bytes()
}

func gz(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write(raw)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

func TestReadIDX(t *testing.T) {
	data := []byte{0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255}
	raw := idx([]int{2, 3, 2}, data)
	for name, file := range map[string][]byte{"raw": raw, "gzip": gz(t, raw)} {
		t.Run(name, func(t *testing.T) {
			shape, got, err := ReadIDX(bytes.NewReader(file))
			require.NoError(t, err)
			require.Equal(t, []int{2, 3, 2}, shape)
			require.Equal(t, data, got)
		})
	}

	// A dimension above 255 checks that dimensions are big-endian.
	big := make([]byte, 300)
	shape, got, err := ReadIDX(bytes.NewReader(idx([]int{300}, big)))
	require.NoError(t, err)
	require.Equal(t, []int{300}, shape)
	require.Len(t, got, 300)

	shape, got, err = ReadIDX(bytes.NewReader(idx([]int{0, 28}, nil)))
	require.NoError(t, err, "an empty file is valid")
	require.Equal(t, []int{0, 28}, shape)
	require.Empty(t, got)
}

func TestReadIDXErrors(t *testing.T) {
	good := idx([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6})
	corruptGzip := gz(t, good)
	corruptGzip[len(corruptGzip)-6] ^= 0xff // the CRC-32 in gzip's trailer
	cases := map[string]struct {
		file []byte
		msg  string
	}{
		"empty":            {nil, "header"},
		"short header":     {[]byte{0, 0, 8}, "header"},
		"bad magic":        {append([]byte{1, 0}, good[2:]...), "magic"},
		"gzip bad magic":   {gz(t, append([]byte{0, 7}, good[2:]...)), "magic"},
		"float type":       {append([]byte{0, 0, 0x0D}, good[3:]...), "float32"},
		"unknown type":     {append([]byte{0, 0, 0x42}, good[3:]...), "unknown type"},
		"zero dimensions":  {[]byte{0, 0, 8, 0}, "zero dimensions"},
		"short dimensions": {good[:9], "dimensions"},
		"truncated data":   {good[:len(good)-1], "truncated"},
		"truncated gzip":   {gz(t, good)[:20], "IDX"},
		"gzip checksum":    {corruptGzip, "checksum"},
		"trailing bytes":   {append(good, 9), "after"},
		"huge":             {idx([]int{1 << 30, 1 << 30}, nil), "implausibly large"},
		"claims too much":  {idx([]int{1 << 30}, []byte{1, 2}), "truncated"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := ReadIDX(bytes.NewReader(c.file))
			require.Error(t, err)
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

func TestLoadMNIST(t *testing.T) {
	// Three 2×2 images.
	pixels := []byte{0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8}
	images := idx([]int{3, 2, 2}, pixels)
	labels := idx([]int{3}, []byte{7, 0, 9})
	for name, zip := range map[string]bool{"raw": false, "gzip": true} {
		t.Run(name, func(t *testing.T) {
			img, lbl := images, labels
			if zip {
				img, lbl = gz(t, img), gz(t, lbl)
			}
			d, err := LoadMNIST(bytes.NewReader(img), bytes.NewReader(lbl))
			require.NoError(t, err)
			require.Equal(t, []int{1, 2, 2}, d.Shape)
			require.Equal(t, []int32{7, 0, 9}, d.Y)
			require.Len(t, d.X, 12)
			for i, p := range pixels {
				require.InDelta(t, float64(p)/255, d.X[i], 1e-7)
			}
			require.Equal(t, float32(1), d.X[1], "255 scales to exactly 1")
		})
	}

	_, err := LoadMNIST(bytes.NewReader(images), bytes.NewReader(idx([]int{2}, []byte{1, 2})))
	require.ErrorContains(t, err, "3 images but 2 labels")
	_, err = LoadMNIST(bytes.NewReader(idx([]int{12}, pixels)), bytes.NewReader(labels))
	require.ErrorContains(t, err, "rows, cols")
	_, err = LoadMNIST(bytes.NewReader(images), bytes.NewReader(images))
	require.ErrorContains(t, err, "want [N]")
	_, err = LoadMNIST(bytes.NewReader(images[:10]), bytes.NewReader(labels))
	require.ErrorContains(t, err, "images")
	_, err = LoadMNIST(bytes.NewReader(images), bytes.NewReader(labels[:9]))
	require.ErrorContains(t, err, "labels")
}

func TestReadCSV(t *testing.T) {
	const text = "0, 1.5, 2, 3, 4\n5,6,7,8.25,9\n\n-1,1e-3,2,3,0\n"
	for name, zip := range map[string]bool{"raw": false, "gzip": true} {
		t.Run(name, func(t *testing.T) {
			in := []byte(text)
			if zip {
				in = gz(t, in)
			}
			d, err := ReadCSV(bytes.NewReader(in), -1, []int{2, 2})
			require.NoError(t, err)
			require.Equal(t, []int{2, 2}, d.Shape)
			require.Equal(t, []int32{4, 9, 0}, d.Y)
			require.Equal(t, []float32{0, 1.5, 2, 3, 5, 6, 7, 8.25, -1, 1e-3, 2, 3}, d.X)
		})
	}

	d, err := ReadCSV(strings.NewReader("3,0.5,0.25\n1.0,1,2\n"), 0, nil)
	require.NoError(t, err)
	require.Equal(t, []int{2}, d.Shape, "nil shape: flat features")
	require.Equal(t, []int32{3, 1}, d.Y, "an integral float label is accepted")
	require.Equal(t, []float32{0.5, 0.25, 1, 2}, d.X)

	d, err = ReadCSV(strings.NewReader("1,7,2\n"), 1, nil)
	require.NoError(t, err)
	require.Equal(t, []int32{7}, d.Y, "a middle label column")
	require.Equal(t, []float32{1, 2}, d.X)
}

func TestReadCSVErrors(t *testing.T) {
	cases := map[string]struct {
		text  string
		label int
		shape []int
		msg   string
	}{
		"empty":            {"", -1, nil, "no rows"},
		"bad feature":      {"1,2,3\n4,x,6\n", -1, nil, `line 2, column 2: "x" is not a number`},
		"bad label":        {"1,2,3\n4,5,6.5\n", -1, nil, `line 2, column 3: label "6.5" is not an integer`},
		"text label":       {"1,2,cat\n", -1, nil, "line 1, column 3"},
		"ragged":           {"1,2,3\n\n4,5\n", -1, nil, "line 3"},
		"shape mismatch":   {"1,2,3\n", -1, []int{3}, "has 3 elements, the rows have 2 features"},
		"negative shape":   {"1,2,3\n", -1, []int{-2}, "negative dimension"},
		"label column":     {"1,2,3\n", 3, nil, "label column 3 out of range"},
		"negative label":   {"1,2,3\n", -4, nil, "label column -4 out of range"},
		"quote":            {"1,\"2,3\n", -1, nil, "line 1"},
		"header":           {"a,b,label\n1,2,3\n", -1, nil, "line 1"},
		"gzip not gzipped": {"\x1f\x8bnot gzip", -1, nil, "gzip"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(c.text), c.label, c.shape)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

func TestReadCSVDigits(t *testing.T) {
	// The committed digits file: 1,797 samples of 64 pixels in 0…16.
	f, err := openDigits()
	require.NoError(t, err)
	defer f.Close()
	d, err := ReadCSV(f, -1, []int{1, 8, 8})
	require.NoError(t, err)
	require.Equal(t, 1797, d.Len())
	require.Len(t, d.X, 1797*64)
	counts := make([]int, 10)
	for _, y := range d.Y {
		require.True(t, y >= 0 && y <= 9)
		counts[y]++
	}
	require.Equal(t, []int{178, 182, 177, 183, 181, 182, 181, 179, 174, 180}, counts)
	for _, v := range d.X {
		require.True(t, v >= 0 && v <= 16 && v == float32(int(v)))
	}
}
