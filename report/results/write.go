package results

import (
	"encoding/csv"
	"fmt"
	"os"
)

// Writer appends rows to a session file, syncing each one so that a
// killed session loses at most the run in flight.
type Writer struct {
	f    *os.File
	w    *csv.Writer
	path string
}

// Append opens path for appending, writing the header if the file is new
// or empty.
func Append(path string) (*Writer, error) { return open(path, 0) }

// Create creates the session file path, failing with an error that
// errors.Is os.ErrExist when it is there: two sessions never write one
// file.
func Create(path string) (*Writer, error) { return open(path, os.O_EXCL) }

func open(path string, flag int) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open session file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	c := &Writer{f: f, w: csv.NewWriter(f), path: path}
	if st.Size() == 0 {
		if err := c.write(Header); err != nil {
			f.Close()
			return nil, err
		}
	}
	return c, nil
}

// Write writes one row and syncs it to disk.
func (c *Writer) Write(r Row) error {
	return c.write(r.Record())
}

func (c *Writer) write(rec []string) error {
	if err := c.w.Write(rec); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", c.path, err)
	}
	return nil
}

// Close closes the file; it may be called more than once.
func (c *Writer) Close() error {
	if c == nil || c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}
