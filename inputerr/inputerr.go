// Package inputerr is the error of input refused: a file bench was given
// that it cannot read or that holds what it cannot take, or a setting of
// the command line that a session or a report cannot take. bench exits 2
// on it, as on a wrong command line. It imports nothing of this project,
// so that every layer may raise it.
package inputerr

import "fmt"

// Error is input refused, at File:Line (Line 0 for the file as a whole),
// or, without a File, a setting or option of the command line.
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	switch {
	case e.File == "":
		return e.Err.Error()
	case e.Line == 0:
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Bad marks err, unless nil, as input refused that no file holds: a
// setting or option of the command line.
func Bad(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err}
}
