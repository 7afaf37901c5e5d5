// Package chromium opens a page in headless Chromium for the tests and
// reports what it did: the console's errors, every request the page
// made, what an expression evaluates to in it, and a screenshot. It
// speaks the DevTools protocol over --remote-debugging-pipe (file
// descriptors 3 and 4, messages ended by a NUL byte), so that no port is
// opened, and starts Chromium with a fresh profile and its background
// networking off, so that nothing but the page is fetched.
package chromium

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"bench/internal/child"
)

// Binary is the program the tests start: Debian's chromium package.
const Binary = "chromium"

// Page is what loading a page did.
type Page struct {
	// Errors are the console's errors and the uncaught exceptions.
	Errors []string
	// Requests are the URLs of every request the page made, its own
	// included.
	Requests []string
	// Value is what the expression given to Open evaluated to, as JSON.
	Value json.RawMessage
	// PNG is a screenshot of the whole page.
	PNG []byte
}

// Open loads the file at path in a new headless Chromium with a profile
// in profileDir, waits for its load event, evaluates expr (an
// expression whose value is JSON-serializable) and takes a screenshot of
// the whole page width pixels wide, then stops Chromium. Its temporary
// files go in profileDir too: a Chromium that is killed, as Open stops
// it, leaves the directory of its singleton socket behind in the
// temporary directory it was given.
func Open(ctx context.Context, path, profileDir, expr string, width int) (*Page, error) {
	return run(ctx, profileDir, width, func(ctx context.Context, c *conn) (*Page, error) {
		return c.load(ctx, "file://"+path, expr, width)
	})
}

// Follow loads the file at path as Open does, clicks the first element
// that selector matches, waits for what the click loads (a page's load
// event, or two seconds where it loads none: a script's link runs in the
// page itself) and evaluates expr in the page then shown: the page the
// link led to, or the page itself. Page's Requests and Errors are those
// of both.
func Follow(ctx context.Context, path, profileDir, selector, expr string, width int) (*Page, error) {
	return run(ctx, profileDir, width, func(ctx context.Context, c *conn) (*Page, error) {
		return c.follow(ctx, "file://"+path, selector, expr, width)
	})
}

// run starts Chromium with a profile in profileDir, its window width
// pixels wide, runs f on its
// connection and stops it.
func run(ctx context.Context, profileDir string, width int, f func(context.Context, *conn) (*Page, error)) (*Page, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tmp := filepath.Join(profileDir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	toChrome, ours, err := os.Pipe() // chrome reads fd 3
	if err != nil {
		return nil, err
	}
	theirs, fromChrome, err := os.Pipe() // chrome writes fd 4
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, Binary,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--no-first-run", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
		"--user-data-dir="+profileDir, "--remote-debugging-pipe",
		fmt.Sprintf("--window-size=%d,900", width), "about:blank")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	if err := child.Start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", Binary, err)
	}
	toChrome.Close()
	fromChrome.Close()
	c := &conn{w: ours, pending: map[int]chan reply{}, events: make(chan event, 4096)}
	go c.read(theirs)
	defer func() {
		ours.Close()
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		cmd.Wait()
		theirs.Close()
	}()
	page, err := f(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%w (chromium said: %s)", err, lastLines(stderr.String(), 5))
	}
	return page, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// reply is the answer to a command.
type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// event is a message Chromium sent of itself.
type event struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// conn is the DevTools protocol over the pipe.
type conn struct {
	mu      sync.Mutex
	w       io.Writer
	next    int
	pending map[int]chan reply
	events  chan event
	err     error
}

func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			c.mu.Lock()
			c.err = errors.New("chromium closed its pipe")
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = map[int]chan reply{}
			c.mu.Unlock()
			close(c.events)
			return
		}
		var m struct {
			ID int `json:"id"`
			reply
			event
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		if m.ID == 0 {
			c.events <- m.event
			continue
		}
		c.mu.Lock()
		ch := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- m.reply
		}
	}
}

// call sends a command (in a session when sessionID is set) and waits
// for its answer.
func (c *conn) call(ctx context.Context, sessionID, method string, params any, result any) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.pending[id] = ch
	msg := map[string]any{"id": id, "method": method, "params": params}
	if sessionID != "" {
		msg["sessionId"] = sessionID
	}
	b, _ := json.Marshal(msg)
	_, err := c.w.Write(append(b, 0))
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		switch {
		case !ok:
			return fmt.Errorf("%s: chromium closed its pipe", method)
		case r.Error != nil:
			return fmt.Errorf("%s: %s", method, r.Error.Message)
		case result != nil:
			return json.Unmarshal(r.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// newPage opens a blank page as wide as width and returns its session.
func (c *conn) newPage(ctx context.Context, width int) (string, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return "", err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return "", err
	}
	s := attached.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		if err := c.call(ctx, s, m, map[string]any{}, nil); err != nil {
			return "", err
		}
	}
	if err := c.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": ScreenHeight, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		return "", err
	}
	return s, nil
}

// screenshot is a PNG of the whole of session s's page, at least width
// wide.
func (c *conn) screenshot(ctx context.Context, s string, width int) ([]byte, error) {
	var metrics struct {
		Content struct {
			Width, Height float64
		} `json:"cssContentSize"`
	}
	if err := c.call(ctx, s, "Page.getLayoutMetrics", map[string]any{}, &metrics); err != nil {
		return nil, err
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := c.call(ctx, s, "Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": max(metrics.Content.Width, float64(width)), "height": metrics.Content.Height, "scale": 1},
	}, &shot); err != nil {
		return nil, err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return png, nil
}

// load opens url in a new page and collects what Page holds.
func (c *conn) load(ctx context.Context, url, expr string, width int) (*Page, error) {
	s, p, err := c.open(ctx, url, width)
	if err != nil {
		return nil, err
	}
	return c.finish(ctx, s, p, expr, width)
}

// follow opens url in a new page, clicks the first element of selector,
// waits for what the click loads, and collects what Page holds.
func (c *conn) follow(ctx context.Context, url, selector, expr string, width int) (*Page, error) {
	s, p, err := c.open(ctx, url, width)
	if err != nil {
		return nil, err
	}
	sel, _ := json.Marshal(selector)
	if _, err := c.evaluate(ctx, s, "document.querySelector("+string(sel)+").click()"); err != nil {
		return nil, err
	}
	wait := time.NewTimer(2 * time.Second)
	defer wait.Stop()
	for loaded := false; !loaded; {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return nil, errors.New("chromium closed its pipe after the click")
			}
			loaded = p.note(ev)
		case <-wait.C:
			loaded = true
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for what the click loads: %w", ctx.Err())
		}
	}
	return c.finish(ctx, s, p, expr, width)
}

// open opens url in a new page and waits for its load event.
func (c *conn) open(ctx context.Context, url string, width int) (string, *Page, error) {
	s, err := c.newPage(ctx, width)
	if err != nil {
		return "", nil, err
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := c.call(ctx, s, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return "", nil, err
	}
	if nav.ErrorText != "" {
		return "", nil, fmt.Errorf("navigate to %s: %s", url, nav.ErrorText)
	}
	p := &Page{}
	loaded := false
	for !loaded {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return "", nil, errors.New("chromium closed its pipe before the page loaded")
			}
			loaded = p.note(ev)
		case <-ctx.Done():
			return "", nil, fmt.Errorf("waiting for the page's load event: %w", ctx.Err())
		}
	}
	return s, p, nil
}

// evaluate evaluates expr in session s's page, awaiting its promise.
func (c *conn) evaluate(ctx context.Context, s, expr string) (json.RawMessage, error) {
	var eval struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := c.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &eval); err != nil {
		return nil, err
	}
	if eval.ExceptionDetails != nil {
		return nil, fmt.Errorf("evaluate %q: %s", expr, eval.ExceptionDetails.Text)
	}
	return eval.Result.Value, nil
}

// finish evaluates expr in session s's page, takes its screenshot and
// notes the events that came meanwhile in p.
func (c *conn) finish(ctx context.Context, s string, p *Page, expr string, width int) (*Page, error) {
	var err error
	if p.Value, err = c.evaluate(ctx, s, expr); err != nil {
		return nil, err
	}
	if p.PNG, err = c.screenshot(ctx, s, width); err != nil {
		return nil, err
	}
	// What came after the load event too.
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return p, nil
			}
			p.note(ev)
		default:
			return p, nil
		}
	}
}

// note records what an event says of the page; true at its load event.
func (p *Page) note(ev event) bool {
	switch ev.Method {
	case "Page.loadEventFired":
		return true
	case "Network.requestWillBeSent":
		var r struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		if json.Unmarshal(ev.Params, &r) == nil {
			p.Requests = append(p.Requests, r.Request.URL)
		}
	case "Runtime.consoleAPICalled":
		var r struct {
			Type string            `json:"type"`
			Args []json.RawMessage `json:"args"`
		}
		if json.Unmarshal(ev.Params, &r) == nil && (r.Type == "error" || r.Type == "assert") {
			b, _ := json.Marshal(r.Args)
			p.Errors = append(p.Errors, "console."+r.Type+": "+string(b))
		}
	case "Runtime.exceptionThrown":
		p.Errors = append(p.Errors, "exception: "+string(ev.Params))
	case "Log.entryAdded":
		var r struct {
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		if json.Unmarshal(ev.Params, &r) == nil && r.Entry.Level == "error" {
			p.Errors = append(p.Errors, "log: "+r.Entry.Text+" "+r.Entry.URL)
		}
	}
	return false
}
