package results

import (
	"bench/inputerr"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// MetaSuffix ends the name of a session's metadata file, which sits beside
// its CSV: data/arm-m4-2026-10-13-evening.csv.meta.json.
const MetaSuffix = ".meta.json"

// MetaPath is the metadata file of the session file csvPath.
func MetaPath(csvPath string) string { return csvPath + MetaSuffix }

// Meta is the metadata file beside a session's CSV: the machine, the
// session's settings, the CPU layout, every tool's and proxy's version,
// the command line and the times. The harness writes it when the session
// starts and when it ends; the report prints it as the Setup table.
type Meta struct {
	Session string      `json:"session"`
	Machine MachineInfo `json:"machine"`
	Settings
	Layout     string `json:"cpu_layout"`
	LayoutNote string `json:"cpu_layout_warning,omitempty"`
	// Notes say what the session changed of what it was asked: the
	// connections it scaled down to fit the descriptor limit.
	Notes []string `json:"notes,omitempty"`
	// Bench is the build of bench that ran the session; nil in files
	// written before it was recorded.
	Bench *BuildInfo `json:"bench,omitempty"`
	// MixAccounting is which exchanges the mix rows count (MixDue);
	// empty in files from before sessions wrote it (MixAccountingOf
	// reads them).
	MixAccounting string            `json:"mix_accounting,omitempty"`
	Tools         map[string]string `json:"tools"`
	Columns       []ColumnMeta      `json:"columns"`
	CommandLine   []string          `json:"command_line"`
	Started       time.Time         `json:"started"`
	Resumed       []time.Time       `json:"resumed,omitempty"`
	Ended         *time.Time        `json:"ended,omitempty"`
	// Rows and CSVSHA256 are the count of runs of the session's CSV and
	// its SHA-256 (hex) at its end (Finish), which bench history add
	// checks the CSV against; zero in files from before they were
	// recorded.
	Rows      int    `json:"rows,omitempty"`
	CSVSHA256 string `json:"csv_sha256,omitempty"`
	// Hosts are the hosts of their own the roles ran on (bench run
	// --hosts), as the session found them at its start; none where the
	// roles ran on Machine.
	Hosts []HostInfo `json:"hosts,omitempty"`
}

// HostInfo is a host of its own that held roles of a session: how it was
// reached, its address on the data path, what it is, the roles' CPUs on
// it, and its clock's offset from the session's machine (milliseconds,
// known within ClockWithinMS).
type HostInfo struct {
	Roles       []string `json:"roles"`
	Destination string   `json:"destination"`
	Data        string   `json:"data"`
	Hostname    string   `json:"hostname"`
	Kernel      string   `json:"kernel"`
	// Machine is what the host is: its CPU model, firmware, CPUs and
	// memory (no label: the session's is the tables'); nil in the
	// metadata of a session before it was recorded.
	Machine       *MachineInfo `json:"machine,omitempty"`
	Online        string       `json:"online_cpus"`
	Layout        string       `json:"cpu_layout"`
	ClockOffsetMS float64      `json:"clock_offset_ms"`
	ClockWithinMS float64      `json:"clock_within_ms"`
	NIC           NICInfo      `json:"nic"`
}

// NICInfo is a host's interface on the data path: its driver, link
// speed (0 unknown) and MTU, each queue's steering ("rx-0 rps 0-3", "tx-0
// xps none") and its interrupts with their CPUs ("45 eth0-TxRx-0 0-3").
type NICInfo struct {
	Name      string   `json:"name"`
	Driver    string   `json:"driver,omitempty"`
	SpeedMbps int      `json:"speed_mbps,omitempty"`
	MTU       int      `json:"mtu"`
	Queues    []string `json:"queues,omitempty"`
	IRQs      []string `json:"irqs,omitempty"`
}

// The accountings of the mix rows (Meta.MixAccounting): which exchanges
// their counts and latency take in.
const (
	// MixDue: bench mix's fixed window, every exchange due in it
	// answered or not, the unanswered ones in the latency as still
	// waiting. Sessions write it since it was so.
	MixDue = "due"
	// MixAnswered: bench mix before its fixed window: the exchanges
	// begun in the window, over a window that lasted until the last of
	// them ended, the latency of the answered ones only.
	MixAnswered = "answered"
)

// MixAccountingOf is the accounting of the mix rows of a session with
// metadata m: the one it names; in a file from before the field, MixDue
// where it records bench's build (recorded since after the fixed
// window came) and MixAnswered where not.
func MixAccountingOf(m *Meta) string {
	switch {
	case m.MixAccounting != "":
		return m.MixAccounting
	case m.Bench != nil:
		return MixDue
	}
	return MixAnswered
}

// MachineInfo describes the machine a session ran on.
type MachineInfo struct {
	Label    string `json:"label"`
	CPUModel string `json:"cpu_model"`
	// Host is the system's maker and product as its firmware names them
	// (a virtual machine's: "OpenStack Foundation OpenStack Nova"); empty
	// where the firmware says nothing.
	Host         string `json:"host,omitempty"`
	CPUs         int    `json:"cpus"`
	MemoryBytes  uint64 `json:"memory_bytes"`
	Kernel       string `json:"kernel"`
	Distribution string `json:"distribution"`
	Arch         string `json:"arch"`
}

// BuildInfo is a build of bench, as its binary records it.
type BuildInfo struct {
	Version  string `json:"version"`            // the module's: "v1.2.0", "(devel)" for a build of a checkout
	Revision string `json:"revision,omitempty"` // the commit it was built from, where the build recorded it
	Time     string `json:"time,omitempty"`     // the commit's time
	Modified bool   `json:"modified,omitempty"` // the checkout had changes not committed
	Go       string `json:"go"`                 // the toolchain: "go1.26.0"
}

// ColumnMeta records a column as it was run.
type ColumnMeta struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Group   string   `json:"group"`
	Binary  string   `json:"binary,omitempty"`
	Flags   []string `json:"flags,omitempty"`
	Options []string `json:"options,omitempty"`
	Version string   `json:"version"`
}

// Settings are a session's choices as `bench run`'s flags give them. The
// metadata records them (Meta embeds them), so that a resumed session
// runs with its own.
type Settings struct {
	Scenario    string  `json:"scenario"`                  // the scenarios: all, names, globs
	Proxy       string  `json:"proxy,omitempty"`           // the columns by name; empty for every one found
	ColumnsFile string  `json:"columns_file,omitempty"`    // the user's columns
	Reps        int     `json:"reps"`                      // repetitions of each run; with RepsAuto the least
	Window      Span    `json:"window"`                    // the measured window of each run
	Warmup      Span    `json:"warmup"`                    // load before the window, not measured
	MixConns    int     `json:"mix_conns,omitempty"`       // connections of the mix scenarios; 0 for the catalog's
	CPUs        string  `json:"cpus,omitempty"`            // the CPU layout asked for; empty for the default
	ProxyCPU    float64 `json:"proxy_cpu_quota,omitempty"` // CPUs of quota on the proxy's cgroup; 0 for none
	// Profile is whether each run's proxy CPUs were profiled with perf
	// over the window (--profile=on; RunData.Profile says how, or why
	// a run has none); absent, as in sessions before it, for off.
	Profile bool `json:"profile,omitempty"`
	// CallGraph is how perf unwinds the profiles' stacks, CallGraphFP or
	// CallGraphDWARF (--call-graph); empty, as in sessions before it, for
	// frame pointers.
	CallGraph string `json:"call_graph,omitempty"`
	// RepsAuto repeats each cell beyond Reps until no single run moves
	// its median by more than Precision (a share, 0.05 for 5%), or it
	// has RepsMax runs.
	RepsAuto  bool    `json:"reps_auto,omitempty"`
	RepsMax   int     `json:"reps_max,omitempty"`
	Precision float64 `json:"precision,omitempty"`
	// Methods are the modes whose runs are made otherwise than Reps,
	// Window and Warmup say: a family of scenarios with a method of its
	// own (stunnel's page's), where the flags left it the default.
	Methods map[Mode]Method `json:"methods,omitempty"`
	// Sweep is the search for each column's sustainable rate, when the
	// session ran one (--sweep); nil otherwise.
	Sweep *Sweep `json:"sweep,omitempty"`

	// Machine and Session name the session; the metadata keeps them in
	// its own fields.
	Machine string `json:"-"` // the tables' label; empty for the CPU model
	Session string `json:"-"` // the id; empty for the start time
}

// Sweep is how a session searched for the sustainable rates: the rate it
// started at, how close the last pass and the first failure came before
// it stopped, and the bounds a step must meet (SLO).
type Sweep struct {
	From      float64 `json:"from"`      // the first step's rate, exchanges a second
	Precision float64 `json:"precision"` // a share: 0.02 stops when the failure is within 2% of the pass
	SLO       SLO     `json:"slo"`
}

// SLO is what a step of a sweep must meet to pass: the p99 of every
// exchange due in its window at most P99, and its failures (errors,
// timeouts, dropped exchanges) at most Errors of the exchanges due.
type SLO struct {
	P99    Span    `json:"p99"`
	Errors float64 `json:"errors"` // a share: 0.001 for 0.1%
}

// Method is how the runs of a cell are made: how many, each a warm-up
// and a measured window.
type Method struct {
	Reps   int  `json:"reps"`
	Window Span `json:"window"`
	Warmup Span `json:"warmup"`
}

// MethodOf returns how the runs of mode m are made.
func (st Settings) MethodOf(m Mode) Method {
	if own, ok := st.Methods[m]; ok {
		return own
	}
	return Method{Reps: st.Reps, Window: st.Window, Warmup: st.Warmup}
}

// Span is a duration that JSON holds as Go writes it: "10s".
type Span time.Duration

func (s Span) MarshalText() ([]byte, error) { return []byte(time.Duration(s).String()), nil }

func (s *Span) UnmarshalText(b []byte) error {
	d, err := time.ParseDuration(string(b))
	*s = Span(d)
	return err
}

// Write writes the metadata to path whole (WriteFile): to a file beside
// it first, then renamed over it.
func (m *Meta) Write(path string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(path, append(b, '\n'))
}

// Finish records the end of the session, with the count of runs and the
// checksum of its CSV (the file the metadata at path is beside).
func (m *Meta) Finish(path string) error {
	rows, sum, err := CSVSum(strings.TrimSuffix(path, MetaSuffix))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	now := time.Now().UTC()
	m.Ended, m.Rows, m.CSVSHA256 = &now, rows, sum
	return m.Write(path)
}

// CSVSum is the count of runs of the session file csvPath (its records
// after the header) and its SHA-256, in hex.
func CSVSum(csvPath string) (rows int, sum string, err error) {
	b, err := os.ReadFile(csvPath)
	if err != nil {
		return 0, "", fmt.Errorf("checksum %s: %w", csvPath, err)
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	for {
		_, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, "", &inputerr.Error{File: csvPath, Err: err}
		}
		rows++
	}
	h := sha256.Sum256(b)
	return max(rows-1, 0), hex.EncodeToString(h[:]), nil
}

// ReadMeta reads a session's metadata file; an error is an inputerr.Error
// naming it. Its labels and notes must keep their rules (CheckLabel,
// CheckNote), and its figures must be what a session can have: none
// negative, none past MaxCount, its lengths of time none past
// MaxSeconds.
func ReadMeta(path string) (*Meta, error) {
	b, err := readInput(path, MaxMeta)
	if err != nil {
		return nil, err
	}
	m, err := parseMeta(b)
	if err != nil {
		return nil, &inputerr.Error{File: path, Err: err}
	}
	return m, nil
}

// parseMeta reads a metadata file's text.
func parseMeta(b []byte) (*Meta, error) {
	m := &Meta{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, err
	}
	if err := errors.Join(m.check(), m.checkTexts()); err != nil {
		return nil, err
	}
	return m, nil
}

// check says which of the metadata's figures no session can have.
func (m *Meta) check() error {
	var errs []error
	count := func(what string, v int64) {
		if v < 0 || v > MaxCount {
			errs = append(errs, fmt.Errorf("%s %d: want 0 to 2^53", what, v))
		}
	}
	figure := func(what string, v float64) {
		if !(v >= 0 && v <= MaxCount) { // NaN too
			errs = append(errs, fmt.Errorf("%s %v: want 0 to 2^53", what, v))
		}
	}
	span := func(what string, v Span) {
		if v < 0 || time.Duration(v) > MaxSeconds*time.Second {
			errs = append(errs, fmt.Errorf("%s %v: want 0 to %v", what, time.Duration(v), MaxSeconds*time.Second))
		}
	}
	count("machine's cpus", int64(m.Machine.CPUs))
	count("machine's memory_bytes", int64(min(m.Machine.MemoryBytes, MaxCount+1)))
	for i, h := range m.Hosts {
		if h.Machine != nil {
			count(fmt.Sprintf("host %d's cpus", i+1), int64(h.Machine.CPUs))
			count(fmt.Sprintf("host %d's memory_bytes", i+1), int64(min(h.Machine.MemoryBytes, MaxCount+1)))
		}
	}
	count("reps", int64(m.Reps))
	count("reps_max", int64(m.RepsMax))
	count("mix_conns", int64(m.MixConns))
	count("rows", int64(m.Rows))
	figure("proxy_cpu_quota", m.ProxyCPU)
	figure("precision", m.Precision)
	span("window", m.Window)
	span("warmup", m.Warmup)
	for mode, own := range m.Methods {
		count("reps of "+string(mode), int64(own.Reps))
		span("window of "+string(mode), own.Window)
		span("warmup of "+string(mode), own.Warmup)
	}
	if sw := m.Sweep; sw != nil {
		figure("sweep's from", sw.From)
		figure("sweep's precision", sw.Precision)
		figure("sweep's slo errors", sw.SLO.Errors)
		span("sweep's slo p99", sw.SLO.P99)
	}
	return errors.Join(errs...)
}

// ReadJSON reads the JSON file path into v, of at most MaxMeta bytes;
// what it cannot read or decode is an inputerr.Error naming the file.
func ReadJSON(path string, v any) error {
	b, err := readInput(path, MaxMeta)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &inputerr.Error{File: path, Err: err}
	}
	return nil
}

// SessionFile is a session file as the report is given it: its path and
// the metadata beside it, nil when there is none.
type SessionFile struct {
	Path string
	Meta *Meta
}

// ReadMetas reads the metadata beside each of the session files at paths;
// a file without one has a nil Meta. A metadata file that is there and
// cannot be read is an error.
func ReadMetas(paths []string) ([]SessionFile, error) {
	out := make([]SessionFile, len(paths))
	for i, p := range paths {
		out[i].Path = p
		m, err := ReadMeta(MetaPath(p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			out[i].Meta = m
		}
	}
	return out, nil
}

// String says which bench a build is: "(devel) 1a2b3c4d5e6f, modified,
// go1.26.0", "(devel), commit unknown, go1.26.0" for a build that
// recorded none.
func (b BuildInfo) String() string {
	s := b.Version
	if s == "" {
		s = "(unknown version)"
	}
	if b.Revision != "" {
		s += " " + b.Revision[:min(12, len(b.Revision))]
	} else {
		s += ", commit unknown"
	}
	if b.Modified {
		s += ", modified"
	}
	return s + ", " + b.Go
}
