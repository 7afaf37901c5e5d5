package main

import (
	"errors"
	"io"
)

func cmdRun(stdout, stderr io.Writer, args []string) error {
	return errors.New("run: not implemented yet")
}
