package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Stack is a line of folded stacks: its frames from the root to the
// leaf, the thread's command first as Folded writes it, and how many
// samples had it.
type Stack struct {
	Frames []string
	Count  int64
}

// MaxFoldedLine bounds a line of folded stacks, a stack: some thousand
// frames of a few hundred bytes each.
const MaxFoldedLine = 1 << 20

// ParseFolded reads folded stacks, as Folded writes them: a line a
// stack, "frame;frame;frame count". A line longer than MaxFoldedLine, and
// counts past MaxSamples, one or all of them together, are
// refused.
func ParseFolded(r io.Reader) ([]Stack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), MaxFoldedLine+2) // +2: its "\r\n"
	var out []Stack
	var samples int64
	n := 1
	for ; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if len(line) > MaxFoldedLine {
			return nil, fmt.Errorf("folded stacks:%d: a line longer than %d bytes: no stack is so long", n, MaxFoldedLine)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("folded stacks:%d: %q: a line is frame;frame count", n, clip(line))
		}
		c, err := strconv.ParseInt(line[i+1:], 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && line[i+1] != '-', err == nil && c > MaxSamples:
			return nil, fmt.Errorf("folded stacks:%d: %q: count %q is past 2^53: no profile has so many samples", n, clip(line), line[i+1:])
		case err != nil || c <= 0:
			return nil, fmt.Errorf("folded stacks:%d: %q: count %q is not a positive number", n, clip(line), line[i+1:])
		}
		if samples += c; samples > MaxSamples {
			return nil, fmt.Errorf("folded stacks:%d: the counts come to more than 2^53: no profile has so many samples", n)
		}
		out = append(out, Stack{Frames: strings.Split(line[:i], ";"), Count: c})
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("folded stacks:%d: a line longer than %d bytes: no stack is so long", n, MaxFoldedLine)
	} else if err != nil {
		return nil, fmt.Errorf("read folded stacks: %w", err)
	}
	return out, nil
}

// TopFolded is Top of folded stacks: the thread's command, their first
// frame, is no function.
func TopFolded(stacks []Stack, n int) (funcs []Func, samples int64) {
	return top(func(yield func(leafFirst []string, v int64)) {
		for _, s := range stacks {
			names := make([]string, 0, len(s.Frames))
			for i := len(s.Frames) - 1; i >= 1; i-- {
				names = append(names, s.Frames[i])
			}
			yield(names, s.Count)
		}
	}, n)
}
