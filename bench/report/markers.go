package main

import (
	"fmt"
	"os"
	"strings"
)

// rewriteSection replaces what lies between the markers of the file at
// path with section, keeping the rest. A file without the markers gets
// them, with the section, at its end.
func rewriteSection(path, section string) error {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	text := string(data)
	block := beginMarker + "\n\n" + strings.TrimSpace(section) + "\n\n" + endMarker
	begin, end := strings.Index(text, beginMarker), strings.Index(text, endMarker)
	switch {
	case begin >= 0 && end > begin:
		text = text[:begin] + block + text[end+len(endMarker):]
	case begin >= 0 || end >= 0:
		return fmt.Errorf("%s: only one of the report markers is present", path)
	default:
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += "\n" + block + "\n"
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
