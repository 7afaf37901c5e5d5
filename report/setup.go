package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"bench/internal/text"
	"bench/results"
)

// Setup is a session's Setup table, as the reference results open with
// it: a column per machine, a row per fact of the machines' metadata
// files (the host, its CPUs and memory, the system, the session's
// settings, every proxy's and tool's version), and under it the notes the
// metadata holds. A machine whose metadata was not given has – cells.
type Setup struct {
	Session  string     `json:"session"`
	Machines []string   `json:"machines"`
	Rows     []SetupRow `json:"rows"` // none when no machine has metadata
	Notes    []string   `json:"notes,omitempty"`
	// Missing are the session files given without metadata beside them.
	Missing []string `json:"missing,omitempty"`
}

// SetupRow is a row of the Setup table: what it says of each machine.
type SetupRow struct {
	Label string   `json:"label"`
	Cells []string `json:"cells"`
}

// noValue is the cell of a machine whose metadata says nothing of a row.
const noValue = "–"

// Setups builds the Setup table of every session of rows that files were
// given for, in the order of the tables (newest first; opt.Session keeps
// one). The machines are the session's, as its rows name them; each
// machine's cells come from the metadata of files whose session and
// machine are theirs. A session none of whose machines has metadata has a
// Setup with no rows, which says which files had none. The combined
// layout has no Setup tables.
func Setups(runs []results.Row, files []results.SessionFile, opt Options) []Setup {
	if len(files) == 0 || (opt.Layout != "" && opt.Layout != LayoutMachine) {
		return nil
	}
	rows := make([]*results.Row, 0, len(runs))
	for i := range runs {
		if opt.Session == "" || runs[i].Session == opt.Session {
			rows = append(rows, &runs[i])
		}
	}
	var missing []string
	for _, f := range files {
		if f.Meta == nil {
			missing = append(missing, f.Path)
		}
	}
	var out []Setup
	for _, s := range sessions(rows) {
		var machines []string
		for _, r := range s.rows {
			if !slices.Contains(machines, r.Machine) {
				machines = append(machines, r.Machine)
			}
		}
		metas := make([]*results.Meta, len(machines))
		found := false
		for i, m := range machines {
			for _, f := range files {
				if f.Meta != nil && f.Meta.Session == s.id && f.Meta.Machine.Label == m {
					metas[i], found = f.Meta, true
					break
				}
			}
		}
		st := Setup{Session: s.id, Machines: machines, Rows: []SetupRow{}}
		if slices.Contains(metas, nil) {
			st.Missing = missing
		}
		if found {
			st.Rows = setupRows(metas, opt)
			st.Notes = setupNotes(machines, metas)
		}
		out = append(out, st)
	}
	return out
}

// setupRows are the rows of the machines' metadata, nil for a machine
// without any, the build of bench that ran the session among them;
// with opt.Detail, its command line too (the reference results have
// none).
func setupRows(metas []*results.Meta, opt Options) []SetupRow {
	var rows []SetupRow
	for _, f := range setupFieldsOf(metas, opt) {
		if r, known := f.row(metas); known {
			rows = append(rows, r)
		}
	}
	return rows
}

// setupField is a row of the setup table: its label, and what it says of
// a machine's metadata, "" where the metadata does not say.
type setupField struct {
	label string
	cell  func(m *results.Meta) string
}

// row is the field's row of the machines' metadata (nil for a machine
// without any): noValue where a machine's says nothing. False when none
// says anything.
func (f setupField) row(metas []*results.Meta) (SetupRow, bool) {
	r := SetupRow{Label: f.label, Cells: make([]string, len(metas))}
	known := false
	for i, m := range metas {
		r.Cells[i] = noValue
		if m == nil {
			continue
		}
		if c := f.cell(m); c != "" {
			r.Cells[i], known = c, true
		}
	}
	return r, known
}

// setupFieldsOf are the fields of the machines' setup table: sessionFields;
// with opt.Detail, the command line; the versions of the columns
// (versionedColumns), then those of the tools, by name.
func setupFieldsOf(metas []*results.Meta, opt Options) []setupField {
	fields := slices.Clone(sessionFields)
	if opt.Detail {
		fields = append(fields, setupField{"command line", func(m *results.Meta) string { return commandLine(m.CommandLine) }})
	}
	for _, name := range versionedColumns(metas) {
		fields = append(fields, setupField{name, func(m *results.Meta) string {
			for _, c := range m.Columns {
				if c.Name == name {
					return c.Version
				}
			}
			return ""
		}})
	}
	var tools []string
	for _, m := range metas {
		if m == nil {
			continue
		}
		for t := range m.Tools {
			if !slices.Contains(tools, t) {
				tools = append(tools, t)
			}
		}
	}
	sort.Strings(tools)
	for _, t := range tools {
		fields = append(fields, setupField{t, func(m *results.Meta) string { return m.Tools[t] }})
	}
	return fields
}

// sessionFields are the fields of every setup table: the machine, what
// the session ran and how, when, and the build of bench that ran it.
var sessionFields = []setupField{
	{"host", func(m *results.Meta) string { return m.Machine.Host }},
	{"CPUs, memory", func(m *results.Meta) string { return cpusAndMemory(m.Machine) }},
	{"system", func(m *results.Meta) string {
		return joinSet(m.Machine.Distribution, m.Machine.Kernel, m.Machine.Arch)
	}},
	{"CPU layout", func(m *results.Meta) string { return m.Layout }},
	{"hosts", hostsField},
	{"proxy CPU quota", func(m *results.Meta) string {
		if m.ProxyCPU == 0 {
			return ""
		}
		return fmt.Sprintf("%g CPU", m.ProxyCPU)
	}},
	{"scenarios", func(m *results.Meta) string { return m.Scenario }},
	{"columns asked for", func(m *results.Meta) string { return m.Proxy }},
	{"columns file", func(m *results.Meta) string { return m.ColumnsFile }},
	{"runs", runsField},
	{"mix connections", func(m *results.Meta) string {
		if m.MixConns == 0 {
			return ""
		}
		return fmt.Sprint(m.MixConns)
	}},
	{"sustainable rate search", func(m *results.Meta) string {
		if m.Sweep == nil {
			return ""
		}
		return fmt.Sprintf("from %s/s to within %s; %s", text.Thousands(m.Sweep.From), text.SharePercent(m.Sweep.Precision), SloText(m.Sweep.SLO))
	}},
	{"started", func(m *results.Meta) string { return stamp(m.Started) }},
	{"resumed", func(m *results.Meta) string {
		var ts []string
		for _, t := range m.Resumed {
			ts = append(ts, stamp(t))
		}
		return strings.Join(ts, ", ")
	}},
	{"ended", func(m *results.Meta) string {
		if m.Ended == nil {
			return "did not end"
		}
		return stamp(*m.Ended)
	}},
	{"bench", func(m *results.Meta) string {
		if m.Bench == nil {
			return "not recorded (a session from before bench recorded its build)"
		}
		return m.Bench.String()
	}},
}

// runsField is the runs row's cell of a machine's metadata: the runs of
// a cell, their window and warm-up, then those of each method that has
// its own.
func runsField(m *results.Meta) string {
	if m.Reps == 0 {
		return ""
	}
	runs := fmt.Sprintf("%d × %s after %s of warm-up", m.Reps, time.Duration(m.Window), time.Duration(m.Warmup))
	for _, mode := range slices.Sorted(maps.Keys(m.Methods)) {
		own := m.Methods[mode]
		runs += fmt.Sprintf("; %s: %d × %s after %s", mode, own.Reps, time.Duration(own.Window), time.Duration(own.Warmup))
	}
	return runs
}

// versionedColumns are the columns whose versions the table lists, in
// the order the metadata names them: not "no proxy", and not a column
// that runs the binary of one listed before it on every machine
// (haproxy splice-auto is haproxy's binary).
func versionedColumns(metas []*results.Meta) []string {
	var names []string
	same := map[string]bool{} // columns so far all running an earlier column's binary
	for _, m := range metas {
		if m == nil {
			continue
		}
		for i, c := range m.Columns {
			if c.Kind == "direct" {
				continue
			}
			dup := slices.ContainsFunc(m.Columns[:i], func(e results.ColumnMeta) bool {
				return e.Kind == c.Kind && e.Binary == c.Binary && e.Version == c.Version
			})
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
				same[c.Name] = dup
			} else if !dup {
				same[c.Name] = false
			}
		}
	}
	return slices.DeleteFunc(names, func(n string) bool { return same[n] })
}

// setupNotes are what the machines' metadata notes: the CPU layout's
// warning and the session's own notes, each after its machine's label.
func setupNotes(machines []string, metas []*results.Meta) []string {
	var notes []string
	for i, m := range metas {
		if m == nil {
			continue
		}
		if m.LayoutNote != "" {
			notes = append(notes, machines[i]+": "+m.LayoutNote)
		}
		for _, n := range m.Notes {
			notes = append(notes, machines[i]+": "+n)
		}
	}
	return notes
}

// cpusAndMemory is "8 CPUs (Intel Xeon Gold 6148), 8 GB": memory is sold
// in binary gigabytes, and the kernel's total, a little less than that,
// rounds to them.
func cpusAndMemory(mi results.MachineInfo) string {
	var parts []string
	if mi.CPUs > 0 {
		s := fmt.Sprintf("%d CPUs", mi.CPUs)
		if mi.CPUModel != "" {
			s += " (" + mi.CPUModel + ")"
		}
		parts = append(parts, s)
	}
	if mi.MemoryBytes > 0 {
		gib := float64(mi.MemoryBytes) / (1 << 30)
		if gib >= 2 {
			parts = append(parts, fmt.Sprintf("%.0f GB", math.Round(gib)))
		} else {
			parts = append(parts, fmt.Sprintf("%.1f GB", gib))
		}
	}
	return strings.Join(parts, ", ")
}

// commandLine is argv as a shell would take it, each argument with
// spaces or quotes in single quotes: bench run --machine 'Xeon, 2 CPUs'.
func commandLine(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// joinSet joins the non-empty of parts with commas.
func joinSet(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ", ")
}

// stamp is a time as the Setup table prints it, in UTC to the minute.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// hostsField says the hosts of their own a session's roles ran on, a
// host each: "proxy on bench@p (data 192.0.2.20 on enp1s0: mlx5_core,
// 100000 Mb/s, MTU 1500, 8 rx queues RPS none, 8 tx queues XPS 0-7, 8
// IRQs; p1, Dell Inc. PowerEdge R650, 8 CPUs (Intel(R) Xeon(R) Gold
// 6338 CPU @ 2.00GHz), 32 GB, Linux 6.12.1 x86_64, CPUs 0-7; proxy=1;
// clock +0.31 ms ± 0.05)".
func hostsField(m *results.Meta) string {
	var parts []string
	for _, h := range m.Hosts {
		machine := []string{h.Hostname}
		if h.Machine != nil {
			machine = append(machine, h.Machine.Host, cpusAndMemory(*h.Machine))
		}
		machine = append(machine, h.Kernel, "CPUs "+h.Online)
		parts = append(parts, fmt.Sprintf("%s on %s (data %s on %s; %s; %s; clock %+.2f ms ± %.2f)",
			strings.Join(h.Roles, " and "), h.Destination, h.Data, nicText(h.NIC), joinSet(machine...), h.Layout, h.ClockOffsetMS, h.ClockWithinMS))
	}
	return strings.Join(parts, "; ")
}

// nicText says a host's interface in short: its name, driver, speed and
// MTU, its queues by steering ("8 rx queues RPS none"), its IRQs' count.
func nicText(n results.NICInfo) string {
	var items []string
	if n.Driver != "" {
		items = append(items, n.Driver)
	}
	if n.SpeedMbps > 0 {
		items = append(items, fmt.Sprintf("%d Mb/s", n.SpeedMbps))
	}
	items = append(items, fmt.Sprintf("MTU %d", n.MTU))
	var steers []string
	count := map[string]int{}
	for _, q := range n.Queues {
		f := strings.Fields(q) // "rx-0 rps 0-3"
		if len(f) != 3 {
			continue
		}
		dir, _, _ := strings.Cut(f[0], "-")
		key := dir + "\x00" + strings.ToUpper(f[1]) + " " + f[2]
		if count[key] == 0 {
			steers = append(steers, key)
		}
		count[key]++
	}
	for _, k := range steers {
		dir, steer, _ := strings.Cut(k, "\x00")
		items = append(items, text.Plural(count[k], dir+" queue")+" "+steer)
	}
	if len(n.IRQs) > 0 {
		items = append(items, text.Plural(len(n.IRQs), "IRQ"))
	}
	return n.Name + ": " + strings.Join(items, ", ")
}
