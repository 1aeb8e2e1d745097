package results

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteFileAtomic writes through a temp file and a rename, so a reader never
// sees half a file, even after an interrupt.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("out: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("out: %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("out: %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	return nil
}

// WriteFileShared writes atomically and leaves the file readable by all:
// reports and the logs they read are meant to be passed around, and
// WriteFileAtomic's temp files are private.
func WriteFileShared(path string, write func(io.Writer) error) error {
	if err := WriteFileAtomic(path, write); err != nil {
		return err
	}
	if err := os.Chmod(path, 0o644); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	return nil
}
