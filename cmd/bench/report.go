package main

import (
	"errors"
	"io"
)

func cmdReport(stdout, stderr io.Writer, args []string) error {
	return errors.New("report: not implemented yet")
}
