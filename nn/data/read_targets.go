package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ReadCSVTargets reads comma-separated rows of numbers as ReadCSV does,
// for regression: the columns targetColumns (negative counts from the
// end: -1 is the last) hold each sample's float targets, in the order
// given, and the other columns, in order, its features. The dataset has
// Targets with TargetShape [len(targetColumns)]. shape is one sample's
// shape as for ReadCSV. Errors name the line and column.
func ReadCSVTargets(r io.Reader, targetColumns []int, shape []int) (*Dataset, error) {
	if len(targetColumns) == 0 {
		return nil, errors.New("data: CSV: no target columns")
	}
	r, err := maybeGunzip(r)
	if err != nil {
		return nil, fmt.Errorf("data: CSV: %w", err)
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	d := &Dataset{Shape: slices.Clone(shape), TargetShape: []int{len(targetColumns)}, Targets: []float32{}}
	var slot map[int]int // column → index among the targets
	var row []float32
	for {
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("data: CSV: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if slot == nil {
			if slot, err = targetSlots(len(fields), targetColumns, d); err != nil {
				return nil, fmt.Errorf("data: CSV line %d: %w", line, err)
			}
			row = make([]float32, len(targetColumns))
		}
		for i, field := range fields {
			field = strings.TrimSpace(field)
			v, err := strconv.ParseFloat(field, 32)
			if err != nil {
				return nil, fmt.Errorf("data: CSV line %d, column %d: %q is not a number", line, i+1, field)
			}
			if k, ok := slot[i]; ok {
				row[k] = float32(v)
			} else {
				d.X = append(d.X, float32(v))
			}
		}
		d.Targets = append(d.Targets, row...)
	}
	if d.Len() == 0 {
		return nil, errors.New("data: CSV: no rows")
	}
	return d, nil
}

// targetSlots resolves the target columns against the first row's width
// and settles the sample shape.
func targetSlots(width int, targetColumns []int, d *Dataset) (map[int]int, error) {
	slot := make(map[int]int, len(targetColumns))
	for k, c := range targetColumns {
		col := c
		if col < 0 {
			col += width
		}
		if col < 0 || col >= width {
			return nil, fmt.Errorf("target column %d out of range for %d columns", c, width)
		}
		if _, dup := slot[col]; dup {
			return nil, fmt.Errorf("target column %d given twice", c)
		}
		slot[col] = k
	}
	features := width - len(slot)
	for _, s := range d.Shape {
		if s < 0 {
			return nil, fmt.Errorf("negative dimension in sample shape %v", d.Shape)
		}
	}
	if d.Shape == nil {
		d.Shape = []int{features}
	}
	if size := d.sampleSize(); size != features {
		return nil, fmt.Errorf("sample shape %v has %d elements, the rows have %d features", d.Shape, size, features)
	}
	return slot, nil
}
