package data

import (
	"os"
	"path/filepath"
)

func openDigits() (*os.File, error) {
	return os.Open(filepath.Join("..", "..", "testdata", "digits", "digits.csv.gz"))
}
