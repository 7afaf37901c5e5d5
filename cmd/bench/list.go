package main

import (
	"errors"
	"io"
)

func cmdList(stdout, stderr io.Writer, args []string) error {
	return errors.New("list: not implemented yet")
}
