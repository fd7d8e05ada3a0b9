package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maybeGunzip returns a reader of r's content, decompressed when it starts
// with gzip's magic number. Neither IDX (which starts with two zero bytes)
// nor CSV text can start that way, so the check is unambiguous.
func maybeGunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// idxUnsignedByte is the IDX type code of unsigned bytes, the one type
// that MNIST and Fashion-MNIST use.
const idxUnsignedByte = 0x08

// idxTypeNames names the other IDX type codes, for the error that rejects
// them.
var idxTypeNames = map[byte]string{
	0x09: "signed byte", 0x0B: "int16", 0x0C: "int32", 0x0D: "float32", 0x0E: "float64",
}

// maxIDXElements bounds the element count a header may claim, so that a
// corrupt header is an error instead of an overflow.
const maxIDXElements = 1 << 40

// ReadIDX reads an IDX file (the format of MNIST and Fashion-MNIST), raw
// or gzip-compressed: a magic number of two zero bytes, a type code and a
// dimension count; then each dimension as a big-endian uint32; then the
// elements in row-major order. It returns the dimensions and the elements.
// Only unsigned bytes (type 0x08) are supported; other types, a bad magic
// number, a truncated file and bytes after the data are errors.
func ReadIDX(r io.Reader) (shape []int, data []byte, err error) {
	r, err = maybeGunzip(r)
	if err != nil {
		return nil, nil, fmt.Errorf("data: IDX: %w", err)
	}
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, nil, fmt.Errorf("data: IDX header: %w", unexpectedEOF(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, nil, fmt.Errorf("data: IDX: bad magic number % x (want 00 00 <type> <dims>)", magic)
	}
	if magic[2] != idxUnsignedByte {
		name := idxTypeNames[magic[2]]
		if name == "" {
			return nil, nil, fmt.Errorf("data: IDX: unknown type code 0x%02x", magic[2])
		}
		return nil, nil, fmt.Errorf("data: IDX: type 0x%02x (%s) is not supported, only unsigned bytes (0x08)", magic[2], name)
	}
	ndims := int(magic[3])
	if ndims == 0 {
		return nil, nil, errors.New("data: IDX: zero dimensions")
	}
	dims := make([]byte, 4*ndims)
	if _, err := io.ReadFull(r, dims); err != nil {
		return nil, nil, fmt.Errorf("data: IDX dimensions: %w", unexpectedEOF(err))
	}
	shape = make([]int, ndims)
	count := int64(1)
	for i := range shape {
		shape[i] = int(binary.BigEndian.Uint32(dims[4*i:]))
		count *= int64(shape[i])
		if count > maxIDXElements {
			return nil, nil, fmt.Errorf("data: IDX: shape %v is implausibly large", shape[:i+1])
		}
	}
	// ReadAll grows its buffer as bytes arrive, so a header that claims
	// more than the file holds costs no more memory than the file.
	data, err = io.ReadAll(io.LimitReader(r, count))
	if err != nil {
		return nil, nil, fmt.Errorf("data: IDX data: %w", err)
	}
	if int64(len(data)) != count {
		return nil, nil, fmt.Errorf("data: IDX truncated: shape %v needs %d bytes of data, file has %d", shape, count, len(data))
	}
	// Reading to the end also makes gzip verify its checksum.
	var extra [1]byte
	if n, err := io.ReadFull(r, extra[:]); n > 0 {
		return nil, nil, fmt.Errorf("data: IDX: bytes after the %d elements of shape %v", count, shape)
	} else if !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("data: IDX: %w", err)
	}
	return shape, data, nil
}

// unexpectedEOF reports a file that ends inside a header as truncated
// rather than as a clean end.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// LoadMNIST reads a pair of IDX files in the layout of MNIST and
// Fashion-MNIST (images [N, rows, cols], labels [N], both unsigned bytes,
// raw or gzip-compressed) into a Dataset of sample shape [1, rows, cols],
// the channel axis that convolutions expect. Pixels are scaled from
// 0…255 to [0, 1].
func LoadMNIST(images, labels io.Reader) (*Dataset, error) {
	imgShape, pixels, err := ReadIDX(images)
	if err != nil {
		return nil, fmt.Errorf("images: %w", err)
	}
	if len(imgShape) != 3 {
		return nil, fmt.Errorf("data: MNIST images: shape %v, want [N, rows, cols]", imgShape)
	}
	lblShape, lbls, err := ReadIDX(labels)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	if len(lblShape) != 1 {
		return nil, fmt.Errorf("data: MNIST labels: shape %v, want [N]", lblShape)
	}
	if imgShape[0] != lblShape[0] {
		return nil, fmt.Errorf("data: MNIST: %d images but %d labels", imgShape[0], lblShape[0])
	}
	d := &Dataset{
		X:     make([]float32, len(pixels)),
		Y:     make([]int32, len(lbls)),
		Shape: []int{1, imgShape[1], imgShape[2]},
	}
	for i, p := range pixels {
		d.X[i] = float32(p) / 255
	}
	for i, l := range lbls {
		d.Y[i] = int32(l)
	}
	return d, nil
}

// ReadCSV reads comma-separated rows of numbers, raw or gzip-compressed,
// with no header line: each row is one sample, the column labelColumn
// (negative counts from the end: -1 is the last) holds its integer label
// and the other columns, in order, its features. shape is one sample's
// shape, whose element count must equal the number of feature columns;
// nil means a flat vector. Every row must have as many columns as the
// first. Errors name the line.
func ReadCSV(r io.Reader, labelColumn int, shape []int) (*Dataset, error) {
	r, err := maybeGunzip(r)
	if err != nil {
		return nil, fmt.Errorf("data: CSV: %w", err)
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	d := &Dataset{Shape: slices.Clone(shape)}
	label := -1
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("data: CSV: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if label < 0 {
			if label, err = firstRow(len(row), labelColumn, d); err != nil {
				return nil, fmt.Errorf("data: CSV line %d: %w", line, err)
			}
		}
		for i, field := range row {
			field = strings.TrimSpace(field)
			if i == label {
				y, err := parseLabel(field)
				if err != nil {
					return nil, fmt.Errorf("data: CSV line %d, column %d: %w", line, i+1, err)
				}
				d.Y = append(d.Y, y)
				continue
			}
			v, err := strconv.ParseFloat(field, 32)
			if err != nil {
				return nil, fmt.Errorf("data: CSV line %d, column %d: %q is not a number", line, i+1, field)
			}
			d.X = append(d.X, float32(v))
		}
	}
	if d.Len() == 0 {
		return nil, errors.New("data: CSV: no rows")
	}
	return d, nil
}

// firstRow settles the label column and the sample shape from the first
// row's width.
func firstRow(width, labelColumn int, d *Dataset) (label int, err error) {
	label = labelColumn
	if label < 0 {
		label += width
	}
	if label < 0 || label >= width {
		return -1, fmt.Errorf("label column %d out of range for %d columns", labelColumn, width)
	}
	features := width - 1
	for _, s := range d.Shape {
		if s < 0 {
			return -1, fmt.Errorf("negative dimension in sample shape %v", d.Shape)
		}
	}
	if d.Shape == nil {
		d.Shape = []int{features}
	}
	if size := d.sampleSize(); size != features {
		return -1, fmt.Errorf("sample shape %v has %d elements, the rows have %d features", d.Shape, size, features)
	}
	return label, nil
}

// parseLabel accepts an integer, also written as a float with no
// fractional part ("3.0"), as some exporters write every column as float.
func parseLabel(field string) (int32, error) {
	if y, err := strconv.ParseInt(field, 10, 32); err == nil {
		return int32(y), nil
	}
	f, err := strconv.ParseFloat(field, 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, fmt.Errorf("label %q is not an integer", field)
	}
	return int32(f), nil
}
