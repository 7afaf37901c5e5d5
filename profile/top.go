package profile

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/google/pprof/profile"
)

// TopN is how many functions the top view lists.
const TopN = 10

// Func is a function's part of a profile's samples.
type Func struct {
	Name  string
	Self  int64 // samples whose leaf is the function
	Total int64 // samples with the function anywhere in their call chain, once a sample
}

// Top is the n functions of p of most self time, by its samples (the
// first value of each sample), ties by total then name, and the samples
// in all. A function is its name: a stripped binary's "[nginx]" is one.
func Top(p *profile.Profile, n int) (funcs []Func, samples int64) {
	return top(func(yield func(leafFirst []string, v int64)) {
		for _, s := range p.Sample {
			if len(s.Value) == 0 {
				continue
			}
			var names []string
			for _, l := range s.Location {
				for _, line := range l.Line {
					name := Unknown
					if line.Function != nil {
						name = line.Function.Name
					}
					names = append(names, name)
				}
			}
			yield(names, s.Value[0])
		}
	}, n)
}

// top is the n functions of most self time of the stacks each gives,
// their functions leaf first and their samples: a stack's leaf is its
// self, every function in it once its total.
func top(each func(yield func(leafFirst []string, v int64)), n int) (funcs []Func, samples int64) {
	byName := map[string]*Func{}
	get := func(name string) *Func {
		f, ok := byName[name]
		if !ok {
			f = &Func{Name: name}
			byName[name] = f
		}
		return f
	}
	each(func(names []string, v int64) {
		samples += v
		seen := map[string]bool{}
		for i, name := range names {
			if i == 0 {
				get(name).Self += v
			}
			if !seen[name] {
				seen[name] = true
				get(name).Total += v
			}
		}
	})
	for _, f := range byName {
		funcs = append(funcs, *f)
	}
	sortFuncs(funcs)
	if len(funcs) > n {
		funcs = funcs[:n]
	}
	return funcs, samples
}

// sortFuncs orders funcs by self time, ties by total then name.
func sortFuncs(funcs []Func) {
	sort.Slice(funcs, func(i, j int) bool {
		a, b := funcs[i], funcs[j]
		if a.Self != b.Self {
			return a.Self > b.Self
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.Name < b.Name
	})
}

// Share is part's share of all, 0 where all is none.
func Share(part, all int64) float64 {
	if all <= 0 {
		return 0
	}
	return float64(part) / float64(all)
}

// WriteTop prints the top view as pprof -top does: each function's self
// and total samples and their shares of all the samples.
func WriteTop(w io.Writer, funcs []Func, samples int64) error {
	fmt.Fprintf(w, "%d samples; the %d functions of most self time:\n", samples, len(funcs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "self\tself%%\ttotal\ttotal%%\t\tfunction\n")
	for _, f := range funcs {
		fmt.Fprintf(tw, "%d\t%.2f%%\t%d\t%.2f%%\t\t%s\n", f.Self, 100*Share(f.Self, samples), f.Total, 100*Share(f.Total, samples), f.Name)
	}
	return tw.Flush()
}
