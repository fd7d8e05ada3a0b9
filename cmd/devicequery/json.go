package main

import (
	"encoding/json"
	"io"
)

func writeJSON(w io.Writer, entries []entry) error {
	if entries == nil {
		entries = []entry{} // an empty array, not null
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(entries)
}
