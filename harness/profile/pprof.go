package profile

import (
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
