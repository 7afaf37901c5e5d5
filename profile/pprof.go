package profile

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/google/pprof/profile"
)

// Proto is the samples as a pprof profile: two values a sample, the
// samples' count and their CPU time in nanoseconds; a location a distinct
// frame (its address, function and mapping), a function a name within a
// mapping, a mapping a binary or library, already symbolized (perf named
// the functions on the machine), and the thread's command, process and
// thread as the sample's labels (go tool pprof -tags shows them).
func Proto(samples []Sample) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
	}
	if len(samples) > 0 {
		p.Period = samples[0].Period
	}
	maps := map[string]*profile.Mapping{}
	funcs := map[[2]string]*profile.Function{}
	type locKey struct {
		addr      uint64
		fn, mapng string
	}
	locs := map[locKey]*profile.Location{}
	mapping := func(dso string) *profile.Mapping {
		if m, ok := maps[dso]; ok {
			return m
		}
		m := &profile.Mapping{ID: uint64(len(p.Mapping) + 1), File: dso, HasFunctions: true}
		maps[dso] = m
		p.Mapping = append(p.Mapping, m)
		return m
	}
	function := func(f Frame) *profile.Function {
		k := [2]string{f.Func, f.DSO}
		if fn, ok := funcs[k]; ok {
			return fn
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: f.Func, SystemName: f.Func, Filename: f.DSO}
		funcs[k] = fn
		p.Function = append(p.Function, fn)
		return fn
	}
	location := func(f Frame) *profile.Location {
		k := locKey{f.Addr, f.Func, f.DSO}
		if l, ok := locs[k]; ok {
			return l
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: f.Addr, Mapping: mapping(f.DSO), Line: []profile.Line{{Function: function(f)}}}
		locs[k] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, s := range samples {
		ps := &profile.Sample{
			Value:    []int64{1, s.Period},
			Label:    map[string][]string{"comm": {s.Comm}},
			NumLabel: map[string][]int64{"pid": {int64(s.PID)}, "tid": {int64(s.TID)}},
		}
		for _, f := range s.Stack {
			ps.Location = append(ps.Location, location(f))
		}
		p.Sample = append(p.Sample, ps)
	}
	return p
}

// MaxProto bounds a profile.proto as ReadProto reads it, inflated: a
// profile of every sample of a window (Proto) is some tens of bytes a
// sample, a few hundred kilobytes for the reference session's.
const MaxProto = 256 << 20

// MaxSamples bounds a profile's samples, one stack's or all of them
// together: 2^53, the bound of every count of a session's files
// (results.MaxCount, which a test holds it to), up to which a float64
// holds every whole number. The bound is declared here so that the
// format of a profile imports nothing of the project.
const MaxSamples = 1 << 53

// ReadProto reads a pprof profile.proto, gzipped as Proto's are written
// or not. One that inflates past MaxProto is refused before it is
// parsed, and so is one whose samples (the first value of each) are
// negative or come to more than MaxSamples, or that is not valid
// (profile.CheckValid: a sample of a location it does not hold).
func ReadProto(r io.Reader) (*profile.Profile, error) {
	br := bufio.NewReader(r)
	var in io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		in = z
	}
	b, err := readAtMost(in, MaxProto)
	if err != nil {
		return nil, err
	}
	p, err := profile.ParseUncompressed(b)
	if err != nil {
		return nil, err
	}
	if err := p.CheckValid(); err != nil { // as profile.Parse checks it
		return nil, err
	}
	var samples int64
	for i, s := range p.Sample {
		if len(s.Value) == 0 {
			continue
		}
		if v := s.Value[0]; v < 0 || v > MaxSamples-samples {
			return nil, fmt.Errorf("sample %d: %d samples, after %d: want 0 or more, and at most 2^53 in all", i+1, v, samples)
		}
		samples += s.Value[0]
	}
	if len(p.SampleType) == 0 {
		return nil, errors.New("no sample type: not a profile of samples")
	}
	return p, nil
}

// readAtMost reads r to its end, unless it holds more than limit bytes:
// then it is an error, read no further, with no buffer of more than
// limit+1 bytes made.
func readAtMost(r io.Reader, limit int) ([]byte, error) {
	r = io.LimitReader(r, int64(limit)+1)
	b := make([]byte, 0, min(64<<10, limit+1))
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(cap(b), limit+1-len(b)))
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case len(b) > limit:
			return nil, fmt.Errorf("larger than %d bytes inflated: no profile is so large", limit)
		case err == io.EOF:
			return b, nil
		case err != nil:
			return nil, err
		}
	}
}
