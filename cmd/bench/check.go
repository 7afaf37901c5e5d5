package main

import (
	"errors"
	"io"
)

func cmdCheck(stdout, stderr io.Writer, args []string) error {
	return errors.New("check: not implemented yet")
}
