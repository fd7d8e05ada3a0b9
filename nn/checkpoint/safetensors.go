package checkpoint

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
	"github.com/x448/float16"
)

// metadataKey is the header key reserved for the string-to-string map.
const metadataKey = "__metadata__"

// maxHeader bounds the JSON header as the reference implementation does
// (100 MB): a header length beyond it is corruption, not a real file, and
// must not drive an allocation.
const maxHeader = 100 << 20

// dtypeNames maps webtensor's dtypes to the format's names.
var dtypeNames = map[tensor.DType]string{
	tensor.Float32: "F32",
	tensor.Float64: "F64",
	tensor.Int32:   "I32",
	tensor.Float16: "F16",
	tensor.Int64:   "I64",
}

// readOnlyDTypes are the format's dtypes that Read converts to a webtensor
// dtype exactly, and Write never produces: BF16 (PyTorch's bfloat16) is
// the top half of a float32, so it widens to Float32 exactly.
var readOnlyDTypes = map[string]tensor.DType{
	"BF16": tensor.Float32,
}

// foreignDTypes are the format's other dtypes: valid in a file, but with
// no webtensor counterpart, so Read says so rather than "unknown".
var foreignDTypes = []string{
	"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "U32", "U64",
}

// dtypeByName returns the dtype a file's dtype name reads as and the size
// of one element in the file.
func dtypeByName(name string) (dt tensor.DType, fileSize int, ok bool) {
	for dt, n := range dtypeNames {
		if n == name {
			return dt, dt.Size(), true
		}
	}
	if dt, ok := readOnlyDTypes[name]; ok {
		return dt, 2, true
	}
	return 0, 0, false
}

// Write writes tensors and metadata to w as one safetensors file, laid
// out deterministically (see the package documentation). Tensors may be
// on any device and need not be contiguous; they are read to the host one
// at a time. On an error part of the file may have been written already:
// Save, which writes to a temporary file, never leaves such a file behind.
func Write(w io.Writer, tensors map[string]*tensor.Tensor, metadata map[string]string) error {
	names := make([]string, 0, len(tensors))
	for name, t := range tensors {
		if name == metadataKey {
			return fmt.Errorf("checkpoint: %q is reserved for metadata and cannot name a tensor", name)
		}
		if !utf8.ValidString(name) {
			return fmt.Errorf("checkpoint: tensor name %q is not valid UTF-8", name)
		}
		if t == nil {
			return fmt.Errorf("checkpoint: tensor %q is nil", name)
		}
		if err := t.Err(); err != nil {
			return fmt.Errorf("checkpoint: tensor %q: %w", name, err)
		}
		if _, ok := dtypeNames[t.DType()]; !ok {
			return fmt.Errorf("checkpoint: tensor %q has dtype %v, which safetensors cannot hold", name, t.DType())
		}
		names = append(names, name)
	}
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("checkpoint: metadata %q: %q is not valid UTF-8", k, v)
		}
	}
	slices.Sort(names)

	header := encodeHeader(names, tensors, metadata)
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(len(header)))
	if _, err := w.Write(size[:]); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := w.Write(header); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	for _, name := range names {
		data, err := encodeData(tensors[name])
		if err != nil {
			return fmt.Errorf("checkpoint: reading tensor %q: %w", name, err)
		}
		if _, err := w.Write(data); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	return nil
}

// encodeHeader builds the padded JSON header for names (sorted), whose
// data follows in the same order.
func encodeHeader(names []string, tensors map[string]*tensor.Tensor, metadata map[string]string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		writeString(&b, metadataKey)
		b.WriteString(":{")
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(&b, k)
			b.WriteByte(':')
			writeString(&b, metadata[k])
		}
		b.WriteByte('}')
		if len(names) > 0 {
			b.WriteByte(',')
		}
	}
	offset := 0
	for i, name := range names {
		t := tensors[name]
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, name)
		fmt.Fprintf(&b, `:{"dtype":"%s","shape":[`, dtypeNames[t.DType()])
		for j, d := range t.Shape() {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, d)
		}
		end := offset + t.Len()*t.DType().Size()
		fmt.Fprintf(&b, `],"data_offsets":[%d,%d]}`, offset, end)
		offset = end
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	return []byte(b.String())
}

// writeString writes s (valid UTF-8) as a JSON string, escaping only what
// JSON requires, so that the Python writer can follow the same rule.
func writeString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// encodeData returns t's elements as little-endian bytes of its dtype.
func encodeData(t *tensor.Tensor) ([]byte, error) {
	n := t.Len()
	out := make([]byte, n*t.DType().Size())
	switch t.DType() {
	case tensor.Float64:
		v, err := t.Float64s()
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
		}
	case tensor.Int32:
		v, err := t.Int32s()
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
		}
	case tensor.Int64:
		v, err := t.Int64s()
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
		}
	case tensor.Float16:
		// Every binary16 value is exact in float32, so the round trip
		// through Float32s loses nothing but NaN payloads.
		v, err := t.Float32s()
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], float16.Fromfloat32(x).Bits())
		}
	default:
		v, err := t.Float32s()
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
	}
	return out, nil
}

// WriteFile writes tensors and metadata to the file at path, replacing
// it atomically: the data goes to a temporary file in the same directory
// first, which is synced and then renamed over path.
func WriteFile(path string, tensors map[string]*tensor.Tensor, metadata map[string]string) error {
	return writeAtomic(path, func(w io.Writer) error { return Write(w, tensors, metadata) })
}

// writeAtomic runs write on a temporary file beside path and renames it
// over path only when everything, fsync included, succeeded.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := splitPath(path)
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// CreateTemp makes the file 0600; a checkpoint is ordinary data.
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

func splitPath(path string) (dir, base string) {
	i := strings.LastIndexAny(path, string(os.PathSeparator)+"/")
	if i < 0 {
		return ".", path
	}
	return path[:i+1], path[i+1:]
}

// ReadFile reads the safetensors file at path onto dev; see Read.
func ReadFile(path string, dev *tensor.Device) (map[string]*tensor.Tensor, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	return Read(bufio.NewReaderSize(f, 1<<20), dev)
}

// Read reads one safetensors file from r, creating its tensors on dev,
// and returns them with the file's metadata (empty, not nil, when there is
// none). The whole file is validated before any tensor is made; see the
// package documentation for what is checked. A dtype dev cannot hold
// (F64 or F16 on most GPUs) is an error, as are the format's dtypes that
// webtensor lacks (BF16, I64, …). The caller owns the returned tensors.
func Read(r io.Reader, dev *tensor.Device) (map[string]*tensor.Tensor, map[string]string, error) {
	if dev == nil {
		return nil, nil, errors.New("checkpoint: nil device")
	}
	var size [8]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, nil, fmt.Errorf("checkpoint: reading the header length: %w", unexpectedEOF(err))
	}
	n := binary.LittleEndian.Uint64(size[:])
	if n > maxHeader {
		return nil, nil, fmt.Errorf("checkpoint: header length %d exceeds the limit of %d bytes", n, maxHeader)
	}
	// Read through a LimitReader into a growing buffer, so that a header
	// length larger than the file allocates no more than the file holds.
	header, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: reading the header: %w", err)
	}
	if uint64(len(header)) != n {
		return nil, nil, fmt.Errorf("checkpoint: header length %d exceeds the %d bytes that follow it", n, len(header))
	}
	entries, metadata, err := parseHeader(header)
	if err != nil {
		return nil, nil, err
	}
	bufLen := 0
	if len(entries) > 0 {
		bufLen = entries[len(entries)-1].end
	}
	buf, err := io.ReadAll(io.LimitReader(r, int64(bufLen)+1))
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: reading the data: %w", err)
	}
	switch {
	case len(buf) < bufLen:
		return nil, nil, fmt.Errorf("checkpoint: tensor %q ends at byte %d of the data, but the file has only %d data bytes",
			entries[len(entries)-1].name, bufLen, len(buf))
	case len(buf) > bufLen:
		return nil, nil, fmt.Errorf("checkpoint: %d data bytes after the last tensor, which the header does not describe",
			len(buf)-bufLen+unreadLen(r))
	}
	caps := dev.Capabilities()
	for _, e := range entries {
		// Int64 goes to a device without it as Int32 (tensor.FromInt64).
		held := e.dtype
		if held == tensor.Int64 && !tensor.HoldsInt64(dev) {
			held = tensor.Int32
		}
		if !caps.Supports(hal.KernelCopy, held) {
			return nil, nil, fmt.Errorf("checkpoint: tensor %q: device %v cannot hold %s tensors", e.name, dev, e.file)
		}
	}
	tensors := make(map[string]*tensor.Tensor, len(entries))
	for _, e := range entries {
		var t *tensor.Tensor
		err := tensor.Catch(func() { t = decodeTensor(dev, e, buf[e.begin:e.end]) })
		if err == nil {
			err = t.Err()
		}
		if err != nil {
			if t != nil {
				t.Release()
			}
			for _, u := range tensors {
				u.Release()
			}
			return nil, nil, fmt.Errorf("checkpoint: creating tensor %q: %w", e.name, err)
		}
		tensors[e.name] = t
	}
	return tensors, metadata, nil
}

// unreadLen counts what is left in r, for the message about trailing
// bytes; only an estimate matters there, so read errors are ignored.
func unreadLen(r io.Reader) int {
	n, _ := io.Copy(io.Discard, r)
	return int(n)
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decodeTensor makes e's tensor on dev from its little-endian bytes.
func decodeTensor(dev *tensor.Device, e entry, raw []byte) *tensor.Tensor {
	// Passing the shape as a non-nil slice keeps a scalar rank 0.
	shape := append([]int{}, e.shape...)
	switch e.dtype {
	case tensor.Float64:
		v := make([]float64, e.numel)
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return tensor.FromFloat64(dev, v, shape...)
	case tensor.Int32:
		v := make([]int32, e.numel)
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return tensor.FromInt32(dev, v, shape...)
	case tensor.Int64:
		// On a device without Int64 this is Int32, or a panic naming the
		// value that does not fit, which Read returns as an error.
		v := make([]int64, e.numel)
		for i := range v {
			v[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return tensor.FromInt64(dev, v, shape...)
	case tensor.Float16:
		// There is no FromFloat16: go through float32, which holds every
		// binary16 value exactly, and let Cast round back (exactly).
		v := make([]float32, e.numel)
		for i := range v {
			v[i] = float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32()
		}
		f := tensor.FromFloat32(dev, v, shape...)
		defer f.Release()
		return f.Cast(tensor.Float16)
	default:
		v := make([]float32, e.numel)
		for i := range v {
			if e.file == "BF16" {
				// bfloat16 is float32's sign, exponent and top 7
				// fraction bits: shifting it up is exact, NaN and Inf
				// included.
				v[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
				continue
			}
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return tensor.FromFloat32(dev, v, shape...)
	}
}
