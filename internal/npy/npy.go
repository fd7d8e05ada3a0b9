// Package npy reads and writes NumPy's .npy format (version 1.0–3.0,
// little-endian, C order) for the element types the ONNX tools exchange:
// float32, float64, int32 and int64 in, float32 and int32 out.
package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Array is a decoded array: Float for floating-point files, Int for
// integer ones.
type Array struct {
	Shape []int
	Float []float64
	Int   []int64
	// Descr is NumPy's dtype string ("<f4", "<i8", …).
	Descr string
}

const maxElements = 1 << 30

var (
	descrRe = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	orderRe = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	shapeRe = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// Read decodes one .npy array from r.
func Read(r io.Reader) (*Array, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, errors.New("npy: not a .npy file")
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("npy: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("npy: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return nil, fmt.Errorf("npy: version %d", pre[6])
	}
	if hlen > 1<<20 {
		return nil, errors.New("npy: header too long")
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	h := string(hdr)
	d, o, s := descrRe.FindStringSubmatch(h), orderRe.FindStringSubmatch(h), shapeRe.FindStringSubmatch(h)
	if d == nil || o == nil || s == nil {
		return nil, fmt.Errorf("npy: bad header %q", h)
	}
	if o[1] == "True" {
		return nil, errors.New("npy: Fortran order is not supported")
	}
	a := &Array{Descr: d[1], Shape: []int{}}
	count := 1
	for _, f := range strings.Split(s[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || v > maxElements || v != 0 && count > maxElements/v {
			return nil, fmt.Errorf("npy: bad shape %q", s[1])
		}
		a.Shape = append(a.Shape, v)
		count *= v
	}
	size := map[string]int{"<f4": 4, "<f8": 8, "<i4": 4, "<i8": 8, "|b1": 1, "|u1": 1}[a.Descr]
	if size == 0 {
		return nil, fmt.Errorf("npy: dtype %q is not supported", a.Descr)
	}
	raw := make([]byte, count*size)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("npy: data: %w", err)
	}
	le := binary.LittleEndian
	switch a.Descr {
	case "<f4":
		a.Float = make([]float64, count)
		for k := range a.Float {
			a.Float[k] = float64(math.Float32frombits(le.Uint32(raw[4*k:])))
		}
	case "<f8":
		a.Float = make([]float64, count)
		for k := range a.Float {
			a.Float[k] = math.Float64frombits(le.Uint64(raw[8*k:]))
		}
	default:
		a.Int = make([]int64, count)
		for k := range a.Int {
			switch size {
			case 8:
				a.Int[k] = int64(le.Uint64(raw[8*k:]))
			case 4:
				a.Int[k] = int64(int32(le.Uint32(raw[4*k:])))
			default:
				a.Int[k] = int64(raw[k])
			}
		}
	}
	return a, nil
}

func header(descr string, shape []int) []byte {
	dims := make([]string, len(shape))
	for k, d := range shape {
		dims[k] = strconv.Itoa(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	pad := 64 - (10+len(h)+1)%64
	h += strings.Repeat(" ", pad%64) + "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(out, h...)
}

// WriteFloat32 writes data of the given shape as a float32 .npy array.
func WriteFloat32(w io.Writer, data []float32, shape []int) error {
	buf := header("<f4", shape)
	for _, v := range data {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	_, err := w.Write(buf)
	return err
}

// WriteInt32 writes data of the given shape as an int32 .npy array.
func WriteInt32(w io.Writer, data []int32, shape []int) error {
	buf := header("<i4", shape)
	for _, v := range data {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
	}
	_, err := w.Write(buf)
	return err
}
