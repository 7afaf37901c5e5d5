package results

// The bounds of what bench reads of a session's files: what a run can be,
// and how much of a file it takes. A file or a figure past them is
// refused with an inputerr.Error naming it, as a run could not have made it.
const (
	// MinSeconds and MaxSeconds bound a run's measured window: a
	// microsecond at least (a figure a second of a shorter one is
	// infinite to the tables), a day at most.
	MinSeconds = 1e-6
	MaxSeconds = 24 * 60 * 60

	// MaxCount bounds every count of a run (its exchanges, bytes,
	// errors, a histogram's latencies, a profile's samples) and every
	// other figure: 2^53, up to which a float64 holds every whole
	// number, so that the sums and ratios of the tables stay exact and
	// finite.
	MaxCount = 1 << 53

	// MaxLine bounds a line of a session file (a run's row: labels of MaxLabel
	// bytes and a note of a few hundred).
	MaxLine = 64 << 10
	// MaxCSV bounds a session file: some hundred thousand runs.
	MaxCSV = 64 << 20
	// MaxMeta bounds a session's metadata file, and a history's entry.
	MaxMeta = 1 << 20
	// MaxRunData bounds a run's data file: its series of a second a
	// point through a window of MaxSeconds and its histogram.
	MaxRunData = 16 << 20
	// MaxRunsData bounds a session's runs' data files together.
	MaxRunsData = 256 << 20
	// MaxHistogramDigits bounds the significant digits of a run's
	// latency histogram, bench mix's 3, and with them the size of its
	// counts (some 50 000 of them for any range of values).
	MaxHistogramDigits = 3
	// MaxInput bounds any other file bench is given or finds beside
	// one (ReadInput).
	MaxInput = 256 << 20
)
