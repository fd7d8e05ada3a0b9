package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/x448/float16"
)

// elemSize is the width in bytes of an element type in raw_data.
func elemSize(t onnxpb.TensorProto_DataType) int {
	switch t {
	case onnxpb.TensorProto_DOUBLE, onnxpb.TensorProto_INT64, onnxpb.TensorProto_UINT64:
		return 8
	case onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_INT32, onnxpb.TensorProto_UINT32:
		return 4
	case onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16, onnxpb.TensorProto_INT16, onnxpb.TensorProto_UINT16:
		return 2
	case onnxpb.TensorProto_INT8, onnxpb.TensorProto_UINT8, onnxpb.TensorProto_BOOL:
		return 1
	}
	return 0
}

// decodeTensor turns a TensorProto into a host tensor, reading external
// data from dir (confined to it); dir "" rejects external data.
func decodeTensor(tp *onnxpb.TensorProto, dir string) (*hostTensor, error) {
	elem := onnxpb.TensorProto_DataType(tp.GetDataType())
	size := elemSize(elem)
	if size == 0 {
		return nil, fmt.Errorf("tensor %q: element type %v is not supported", tp.GetName(), elem)
	}
	shape := make([]int, len(tp.GetDims()))
	for k, d := range tp.GetDims() {
		if d < 0 || d > maxHostElements {
			return nil, fmt.Errorf("tensor %q: bad dimension %d", tp.GetName(), d)
		}
		shape[k] = int(d)
	}
	n, err := elemCount(shape)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", tp.GetName(), err)
	}
	raw := tp.GetRawData()
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		if raw, err = readExternal(tp, dir, n*size); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", tp.GetName(), err)
		}
	}
	// The sizes are checked against the data present before anything is
	// allocated, so a hostile shape costs nothing.
	useRaw := raw != nil || n == 0 && typedLen(tp, elem) == 0
	if useRaw && len(raw) != n*size {
		return nil, fmt.Errorf("tensor %q: %d bytes of data for shape %v of %v (want %d)", tp.GetName(), len(raw), shape, elem, n*size)
	}
	if got := typedLen(tp, elem); !useRaw && got != n {
		return nil, fmt.Errorf("tensor %q: %d values for shape %v (want %d)", tp.GetName(), got, shape, n)
	}
	h := &hostTensor{elem: elem, shape: shape}
	if isFloatType(elem) {
		h.f = make([]float64, n)
	} else {
		h.i = make([]int64, n)
	}
	if useRaw {
		decodeRaw(h, raw, size)
		return h, nil
	}
	switch elem {
	case onnxpb.TensorProto_FLOAT:
		for k, v := range tp.GetFloatData() {
			h.f[k] = float64(v)
		}
	case onnxpb.TensorProto_DOUBLE:
		copy(h.f, tp.GetDoubleData())
	case onnxpb.TensorProto_FLOAT16:
		for k, v := range tp.GetInt32Data() {
			h.f[k] = float64(float16.Frombits(uint16(v)).Float32())
		}
	case onnxpb.TensorProto_BFLOAT16:
		for k, v := range tp.GetInt32Data() {
			h.f[k] = float64(math.Float32frombits(uint32(v) << 16))
		}
	case onnxpb.TensorProto_INT64:
		copy(h.i, tp.GetInt64Data())
	case onnxpb.TensorProto_UINT32, onnxpb.TensorProto_UINT64:
		for k, v := range tp.GetUint64Data() {
			h.i[k] = int64(v)
		}
	default:
		for k, v := range tp.GetInt32Data() {
			h.i[k] = int64(v)
		}
	}
	return h, nil
}

// typedLen is the number of values in the typed field elem uses.
func typedLen(tp *onnxpb.TensorProto, elem onnxpb.TensorProto_DataType) int {
	switch elem {
	case onnxpb.TensorProto_FLOAT:
		return len(tp.GetFloatData())
	case onnxpb.TensorProto_DOUBLE:
		return len(tp.GetDoubleData())
	case onnxpb.TensorProto_INT64:
		return len(tp.GetInt64Data())
	case onnxpb.TensorProto_UINT32, onnxpb.TensorProto_UINT64:
		return len(tp.GetUint64Data())
	}
	return len(tp.GetInt32Data())
}

func decodeRaw(h *hostTensor, raw []byte, size int) {
	le := binary.LittleEndian
	for k := range h.len() {
		b := raw[k*size : (k+1)*size]
		switch h.elem {
		case onnxpb.TensorProto_FLOAT:
			h.f[k] = float64(math.Float32frombits(le.Uint32(b)))
		case onnxpb.TensorProto_DOUBLE:
			h.f[k] = math.Float64frombits(le.Uint64(b))
		case onnxpb.TensorProto_FLOAT16:
			h.f[k] = float64(float16.Frombits(le.Uint16(b)).Float32())
		case onnxpb.TensorProto_BFLOAT16:
			h.f[k] = float64(math.Float32frombits(uint32(le.Uint16(b)) << 16))
		case onnxpb.TensorProto_INT64, onnxpb.TensorProto_UINT64:
			h.i[k] = int64(le.Uint64(b))
		case onnxpb.TensorProto_INT32:
			h.i[k] = int64(int32(le.Uint32(b)))
		case onnxpb.TensorProto_UINT32:
			h.i[k] = int64(le.Uint32(b))
		case onnxpb.TensorProto_INT16:
			h.i[k] = int64(int16(le.Uint16(b)))
		case onnxpb.TensorProto_UINT16:
			h.i[k] = int64(le.Uint16(b))
		case onnxpb.TensorProto_INT8:
			h.i[k] = int64(int8(b[0]))
		default: // UINT8, BOOL
			h.i[k] = int64(b[0])
		}
	}
}

// ErrExternalPath is returned for an external-data location that is
// absolute, climbs out of the model's folder, or resolves outside it
// through a symbolic link.
var ErrExternalPath = errors.New("onnx: external data path escapes the model's folder")

// readExternal reads want bytes of tp's external data from dir. Paths go
// through os.Root, which refuses any path (".." or a symbolic link) that
// leaves dir.
func readExternal(tp *onnxpb.TensorProto, dir string, want int) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("external data needs the model's folder: load the model with LoadFile or Options.Dir")
	}
	var location string
	offset, length := int64(0), int64(-1)
	for _, kv := range tp.GetExternalData() {
		var err error
		switch kv.GetKey() {
		case "location":
			location = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("external data %s: %w", kv.GetKey(), err)
		}
	}
	if location == "" {
		return nil, errors.New("external data without a location")
	}
	if filepath.IsAbs(location) || strings.HasPrefix(location, "/") || strings.HasPrefix(location, `\`) ||
		slicesContains(strings.FieldsFunc(location, func(r rune) bool { return r == '/' || r == '\\' }), "..") {
		return nil, fmt.Errorf("%w: %q", ErrExternalPath, location)
	}
	if length < 0 {
		length = int64(want)
	}
	if offset < 0 || length != int64(want) {
		return nil, fmt.Errorf("external data %q: offset %d, length %d for %d bytes", location, offset, length, want)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(location))
	if err != nil {
		if strings.Contains(err.Error(), "escapes") {
			return nil, fmt.Errorf("%w: %q", ErrExternalPath, location)
		}
		return nil, fmt.Errorf("external data: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if offset > st.Size() || st.Size()-offset < length {
		return nil, fmt.Errorf("external data %q: %d bytes at offset %d, file has %d", location, length, offset, st.Size())
	}
	buf := make([]byte, length)
	if _, err := f.ReadAt(buf, offset); err != nil && !(errors.Is(err, io.EOF) && length == 0) {
		return nil, fmt.Errorf("external data %q: %w", location, err)
	}
	return buf, nil
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
