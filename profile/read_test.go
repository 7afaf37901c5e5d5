package profile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// ParseFolded refuses, by its line, a line longer than any stack and
// counts no profile can have: one past 2^53 (or past int64), or all of
// them together past 2^53 (which would wrap the sum of a top view).
func TestParseFoldedBounds(t *testing.T) {
	long := "nginx;" + strings.Repeat("f;", MaxFoldedLine/2) + "leaf 1"
	for _, c := range []struct{ name, in, want string }{
		{"long line", "nginx;main 3\n\n" + long + "\nnginx;main 1\n", fmt.Sprintf("folded stacks:3: a line longer than %d bytes", MaxFoldedLine)},
		{"count past 2^53", "nginx;main 3\nnginx;f 9007199254740993\n", `folded stacks:2: "nginx;f 9007199254740993": count "9007199254740993" is past 2^53`},
		{"count past int64", "nginx;f 99999999999999999999\n", `folded stacks:1: "nginx;f 99999999999999999999": count "99999999999999999999" is past 2^53`},
		{"counts past 2^53", "nginx;f 9007199254740992\nnginx;g 1\n", "folded stacks:2: the counts come to more than 2^53"},
		{"negative count", "nginx;f -1\n", `folded stacks:1: "nginx;f -1": count "-1" is not a positive number`},
	} {
		s, err := ParseFolded(strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: ParseFolded = %d stacks, %v; want an error starting %q", c.name, len(s), err, c.want)
		}
	}
	// A line of MaxFoldedLine bytes, and counts of 2^53 in all, read.
	edge := "n;" + strings.Repeat("f", MaxFoldedLine-len("n; 9007199254740991")) + " 9007199254740991\r\nn;g 1\n"
	s, err := ParseFolded(strings.NewReader(edge))
	if err != nil || len(s) != 2 || s[0].Count+s[1].Count != 1<<53 {
		t.Errorf("ParseFolded of a line of %d bytes and 2^53 samples = %d stacks, %v", MaxFoldedLine, len(s), err)
	}
}

// writeProto is p as a file of its, gzipped.
func writeProto(t testing.TB, p *profile.Profile) []byte {
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ReadProto reads a profile gzipped or not, and refuses one that
// inflates past MaxProto without inflating it further, and one whose
// samples are negative or come to more than 2^53.
func TestReadProto(t *testing.T) {
	p := Proto(readCapture(t, "perf-fp-gzip"))
	gz := writeProto(t, p)
	var raw bytes.Buffer
	if err := p.WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{gz, raw.Bytes()} {
		q, err := ReadProto(bytes.NewReader(in))
		if err != nil || len(q.Sample) != len(p.Sample) {
			t.Errorf("ReadProto of the capture's profile: %v", err)
		}
	}
	// A profile inflating past the bound, a gzip bomb, is refused
	// unread: cmd/bench's TestProfileTopBomb; here, readAtMost's bound.
	for _, n := range []int{0, 1, 99, 100, 101, 1 << 20} {
		b, err := readAtMost(bytes.NewReader(make([]byte, n)), 100)
		if n <= 100 && (err != nil || len(b) != n) || n > 100 && (err == nil || !strings.Contains(err.Error(), "larger than 100 bytes inflated")) {
			t.Errorf("readAtMost of %d bytes, at most 100: %d bytes, %v", n, len(b), err)
		}
	}
	// A sample of a location the profile does not hold (read as nil,
	// which the top view would follow).
	q := p.Copy()
	q.Location = q.Location[1:]
	if _, err := ReadProto(bytes.NewReader(writeProto(t, q))); err == nil || !strings.Contains(err.Error(), "nil loc") {
		t.Errorf("ReadProto of a sample of a location not held = %v; want it refused", err)
	}
	for _, c := range []struct {
		name   string
		values []int64
		want   string
	}{
		{"negative", []int64{3, -1}, "sample 2: -1 samples, after 3"},
		{"one past 2^53", []int64{3, 1 << 53}, "sample 2: 9007199254740992 samples, after 3"},
		{"all past 2^53", []int64{1 << 52, 1 << 52, 1}, "sample 3: 1 samples, after 9007199254740992"},
		{"past int64", []int64{1 << 52, 1<<63 - 1}, "sample 2: 9223372036854775807 samples, after 4503599627370496"},
	} {
		q := p.Copy()
		q.Sample = q.Sample[:len(c.values)]
		for i, v := range c.values {
			q.Sample[i].Value[0] = v
		}
		if _, err := ReadProto(bytes.NewReader(writeProto(t, q))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ReadProto = %v; want an error saying %q", c.name, err, c.want)
		}
	}
}
