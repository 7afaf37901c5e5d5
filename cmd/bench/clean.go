package main

import (
	"errors"
	"io"
)

func cmdClean(stdout, stderr io.Writer, args []string) error {
	return errors.New("clean: not implemented yet")
}
