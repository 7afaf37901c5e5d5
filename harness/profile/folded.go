package profile

import (
	"bufio"
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

// ParseFolded reads folded stacks, as Folded writes them: a line a
// stack, "frame;frame;frame count".
func ParseFolded(r io.Reader) ([]Stack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []Stack
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("folded stacks:%d: %q: a line is frame;frame count", n, clip(line))
		}
		c, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || c <= 0 {
			return nil, fmt.Errorf("folded stacks:%d: %q: count %q is not a positive number", n, clip(line), line[i+1:])
		}
		out = append(out, Stack{Frames: strings.Split(line[:i], ";"), Count: c})
	}
	if err := sc.Err(); err != nil {
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
