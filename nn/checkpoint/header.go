package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// entry is one validated tensor of a header.
type entry struct {
	name       string
	dtype      tensor.DType
	file       string // the dtype's name in the file (BF16 reads as Float32)
	fileSize   int    // bytes of one element in the file
	shape      []int
	numel      int
	begin, end int
}

// maxOffset bounds data offsets well inside int64, so sums and the +1 of
// the trailing-data check cannot overflow.
const maxOffset = math.MaxInt64 / 4

// maxElements is tensor's bound on an element count: shapes beyond it
// panic there, so Read turns them into errors first.
const maxElements = math.MaxInt / 8

// parseHeader validates a header and returns its tensors ordered by their
// data offsets, whose spans are checked to tile [0, end of last).
func parseHeader(header []byte) ([]entry, map[string]string, error) {
	if !utf8.Valid(header) {
		return nil, nil, errors.New("checkpoint: header is not valid UTF-8")
	}
	// The specification requires the JSON to start at the first byte;
	// only the padding after it may be whitespace.
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, errors.New("checkpoint: header does not start with a JSON object")
	}
	fields, err := parseObject(header, true)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: header: %w", err)
	}
	metadata := map[string]string{}
	var entries []entry
	for _, f := range fields {
		if f.key == metadataKey {
			if metadata, err = parseMetadata(f.value); err != nil {
				return nil, nil, fmt.Errorf("checkpoint: %s: %w", metadataKey, err)
			}
			continue
		}
		e, err := parseEntry(f.key, f.value)
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint: tensor %q: %w", f.key, err)
		}
		entries = append(entries, e)
	}
	// Order by span; among equal spans (empty tensors at one offset) by
	// name, so that messages do not depend on the header's key order.
	slices.SortFunc(entries, func(a, b entry) int {
		if a.begin != b.begin {
			return a.begin - b.begin
		}
		if a.end != b.end {
			return a.end - b.end
		}
		return strings.Compare(a.name, b.name)
	})
	pos := 0
	for i, e := range entries {
		switch {
		case e.begin < pos:
			return nil, nil, fmt.Errorf("checkpoint: tensor %q (bytes %d to %d) overlaps tensor %q (bytes %d to %d)",
				e.name, e.begin, e.end, entries[i-1].name, entries[i-1].begin, entries[i-1].end)
		case e.begin > pos:
			prev := "the start of the data"
			if i > 0 {
				prev = fmt.Sprintf("tensor %q", entries[i-1].name)
			}
			return nil, nil, fmt.Errorf("checkpoint: tensor %q starts at byte %d, leaving a gap of %d unused bytes after %s",
				e.name, e.begin, e.begin-pos, prev)
		}
		pos = e.end
	}
	return entries, metadata, nil
}

func parseMetadata(raw json.RawMessage) (map[string]string, error) {
	if kind(raw) != '{' {
		return nil, errors.New("is not a JSON object")
	}
	fields, err := parseObject(raw, false)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		if kind(f.value) != '"' {
			return nil, fmt.Errorf("value of %q is not a string", f.key)
		}
		var s string
		if err := json.Unmarshal(f.value, &s); err != nil {
			return nil, fmt.Errorf("value of %q: %w", f.key, err)
		}
		m[f.key] = s
	}
	return m, nil
}

func parseEntry(name string, raw json.RawMessage) (entry, error) {
	e := entry{name: name}
	if kind(raw) != '{' {
		return e, errors.New("entry is not a JSON object")
	}
	fields, err := parseObject(raw, false)
	if err != nil {
		return e, err
	}
	var dtypeName string
	var shape, offsets []uint64
	seen := 0
	for _, f := range fields {
		switch f.key {
		case "dtype":
			if kind(f.value) != '"' {
				return e, errors.New(`"dtype" is not a string`)
			}
			err = json.Unmarshal(f.value, &dtypeName)
		case "shape":
			shape, err = parseUints(f.value)
		case "data_offsets":
			offsets, err = parseUints(f.value)
		default:
			return e, fmt.Errorf("unknown field %q", f.key)
		}
		if err != nil {
			return e, fmt.Errorf("%q: %w", f.key, err)
		}
		seen++
	}
	if seen != 3 {
		for _, k := range []string{"dtype", "shape", "data_offsets"} {
			if !slices.ContainsFunc(fields, func(f field) bool { return f.key == k }) {
				return e, fmt.Errorf("missing field %q", k)
			}
		}
	}

	dt, size, ok := dtypeByName(dtypeName)
	if !ok {
		if slices.Contains(foreignDTypes, dtypeName) {
			return e, fmt.Errorf("dtype %s has no webtensor counterpart (F32, F64, I32, I64, F16; BF16 reads as F32)", dtypeName)
		}
		return e, fmt.Errorf("unknown dtype %q", dtypeName)
	}
	e.dtype, e.file, e.fileSize = dt, dtypeName, size

	if len(shape) > hal.MaxRank {
		return e, fmt.Errorf("shape %v has rank %d, more than webtensor's maximum %d", shape, len(shape), hal.MaxRank)
	}
	e.shape = make([]int, len(shape))
	e.numel = 1
	for i, d := range shape {
		// tensor refuses a shape whose running product overflows even when
		// a later zero would make it empty, so this check follows its order.
		if d != 0 && (d > maxElements || e.numel > maxElements/int(d)) {
			return e, fmt.Errorf("shape %v has too many elements", shape)
		}
		e.shape[i] = int(d)
		e.numel *= int(d)
	}

	if len(offsets) != 2 {
		return e, fmt.Errorf(`"data_offsets" has %d numbers, want 2 (begin, end)`, len(offsets))
	}
	if offsets[0] > offsets[1] {
		return e, fmt.Errorf("data_offsets [%d, %d] end before they begin", offsets[0], offsets[1])
	}
	if offsets[1] > maxOffset {
		return e, fmt.Errorf("data_offsets [%d, %d] are out of range", offsets[0], offsets[1])
	}
	e.begin, e.end = int(offsets[0]), int(offsets[1])
	if want := e.numel * size; e.end-e.begin != want {
		return e, fmt.Errorf("data_offsets [%d, %d] span %d bytes, but %s%v needs %d",
			e.begin, e.end, e.end-e.begin, dtypeName, e.shape, want)
	}
	return e, nil
}

// parseUints decodes an array of non-negative integers. Decoding straight
// into []uint64 would read null (the array or an element) as nothing or 0.
func parseUints(raw json.RawMessage) ([]uint64, error) {
	if kind(raw) != '[' {
		return nil, errors.New("is not an array")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	out := make([]uint64, len(elems))
	for i, el := range elems {
		if c := kind(el); c < '0' || c > '9' {
			return nil, fmt.Errorf("element %s is not a non-negative integer", el)
		}
		if err := json.Unmarshal(el, &out[i]); err != nil {
			return nil, fmt.Errorf("element %s is not a non-negative integer", el)
		}
	}
	return out, nil
}

// field is one member of a JSON object, in file order.
type field struct {
	key   string
	value json.RawMessage
}

// parseObject splits the JSON object at the start of data into its
// members, rejecting duplicate keys (which encoding/json would silently
// resolve to the last one). With padded, only whitespace may follow the
// object; otherwise nothing may.
func parseObject(data []byte, padded bool) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '{', which the caller checked
		return nil, syntaxError(err)
	}
	var fields []field
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("invalid JSON: object key is not a string")
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(err)
		}
		fields = append(fields, field{key, raw})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, syntaxError(err)
	}
	rest := data[dec.InputOffset():]
	if padded {
		rest = bytes.TrimLeft(rest, " \t\r\n")
	}
	if len(rest) > 0 {
		return nil, errors.New("invalid JSON: data after the object")
	}
	return fields, nil
}

func syntaxError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// kind returns the first byte of a JSON value: '{', '[', '"', 'n', …
func kind(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}
