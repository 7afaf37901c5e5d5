package proxies

import (
	"bytes"
	"os"
	"testing"
)

// The columns file is the user's: any file either reads or is refused
// with an error, and what reads has named columns of a known kind.
// go test runs the seeds; a longer run is in docs/tests.md.
func FuzzParseColumns(f *testing.F) {
	b, err := os.ReadFile("../examples/columns.conf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("\"devel -s0\" 3proxy binary=/usr/local/bin/3proxy flags=-s0 group=copy\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cols, err := ParseColumns(bytes.NewReader(data), "columns.conf")
		if err != nil {
			return
		}
		for _, c := range cols {
			if _, ok := Lookup(c.Kind); c.Name == "" || !ok {
				t.Errorf("%q read as a column %+v", data, c)
			}
		}
	})
}
