// Package mix is the engine of bench mix: it opens many connections
// through a proxy (absolute URIs to an HTTP proxy, CONNECT or SOCKSv5
// tunnels it speaks itself, or a relay), keeps them all open, and runs
// HTTP/1.1 exchanges on them, a number at a time or at a fixed rate,
// checking every answer's status, length and content against the
// origin's known files (scenarios.MixAnswers).
//
// An idle connection costs its socket and a small slot: no goroutine
// and no buffer. An exchange borrows a buffer from a pool and compares
// the answer with the known content as it reads it, without keeping it.
package mix

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"bench/scenarios"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Mode is how the connections reach the origin.
type Mode string

// The modes of bench mix.
const (
	HTTP    Mode = "http"    // absolute URIs to an HTTP proxy
	Connect Mode = "connect" // a CONNECT tunnel per connection
	Socks   Mode = "socks"   // a SOCKSv5 tunnel per connection, no authentication
	Relay   Mode = "relay"   // a TCP relay to the origin (or the origin itself)
)

// Config is one mix.
type Config struct {
	Mode   Mode
	Proxy  string // host:port: the proxy's listener, or the relay's
	Origin string // host:port of the origin, as the proxy should reach it
	// TLS, where set, is spoken to a relay (Mode Relay) that ends it, or
	// to the origin's own TLS end: each connection's handshake is part
	// of its opening, and a half-close is close_notify and a FIN.
	TLS   *tls.Config
	Conns int // connections to keep open
	// Active exchanges at a time (closed loop), or Rate exchanges a
	// second over all connections (open loop): one of the two.
	Active int
	Rate   float64
	// Warmup is load before the measured window of Duration.
	Warmup, Duration time.Duration
	// Timeout limits opening a connection and each exchange.
	Timeout time.Duration
	// OpenRate paces the opening, connections a second (0: no pacing);
	// at most OpenParallel are being opened at once.
	OpenRate     float64
	OpenParallel int
	// FirstConn is the number of the first connection: the answers a
	// connection asks for follow from its number, so a run split over
	// processes asks for the same answers as one process would.
	FirstConn int
	// Offset shifts a fixed rate's schedule: exchange k is due at the
	// start + Offset + k/Rate. The processes of a split mix share their
	// start and are offset by i/rate, so that together they keep the
	// spacing of one process.
	Offset time.Duration
	// Start, where set, says when the warm-up begins once the
	// connections are open (FileStart); nil: at once.
	Start StartFrom
}

// Check reports what is wrong with c.
func (c Config) Check() error {
	switch c.Mode {
	case HTTP, Connect, Socks, Relay:
	default:
		return fmt.Errorf("mode %q: want http, connect, socks or relay", c.Mode)
	}
	if c.TLS != nil && c.Mode != Relay {
		return fmt.Errorf("mode %q in TLS: TLS is spoken to a relay alone", c.Mode)
	}
	for _, a := range []struct{ name, addr string }{{"proxy", c.Proxy}, {"origin", c.Origin}} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return fmt.Errorf("%s address %q: want host:port", a.name, a.addr)
		}
	}
	switch {
	case c.Conns < 1:
		return fmt.Errorf("%d connections: want at least 1", c.Conns)
	case (c.Active > 0) == (c.Rate > 0):
		return fmt.Errorf("want either exchanges at a time or a rate, have %d and %g", c.Active, c.Rate)
	case c.Active < 0 || c.Rate < 0:
		return fmt.Errorf("negative exchanges at a time (%d) or rate (%g)", c.Active, c.Rate)
	case c.Duration <= 0 || c.Warmup < 0 || c.Timeout <= 0:
		return fmt.Errorf("duration %v, warmup %v, timeout %v: want positive durations", c.Duration, c.Warmup, c.Timeout)
	case c.OpenParallel < 1 || c.OpenRate < 0:
		return fmt.Errorf("opening %d at once at %g a second: want at least one at once", c.OpenParallel, c.OpenRate)
	case c.Offset < 0:
		return fmt.Errorf("a schedule offset by %v: want none or more", c.Offset)
	}
	return nil
}

// bufSize is an exchange's read buffer, borrowed from a pool; an
// answer's head must fit in it. A loopback segment's 64 KB: 16 KB read the
// mix's 256 KB answer in 17 reads, 64 KB read it in as few as 5.
const bufSize = 64 << 10

// answerStream picks, with a connection's number, the answers it asks
// for.
const answerStream = 0x6d6978

// histMax is the longest latency the histogram holds, in microseconds.
const histMax = int64(time.Hour / time.Microsecond)

// kind is what went wrong with an exchange, or ok.
type kind int

const (
	ok kind = iota
	refused
	reset
	short
	wrong
	timedOut
	nKinds
)

// answer is one of the origin's mix files, with the requests for it.
type answer struct {
	body          []byte // the known content
	req, reqClose []byte // keep-alive, and Connection: close
}

// slot is a connection kept open, reopened when it is closed.
type slot struct {
	conn net.Conn  // nil: to be opened
	rng  rand.PCG  // picks its answers
	lat  latencies // of its exchanges, not yet in the histograms
}

// Mix is a set of open connections and the exchanges run on them.
type Mix struct {
	cfg     Config
	answers []answer
	pick    [scenarios.MixWeights]uint8 // answer by draw
	connect []byte                      // the CONNECT request
	socks   []byte                      // the SOCKS request after the greeting
	dialer  net.Dialer
	bufs    sync.Pool
	slots   []slot
	idle    chan *slot
	work    work // fullWork but in the benchmark against wrk

	openSeconds float64
	opened      int

	// The measured window, [window, end], set by Run before the first
	// exchange.
	window, end time.Time
	reopening   sync.WaitGroup // connections being opened again
	// refilled is closed once the connections closed at the last step's
	// end are open again (nil: none being opened); stopRefill gives up.
	refilled   chan struct{}
	stopRefill context.CancelFunc

	exchanges, bytes, halfClosed, late, dropped atomic.Int64
	halfCloseFailed, reconnects, unfinished     atomic.Int64
	errs                                        [nKinds]atomic.Int64
	// seconds counts the window's exchanges and bytes by its seconds.
	seconds []perSecond
	mu      sync.Mutex // guards hist and okHist; see latencies
	// hist holds the latency of every exchange that was due in the
	// window, okHist that of the exchanges answered whole and on time.
	hist, okHist *hdrhistogram.Histogram
}

// perSecond is one second of the window: its exchanges answered on time
// and the bytes of the answers received whole.
type perSecond struct{ exchanges, bytes atomic.Int64 }

// windowSeconds is how many seconds a window of d counts: a last one,
// shorter, where d is not whole seconds.
func windowSeconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// New prepares the mix of c; Open opens its connections.
func New(c Config) (*Mix, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	m := &Mix{
		cfg:  c,
		work: fullWork,
		// No keep-alive probes: 20000 idle connections would send
		// thousands a second.
		dialer:  net.Dialer{Timeout: c.Timeout, KeepAlive: -1},
		slots:   make([]slot, c.Conns),
		idle:    make(chan *slot, c.Conns),
		hist:    hdrhistogram.New(1, histMax, 3),
		okHist:  hdrhistogram.New(1, histMax, 3),
		seconds: make([]perSecond, windowSeconds(c.Duration)),
	}
	m.bufs.New = func() any { b := make([]byte, bufSize); return &b }
	host, _, _ := net.SplitHostPort(c.Origin)
	i := 0
	for n, a := range scenarios.MixAnswers() {
		target := a.Path
		if c.Mode == HTTP {
			target = "http://" + c.Origin + a.Path
		}
		req := "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n"
		m.answers = append(m.answers, answer{
			body:     scenarios.OriginAnswer(a.Size),
			req:      []byte(req + "\r\n"),
			reqClose: []byte(req + "Connection: close\r\n\r\n"),
		})
		for range a.Weight {
			m.pick[i] = uint8(n)
			i++
		}
	}
	if i != len(m.pick) {
		return nil, fmt.Errorf("the mix's weights add up to %d, not %d", i, len(m.pick))
	}
	m.connect = []byte("CONNECT " + c.Origin + " HTTP/1.1\r\nHost: " + c.Origin + "\r\n\r\n")
	var err error
	if m.socks, err = socksRequest(c.Origin); err != nil {
		return nil, err
	}
	for i := range m.slots {
		m.slots[i].rng = *rand.NewPCG(answerStream, uint64(c.FirstConn+i))
	}
	return m, nil
}

// Open opens the connections, c.OpenParallel at a time at c.OpenRate a
// second. Connections that fail to open are opened again by their first
// exchange; they are not among the window's errors, but the result's
// Conns tells how many opened.
func (m *Mix) Open(ctx context.Context) {
	start := time.Now()
	all := make([]*slot, len(m.slots))
	for i := range m.slots {
		all[i] = &m.slots[i]
	}
	m.dialAll(ctx, all)
	m.openSeconds = time.Since(start).Seconds()
	m.opened = m.open()
	for _, s := range all {
		m.idle <- s
	}
}

// dialAll opens the connections of slots, c.OpenParallel at a time at
// c.OpenRate a second; a slot whose connection fails to open stays
// closed.
func (m *Mix) dialAll(ctx context.Context, slots []*slot) {
	start := time.Now()
	sem := make(chan struct{}, m.cfg.OpenParallel)
	var wg sync.WaitGroup
	for i, s := range slots {
		if m.cfg.OpenRate > 0 {
			sleepUntil(ctx, start.Add(time.Duration(float64(i)/m.cfg.OpenRate*float64(time.Second))))
		}
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			bp := m.bufs.Get().(*[]byte)
			c, k := m.dial(ctx, *bp)
			m.bufs.Put(bp)
			<-sem
			if k == ok {
				s.conn = c
			}
		}()
	}
	wg.Wait()
}

// open counts the slots whose connection is open.
func (m *Mix) open() int {
	n := 0
	for i := range m.slots {
		if m.slots[i].conn != nil {
			n++
		}
	}
	return n
}

// Run runs the exchanges from now: the warm-up, then the window.
func (m *Mix) Run(ctx context.Context) scenarios.MixResult { return m.RunFrom(ctx, time.Now()) }

// RunFrom runs the exchanges for the warm-up from start (waiting for it
// first), then for the window of c.Duration, waits for the exchanges
// still running, closes the connections and returns the window's
// figures (see measure).
func (m *Mix) RunFrom(ctx context.Context, start time.Time) scenarios.MixResult {
	r := m.measure(ctx, start)
	m.Close()
	return r
}

// Close closes the connections. It may be called more than once; the
// exchanges must have ended.
func (m *Mix) Close() error {
	m.abandonRefill()
	for i := range m.slots {
		if c := m.slots[i].conn; c != nil {
			c.Close()
			m.slots[i].conn = nil
		}
	}
	return nil
}

// measure runs the exchanges for the warm-up from start (waiting for it
// first), then for the window of c.Duration, waits for the exchanges
// still running and the connections being opened again, and returns the
// window's figures. The connections stay open.
//
// The window is fixed, [start + warm-up, start + warm-up + duration].
// In a closed loop its exchanges are those that ended inside it; those
// still running at its end are waited for and enter the latency alone,
// at their whole time (they were due in the window; leaving them out
// would hide the slowest). At a fixed rate its exchanges are those
// scheduled inside it, each begun one waited for, so its latency is that
// of every one of them, on time or not, begun or dropped. One never
// answered, timed out or dropped, enters it at least at the timeout
// (unanswered).
func (m *Mix) measure(ctx context.Context, start time.Time) scenarios.MixResult {
	m.window = start.Add(m.cfg.Warmup)
	m.end = m.window.Add(m.cfg.Duration)
	var wg sync.WaitGroup
	if m.cfg.Active > 0 && sleepUntil(ctx, start) {
		for range min(m.cfg.Active, len(m.slots)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					var s *slot
					select {
					case s = <-m.idle:
					case <-ctx.Done():
						return
					}
					if !time.Now().Before(m.end) || ctx.Err() != nil {
						m.idle <- s
						return
					}
					m.exchange(s, time.Time{})
				}
			}()
		}
	} else if m.cfg.Rate > 0 {
		m.schedule(ctx, &wg, start)
	}
	wg.Wait()
	m.reopening.Wait()
	return m.result()
}

// schedule starts exchange k at start + offset + k/rate on a free
// connection, each in a goroutine of its own, until the window's end;
// the window's exchanges that find no free connection before its end are
// dropped, and enter the latency as exchanges still waiting at the
// window's end (unanswered).
func (m *Mix) schedule(ctx context.Context, wg *sync.WaitGroup, start time.Time) {
	due := func(k int) time.Time {
		return start.Add(m.cfg.Offset + time.Duration(float64(k)/m.cfg.Rate*float64(time.Second)))
	}
	stop := time.NewTimer(time.Until(m.end))
	defer stop.Stop()
	sleep := newSleeper()
	defer sleep.close()
	k := 0
loop:
	for ; due(k).Before(m.end); k++ {
		t := due(k)
		if !sleep.until(ctx, t) {
			break
		}
		var s *slot
		select {
		case s = <-m.idle:
		default:
			select {
			case s = <-m.idle:
			case <-stop.C:
				break loop
			case <-ctx.Done():
				break loop
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.exchange(s, t)
		}()
	}
	for ; due(k).Before(m.end); k++ {
		if t := due(k); !t.Before(m.window) {
			m.dropped.Add(1)
			m.record(m.unanswered(t, m.end), noAnswer)
		}
	}
}

// unanswered is the latency of an exchange due at due that had no
// answer at at, when it was given up: the time it waited, and at least
// the timeout, since nothing answered it within the timeout. A timed-out
// exchange enters the latency so, and a dropped one, given up still
// waiting for a connection at the window's end: counted from when it was
// due to the end alone, a proxy that answers nothing would rank above a
// slow one.
func (m *Mix) unanswered(due, at time.Time) time.Duration {
	return max(at.Sub(due), m.cfg.Timeout)
}

// sleepUntil sleeps until t, or returns false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}
